import { describe, expect, it } from 'vitest';
import { type Finding, findingId, type ResourceRef } from '../../lambda/core/model.js';
import { buildReport } from '../../lambda/core/report.js';

const resource: ResourceRef = { cluster: 'prod', kind: 'EC2NodeClass', name: 'golden' };

function finding(checkId: string, overrides: Partial<Finding> = {}): Finding {
  return {
    id: findingId(checkId, resource),
    checkId,
    severity: 'critical',
    status: 'fail',
    resource,
    message: `${checkId} failed`,
    remediation: 'Fix it.',
    evidence: {},
    materialHash: '0000000000000000',
    ...overrides,
  };
}

describe('buildReport summary', () => {
  it('counts a failing follow-on by status but not again as a failure of its severity', () => {
    // Prepare
    const root = finding('ami-alias-resolves');
    const followOn = finding('ami-selector-resolves', { causedBy: root.id });
    const accepted = finding('node-role-policies', {
      severity: 'high',
      status: 'suppressed',
      suppression: { reason: 'accepted', source: 'annotation', status: 'fail' },
    });
    // Act
    const { summary } = buildReport({
      evaluation: { findings: [root, followOn, accepted], notRun: [] },
      now: new Date('2026-11-01T12:00:00Z'),
      nodeClasses: 1,
      clusters: ['prod'],
    });
    // Assess
    expect(summary.byStatus).toMatchObject({ fail: 2, suppressed: 1 });
    expect(summary.failuresBySeverity).toEqual({
      critical: 1,
      high: 0,
      medium: 0,
      low: 0,
      info: 0,
    });
  });
});
