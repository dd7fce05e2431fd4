import { describe, expect, it } from 'vitest';
import { evaluateInventory } from '../../lambda/app/run-scan.js';
import { breachesThreshold } from '../../lambda/core/report.js';
import { aNodeClassObject, anInventory } from '../support/builders.js';

const NOW = new Date('2026-11-01T12:00:00Z');
const PREFIX = 'ignore-check.nodeclass-scanner/';

// An instance profile ARN where Karpenter wants a name: instance-profile-is-name fails (critical).
const profileArn = (name: string, annotations: Record<string, string> = {}) =>
  aNodeClassObject({
    name,
    metadata: { annotations },
    spec: {
      role: undefined,
      instanceProfile: 'arn:aws:iam::123456789012:instance-profile/KarpenterNode',
    },
  });

function profileFinding(report: ReturnType<typeof evaluateInventory>, name: string) {
  return report.findings.find(
    (finding) => finding.checkId === 'instance-profile-is-name' && finding.resource.name === name
  );
}

describe('evaluateInventory with suppressions', () => {
  it('fails on the unsuppressed finding (the premise of the tests below)', () => {
    const report = evaluateInventory(anInventory([profileArn('gpu')]), { now: NOW });
    expect(profileFinding(report, 'gpu')).toMatchObject({ status: 'fail', severity: 'critical' });
    expect(breachesThreshold(report, 'high')).toBe(true);
  });

  it('applies object annotations: suppressed in the report, counted, and not failing the gate', () => {
    // Prepare
    const inventory = anInventory([
      profileArn('gpu', { [`${PREFIX}instance-profile-is-name`]: 'rendered by an old chart' }),
    ]);
    // Act
    const report = evaluateInventory(inventory, { now: NOW });
    // Assess
    expect(profileFinding(report, 'gpu')).toMatchObject({
      status: 'suppressed',
      suppression: { reason: 'rendered by an old chart', source: 'annotation' },
    });
    expect(report.summary.byStatus.suppressed).toBe(1);
    expect(report.summary.byStatus.fail).toBe(0);
    expect(report.summary.failuresBySeverity.critical).toBe(0);
    expect(breachesThreshold(report, 'high')).toBe(false);
  });

  it('applies config rules by resource glob, until they expire', () => {
    // Prepare
    const inventory = anInventory([profileArn('legacy-a'), profileArn('fresh')], {
      cluster: { name: 'prod' },
    });
    const ignore = [
      {
        check: 'instance-profile-is-name',
        resource: 'prod/EC2NodeClass/legacy-*',
        reason: 'retired in December',
        expires: '2026-11-30',
      },
    ];
    // Act
    const before = evaluateInventory(inventory, { now: NOW, ignore });
    const after = evaluateInventory(inventory, { now: new Date('2026-12-01T00:00:00Z'), ignore });
    // Assess
    expect(profileFinding(before, 'legacy-a')?.status).toBe('suppressed');
    expect(profileFinding(before, 'fresh')?.status).toBe('fail');
    expect(profileFinding(after, 'legacy-a')?.status).toBe('fail');
  });

  it('reports an annotation naming no check as an error, even when that check was not selected', () => {
    // Prepare
    const inventory = anInventory([
      profileArn('gpu', { [`${PREFIX}instance-profile-is-nam`]: 'typo' }),
    ]);
    // Act
    const report = evaluateInventory(inventory, { now: NOW, only: ['instance-profile-is-name'] });
    // Assess
    expect(profileFinding(report, 'gpu')?.status).toBe('fail');
    expect(report.findings).toContainEqual(
      expect.objectContaining({
        checkId: 'nodeclass-schema-valid',
        status: 'error',
        evidence: expect.objectContaining({ annotation: `${PREFIX}instance-profile-is-nam` }),
      })
    );
  });

  it('accepts annotations for catalog checks this scan skipped', () => {
    const inventory = anInventory([profileArn('gpu', { [`${PREFIX}ami-allowed`]: 'reviewed' })]);
    const report = evaluateInventory(inventory, { now: NOW, skip: ['ami-allowed'] });
    expect(report.findings.filter((finding) => finding.status === 'error')).toEqual([]);
  });
});
