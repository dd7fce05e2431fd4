import { describe, expect, it } from 'vitest';
import type { NodeClassIndexEntry } from '../../lambda/core/event-index.js';
import { diffFindings } from '../../lambda/core/lifecycle.js';
import {
  applyStorageLimits,
  type OversizedItem,
  STATE_SIZE_RULE,
} from '../../lambda/core/storage-limits.js';
import { aFinding, aStoredState } from '../support/findings.js';

const entry = (name: string): NodeClassIndexEntry => ({
  cluster: 'prod',
  name,
  amiSelectorTerms: [{ name: 'eks-node-*' }],
  resolvedAmiIds: [],
});

describe('applyStorageLimits', () => {
  it('changes nothing when every item fits', () => {
    const findings = [aFinding()];
    const index = [entry('default')];
    expect(applyStorageLimits({ findings, index, oversized: [] })).toEqual({
      findings,
      index,
      refused: [],
    });
  });

  it('leaves a refused index entry out and reports it as an error on its NodeClass', () => {
    // Prepare
    const passing = aFinding({
      checkId: 'nodeclass-schema-valid',
      status: 'pass',
      resource: { name: 'poison' },
    });
    const other = aFinding({ resource: { name: 'default' } });
    const oversized: OversizedItem[] = [
      {
        item: 'nodeclass-index',
        entry: { cluster: 'prod', name: 'poison' },
        bytes: 420_187,
        maxBytes: 409_600,
        largestField: 'amiSelectorTerms',
      },
    ];

    // Act
    const result = applyStorageLimits({
      findings: [passing, other],
      index: [entry('default'), entry('poison')],
      oversized,
    });

    // Assess: the others stand; the poison is not indexed and no longer passes the schema check
    expect(result.index.map((item) => item.name)).toEqual(['default']);
    expect(result.findings.slice(0, 1)).toEqual([other]);
    expect(result.refused).toHaveLength(1);
    expect(result.findings[1]).toBe(result.refused[0]);
    expect(result.refused[0]).toMatchObject({
      checkId: 'nodeclass-schema-valid',
      status: 'error',
      severity: 'high',
      resource: { cluster: 'prod', kind: 'EC2NodeClass', name: 'poison' },
      message:
        'The scanner cannot store this EC2NodeClass in its event index (420,187 bytes, over the 409,600-byte DynamoDB item limit; most of it is spec.amiSelectorTerms). AMI and IAM events do not re-evaluate it until it fits; scheduled scans still check it.',
      evidence: {
        path: 'spec.amiSelectorTerms',
        rule: STATE_SIZE_RULE,
        item: 'nodeclass-index',
        bytes: 420_187,
        maxBytes: 409_600,
      },
      location: { path: 'spec.amiSelectorTerms' },
    });
  });

  it('keeps the error stable while only the size changes (one alert, not one per scan)', () => {
    const refusal = (bytes: number): OversizedItem => ({
      item: 'nodeclass-index',
      entry: { cluster: 'prod', name: 'poison' },
      bytes,
      maxBytes: 409_600,
      largestField: 'amiSelectorTerms',
    });
    const [first] = applyStorageLimits({
      findings: [],
      index: [],
      oversized: [refusal(420_000)],
    }).refused;
    const [second] = applyStorageLimits({
      findings: [],
      index: [],
      oversized: [refusal(430_000)],
    }).refused;
    expect(second?.id).toBe(first?.id);
    expect(second?.materialHash).toBe(first?.materialHash);
  });

  it('stands an error of the same check in for a refused finding, so its stored failure is not resolved', () => {
    // Prepare: the failure was stored by an earlier scan; now its state would not fit
    const failure = aFinding({ checkId: 'ami-selector-pinned', severity: 'low' });
    const stored = [aStoredState(failure, '2026-10-01T00:00:00.000Z')];

    // Act
    const result = applyStorageLimits({
      findings: [failure],
      index: [],
      oversized: [{ item: 'finding-state', finding: failure, bytes: 500_000, maxBytes: 409_600 }],
    });
    const diff = diffFindings({
      stored,
      findings: result.findings,
      scope: { clusters: ['prod'] },
      now: new Date('2026-11-01T00:00:00Z'),
    });

    // Assess
    expect(result.findings).toEqual(result.refused);
    expect(result.refused[0]).toMatchObject({
      checkId: 'ami-selector-pinned',
      status: 'error',
      severity: 'low',
      resource: failure.resource,
      evidence: { rule: STATE_SIZE_RULE, item: 'finding-state', findingId: failure.id },
    });
    expect(result.refused[0]?.message).toContain(`finding ${failure.id}`);
    expect(diff.changes.map((change) => `${change.kind} ${change.next.checkId}`)).toEqual([
      'new ami-selector-pinned',
    ]);
    expect(diff.changes[0]?.next.id).toBe(result.refused[0]?.id);
  });
});
