import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadAdmission } from '../../../lambda/adapters/admission/load.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/crds/widgets.test.example.yaml');

describe('loadAdmission', () => {
  it('compiles a CRD document and reviews objects with it', async () => {
    const document = parse(readFileSync(FIXTURE, 'utf8'));
    const admission = await loadAdmission({
      name: 'widgets.test.example',
      document,
      origin: { kind: 'manifest', location: 'crds/widgets.yaml' },
    });
    if ('error' in admission) throw new Error(admission.error);
    const verdict = admission.review({
      apiVersion: 'test.example/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { terms: [{ alias: 'gamma@1' }] },
    });
    expect(verdict.crd).toBe('widgets.test.example from crds/widgets.yaml');
    expect(verdict.violations.map((violation) => violation.message)).toEqual([
      "family is not supported, must be one of the following: 'alpha', 'beta'",
    ]);
  });

  it('says why a document cannot be used', async () => {
    const result = await loadAdmission({
      name: 'widgets.test.example',
      document: { kind: 'ConfigMap' },
      origin: { kind: 'file', location: 'x.yaml' },
    });
    expect(result).toEqual({
      error: expect.stringMatching(/^widgets\.test\.example: not a usable CRD: /),
    });
  });
});
