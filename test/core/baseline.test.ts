import { describe, expect, it } from 'vitest';
import {
  type Baseline,
  BaselineSchema,
  type BaselineScope,
  compareWithBaseline,
} from '../../lambda/core/baseline.js';
import { materialHash } from '../../lambda/core/material.js';
import {
  type Finding,
  type FindingStatus,
  findingId,
  type ResourceRef,
  type Severity,
} from '../../lambda/core/model.js';
import { breachesThreshold, buildReport, type ScanReport } from '../../lambda/core/report.js';

const NOW = new Date('2026-11-01T12:00:00Z');
const FREE_IPS = ['subnets[].id'];

function nodeClass(name: string, cluster = 'prod'): ResourceRef {
  return { cluster, kind: 'EC2NodeClass', name };
}

/** A finding as a check would produce it: the hash over status, severity and material evidence. */
function finding(
  checkId: string,
  options: {
    resource?: ResourceRef;
    status?: FindingStatus;
    severity?: Severity;
    message?: string;
    evidence?: Record<string, unknown>;
    material?: readonly string[];
    causedBy?: string;
  } = {}
): Finding {
  const resource = options.resource ?? nodeClass('default');
  const status = options.status ?? 'fail';
  const severity = options.severity ?? 'high';
  const evidence = options.evidence ?? {};
  return {
    id: findingId(checkId, resource),
    checkId,
    severity,
    status,
    resource,
    message: options.message ?? `${checkId} failed`,
    remediation: 'Fix it.',
    evidence,
    materialHash: materialHash({ status, severity, evidence }, options.material ?? []),
    ...(options.causedBy === undefined ? {} : { causedBy: options.causedBy }),
  };
}

function report(findings: readonly Finding[], clusters: readonly string[] = ['prod']): ScanReport {
  return buildReport({
    evaluation: { findings, notRun: [] },
    now: NOW,
    nodeClasses: 1,
    clusters,
  });
}

/** A baseline as it is read back from a `--format json` report. */
function baselineOf(previous: ScanReport): Baseline {
  return BaselineSchema.parse(JSON.parse(JSON.stringify(previous)));
}

const allChecks: BaselineScope = {
  checkIds: ['subnets-have-free-ips', 'ami-selector-resolves', 'controller-can-launch', 'tags'],
};

function changes(compared: ScanReport): Record<string, string | undefined> {
  return Object.fromEntries(compared.findings.map((f) => [f.checkId, f.change]));
}

