import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../lambda/adapters/files/parse-manifests.js';
import { EXIT_FINDINGS } from '../lambda/cli/main.js';
import type { Finding } from '../lambda/core/model.js';
import type { ScanReport } from '../lambda/core/report.js';
import { runCliCaptured } from './cli/support/run-cli.js';

const EXAMPLES = join(import.meta.dirname, '..', 'examples', 'nodeclasses');

const GROUP_A = [
  'nodeclass-schema-valid',
  'kubelet-config-valid',
  'instance-profile-is-name',
  'role-is-name',
  'tags-not-restricted',
  'imds-ipv6-supported',
  'imds-v2-required',
  'imds-hop-limit',
  'ami-selector-pinned',
  'ami-owner-explicit',
  'root-volume-encrypted',
];

const GOOD_FILE = 'good-al2023.yaml';
/** NodePools: name → the checks it is meant to fail (none: it is correct). */
const NODEPOOL_FILE = 'nodepools.yaml';
const NODEPOOLS: Readonly<Record<string, readonly string[]>> = {
  general: [],
  gpu: ['nodepool-nodeclass-exists'],
  'invalid-crd': ['nodepool-schema-valid'],
};

/** Broken example file → NodeClass name → the checks it is meant to fail. */
const BROKEN: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  'instance-profile-arn.yaml': { 'instance-profile-arn': ['instance-profile-is-name'] },
  'role-arn.yaml': { 'role-arn': ['role-is-name'] },
  'iso-region-ipv6.yaml': { 'iso-region-ipv6': ['imds-ipv6-supported'] },
  'restricted-tags.yaml': { 'restricted-tags': ['tags-not-restricted'] },
  'imds.yaml': {
    'imds-v1-allowed': ['imds-v2-required'],
    'imds-hop-limit-2': ['imds-hop-limit'],
  },
  'ami-selectors.yaml': {
    'ami-tags-without-owner': ['ami-owner-explicit'],
    'ami-latest-alias': ['ami-selector-pinned'],
    'ami-wildcard-name': ['ami-selector-pinned'],
  },
  'unencrypted-root-volume.json': { 'unencrypted-root-volume': ['root-volume-encrypted'] },
  'crd-rule-violations.yaml': {
    'role-and-instance-profile': ['nodeclass-schema-valid'],
    'windows-pinned-alias': ['nodeclass-schema-valid'],
    'missing-ami-family': ['nodeclass-schema-valid'],
    'subnet-terms-missing': ['nodeclass-schema-valid'],
    'kubelet-rejected': ['kubelet-config-valid'],
  },
  'v1beta1-legacy.yaml': { 'legacy-v1beta1': ['nodeclass-schema-valid'] },
};

function nodeClassNames(file: string): string[] {
  const text = readFileSync(join(EXAMPLES, file), 'utf8');
  return parseManifestText(text, file).nodeClasses.map((entry) => entry.name);
}

async function scanExamples(): Promise<{ exitCode: number; report: ScanReport; stderr: string }> {
  const run = await runCliCaptured(['scan', EXAMPLES, '--format', 'json'], {
    now: new Date('2026-11-01T00:00:00Z'),
  });
  return { exitCode: run.code, report: JSON.parse(run.stdout) as ScanReport, stderr: run.stderr };
}

function findingsFor(report: ScanReport, name: string): Finding[] {
  return report.findings.filter((finding) => finding.resource.name === name);
}

describe('examples/nodeclasses', async () => {
  const { exitCode, report, stderr } = await scanExamples();

  it('scans every file without input errors and exits 1 (findings at/above high)', () => {
    expect(stderr).toBe('');
    expect(report.summary.inputErrors).toEqual([]);
    expect(exitCode).toBe(EXIT_FINDINGS);
  });

  it('has an expectation for every example file and every NodeClass in it', () => {
    const files = readdirSync(EXAMPLES).sort();
    expect(files).toEqual([GOOD_FILE, NODEPOOL_FILE, ...Object.keys(BROKEN)].sort());
    for (const [file, expected] of Object.entries(BROKEN)) {
      expect(nodeClassNames(file).sort(), file).toEqual(Object.keys(expected).sort());
    }
    expect(report.summary.nodeClasses).toBe(
      1 + Object.values(BROKEN).reduce((sum, names) => sum + Object.keys(names).length, 0)
    );
  });

  it('reports no fail or error finding for the correct AL2023 NodeClass', () => {
    // Prepare
    const [name] = nodeClassNames(GOOD_FILE);

    // Act
    const findings = findingsFor(report, name ?? '');

    // Assess
    expect(name).toBe('default-al2023');
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.filter((finding) => ['fail', 'error'].includes(finding.status))).toEqual([]);
  });

  const cases = Object.entries(BROKEN).flatMap(([file, names]) =>
    Object.entries(names).map(([name, checkIds]) => [file, name, checkIds] as const)
  );

  it.each(cases)('%s: %s fails its intended checks %j', (_file, name, checkIds) => {
    const failed = new Set(
      findingsFor(report, name)
        .filter((finding) => finding.status === 'fail')
        .map((finding) => finding.checkId)
    );
    for (const checkId of checkIds) expect(failed, `${name} → ${checkId}`).toContain(checkId);
  });

  it.each(['legacy-v1beta1', 'subnet-terms-missing'])(
    '%s: every error on an object that does not parse is a follow-on of its schema findings',
    (name) => {
      // Prepare
      const findings = findingsFor(report, name);

      // Act
      const roots = findings.filter((finding) => finding.checkId === 'nodeclass-schema-valid');
      const errors = findings.filter((finding) => finding.status === 'error');

      // Assess: one root to fix, no storm of critical "not evaluated" errors beside it.
      expect(roots.map((root) => root.status)).toContain('fail');
      expect(errors.length).toBeGreaterThan(5);
      for (const error of errors) {
        expect(roots.map((root) => root.id)).toContain(error.causedBy);
      }
    }
  );

  it.each(Object.entries(NODEPOOLS))('NodePool %s fails exactly %j', (name, checkIds) => {
    const findings = report.findings.filter(
      (finding) => finding.resource.kind === 'NodePool' && finding.resource.name === name
    );
    expect(findings.length).toBeGreaterThan(0);
    const failed = findings
      .filter((finding) => ['fail', 'error'].includes(finding.status))
      .map((finding) => finding.checkId);
    expect([...new Set(failed)]).toEqual(checkIds);
  });

  it('says where it looked for a missing EC2NodeClass', () => {
    const [missing] = report.findings.filter(
      (finding) => finding.checkId === 'nodepool-nodeclass-exists' && finding.status === 'fail'
    );
    expect(missing?.message).toMatch(
      /EC2NodeClass "gpu-al2023" does not exist in the \d+ file\(s\) scanned/
    );
  });

  it('covers every group A check with a broken example', () => {
    const covered = new Set(cases.flatMap(([, , checkIds]) => checkIds));
    expect([...covered].sort()).toEqual([...GROUP_A].sort());
  });
});