describe('compareWithBaseline', () => {
  it('is unchanged when only volatile wording and counts moved, changed when material facts did', () => {
    // Prepare: free-IP counts and the message move; the set of short subnets is the material fact
    const before = finding('subnets-have-free-ips', {
      message: 'subnet-a has 3 free IPs',
      evidence: { subnets: [{ id: 'subnet-a', free: 3 }] },
      material: FREE_IPS,
    });
    const reworded = finding('subnets-have-free-ips', {
      message: 'subnet-a has 4 free IPs',
      evidence: { subnets: [{ id: 'subnet-a', free: 4 }] },
      material: FREE_IPS,
    });
    const widened = finding('subnets-have-free-ips', {
      message: 'subnet-a has 4 free IPs, subnet-b has 2',
      evidence: {
        subnets: [
          { id: 'subnet-a', free: 4 },
          { id: 'subnet-b', free: 2 },
        ],
      },
      material: FREE_IPS,
    });
    const baseline = baselineOf(report([before]));
    // Act
    const same = compareWithBaseline(report([reworded]), baseline, allChecks);
    const moved = compareWithBaseline(report([widened]), baseline, allChecks);
    // Assess
    expect(changes(same)).toEqual({ 'subnets-have-free-ips': 'unchanged' });
    expect(changes(moved)).toEqual({ 'subnets-have-free-ips': 'changed' });
  });

  it('marks a finding the baseline did not have open as new, even if it passed or was suppressed there', () => {
    const baseline = baselineOf(
      report([
        finding('tags', { status: 'pass' }),
        finding('ami-selector-resolves', { status: 'suppressed' }),
      ])
    );
    const compared = compareWithBaseline(
      report([
        finding('tags'),
        finding('ami-selector-resolves', { severity: 'critical' }),
        finding('subnets-have-free-ips', { resource: nodeClass('other') }),
      ]),
      baseline,
      allChecks
    );
    expect(changes(compared)).toEqual({
      tags: 'new',
      'ami-selector-resolves': 'new',
      'subnets-have-free-ips': 'new',
    });
    expect(compared.resolved).toEqual([]);
  });

  it('gives passing, not-applicable and suppressed findings no change', () => {
    const baseline = baselineOf(report([finding('tags', { status: 'pass' })]));
    const compared = compareWithBaseline(
      report([
        finding('tags', { status: 'pass' }),
        finding('ami-selector-resolves', { status: 'not-applicable' }),
        finding('subnets-have-free-ips', { status: 'suppressed' }),
      ]),
      baseline,
      allChecks
    );
    expect(compared.findings.map((f) => 'change' in f)).toEqual([false, false, false]);
  });

  it('lists open baseline findings that now pass, are suppressed or are gone as resolved', () => {
    const fixed = finding('subnets-have-free-ips', {
      severity: 'medium',
      message: 'subnet-a has 3 free IPs',
    });
    const accepted = finding('tags', { resource: nodeClass('legacy'), severity: 'low' });
    const deleted = finding('ami-selector-resolves', {
      resource: nodeClass('removed'),
      severity: 'critical',
      status: 'error',
    });
    const kept = finding('controller-can-launch', { severity: 'critical' });
    const baseline = baselineOf(report([fixed, accepted, deleted, kept]));
    const compared = compareWithBaseline(
      report([
        finding('subnets-have-free-ips', { status: 'pass', severity: 'medium' }),
        finding('tags', { resource: nodeClass('legacy'), severity: 'low', status: 'suppressed' }),
        kept,
      ]),
      baseline,
      allChecks
    );
    expect(compared.resolved).toEqual([
      {
        id: deleted.id,
        checkId: 'ami-selector-resolves',
        resource: nodeClass('removed'),
        severity: 'critical',
        message: 'ami-selector-resolves failed',
      },
      {
        id: fixed.id,
        checkId: 'subnets-have-free-ips',
        resource: nodeClass('default'),
        severity: 'medium',
        message: 'subnet-a has 3 free IPs',
      },
      {
        id: accepted.id,
        checkId: 'tags',
        resource: nodeClass('legacy'),
        severity: 'low',
        message: 'tags failed',
      },
    ]);
    expect(changes(compared)).toMatchObject({ 'controller-can-launch': 'unchanged' });
  });

  it('does not call resolved the fail an earlier version reported for what is now a notice of the same severity', () => {
    // Prepare: the baseline's 412 dry-run finding was an info `fail`; this scan reports a notice.
    const cluster: ResourceRef = { cluster: 'prod', kind: 'Cluster', name: 'prod' };
    const legacy = finding('controller-can-launch', { resource: cluster, severity: 'info' });
    const pending = finding('ami-selector-resolves', { severity: 'critical' });
    const baseline = baselineOf(report([legacy, pending]));
    // Act: the same 412 finding as a notice; the critical one is now only an info notice.
    const compared = compareWithBaseline(
      report([
        finding('controller-can-launch', { resource: cluster, severity: 'info', status: 'notice' }),
        finding('ami-selector-resolves', { severity: 'info', status: 'notice' }),
      ]),
      baseline,
      allChecks
    );
    // Assess: notices get no change; only the real failure is resolved.
    expect(compared.findings.map((f) => 'change' in f)).toEqual([false, false]);
    expect(compared.resolved?.map((f) => [f.checkId, f.severity])).toEqual([
      ['ami-selector-resolves', 'critical'],
    ]);
    expect(breachesThreshold(compared, 'info')).toBe(false);
  });

  it('does not resolve findings of clusters or checks this scan did not look at', () => {
    const elsewhere = finding('tags', { resource: nodeClass('default', 'staging') });
    const notRun = finding('ami-selector-resolves');
    const baseline = baselineOf(report([elsewhere, notRun], ['prod', 'staging']));
    const compared = compareWithBaseline(report([], ['prod']), baseline, {
      checkIds: ['tags'],
    });
    expect(compared.resolved).toEqual([]);
  });

  it('compares severity and status when the baseline predates material hashes', () => {
    // Prepare: a report written before `materialHash` existed
    const old = JSON.parse(
      JSON.stringify(report([finding('tags'), finding('ami-selector-resolves')]))
    ) as { findings: Record<string, unknown>[] };
    for (const item of old.findings) delete item.materialHash;
    const baseline = BaselineSchema.parse(old);
    // Act
    const compared = compareWithBaseline(
      report([
        finding('tags', { message: 'reworded', evidence: { anything: 1 }, material: ['anything'] }),
        finding('ami-selector-resolves', { severity: 'critical' }),
      ]),
      baseline,
      allChecks
    );
    // Assess
    expect(changes(compared)).toEqual({ tags: 'unchanged', 'ami-selector-resolves': 'changed' });
  });
});

describe('breachesThreshold with a baseline', () => {
  it('counts only new and changed findings, never suppressed or follow-on ones', () => {
    const root = finding('ami-selector-resolves', { severity: 'critical' });
    const baseline = baselineOf(report([root]));
    const followOn = finding('controller-can-launch', {
      status: 'error',
      severity: 'critical',
      causedBy: root.id,
    });
    const unchanged = compareWithBaseline(report([root, followOn]), baseline, allChecks);
    const suppressed = compareWithBaseline(
      report([root, finding('tags', { status: 'suppressed', severity: 'critical' })]),
      baseline,
      allChecks
    );
    const added = compareWithBaseline(
      report([root, finding('tags', { severity: 'medium' })]),
      baseline,
      allChecks
    );
    expect(breachesThreshold(unchanged, 'info')).toBe(false);
    expect(breachesThreshold(suppressed, 'info')).toBe(false);
    expect(breachesThreshold(added, 'high')).toBe(false);
    expect(breachesThreshold(added, 'medium')).toBe(true);
    // Without a baseline the same root fails the gate.
    expect(breachesThreshold(report([root, followOn]), 'critical')).toBe(true);
  });

  it('never counts a follow-on on its own', () => {
    const root = finding('ami-selector-resolves', { severity: 'medium' });
    const followOn = finding('controller-can-launch', {
      status: 'error',
      severity: 'critical',
      causedBy: root.id,
    });
    expect(breachesThreshold(report([root, followOn]), 'critical')).toBe(false);
    expect(breachesThreshold(report([root, followOn]), 'medium')).toBe(true);
  });
});
