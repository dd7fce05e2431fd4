import { describe, expect, it } from 'vitest';
import {
  adoptablePending,
  applyChanges,
  DEFAULT_PENDING_LEASE_MS,
  diffFindings,
  type FindingState,
  openBySeverity,
  type PendingPublish,
} from '../../lambda/core/lifecycle.js';
import { materialHash } from '../../lambda/core/material.js';
import type { Finding } from '../../lambda/core/model.js';
import { aFinding, aStoredState } from '../support/findings.js';

const T0 = '2026-11-01T00:00:00.000Z';
const at = (iso: string) => new Date(iso);
const scope = { clusters: ['prod'] };

/** `finding` with the hash its check computes when `material` names these evidence paths. */
function hashed(finding: Finding, material: readonly string[] = []): Finding {
  return { ...finding, materialHash: materialHash(finding, material) };
}

describe('diffFindings', () => {
  it('reports a first failure as new, with revision 1 and first/last seen now', () => {
    // Prepare
    const finding = aFinding();
    // Act
    const diff = diffFindings({ stored: [], findings: [finding], scope, now: at(T0) });
    // Assess
    expect(diff.changes).toHaveLength(1);
    expect(diff.changes[0]).toMatchObject({
      kind: 'new',
      finding,
      next: {
        id: finding.id,
        status: 'open',
        firstSeen: T0,
        lastSeen: T0,
        lastNotified: T0,
        revision: 1,
      },
    });
  });

  it('reports nothing when the same failure is seen again within the reminder interval', () => {
    // Prepare
    const finding = aFinding();
    const first = diffFindings({ stored: [], findings: [finding], scope, now: at(T0) });
    const stored = applyChanges([], first.changes);
    // Act
    const second = diffFindings({
      stored,
      findings: [finding],
      scope,
      now: at('2026-11-01T00:15:00Z'),
    });
    // Assess
    expect(second.changes).toEqual([]);
    expect(second.touched).toEqual([]);
  });

  it('touches lastSeen of an unchanged open finding once the touch interval has passed', () => {
    const finding = aFinding();
    const stored = [aStoredState(finding, T0, { materialHash: finding.materialHash })];
    const diff = diffFindings({
      stored,
      findings: [finding],
      scope,
      now: at('2026-11-01T02:00:00Z'),
    });
    expect(diff.changes).toEqual([]);
    expect(diff.touched).toEqual([{ ...stored[0], lastSeen: '2026-11-01T02:00:00.000Z' }]);
  });

  it('reports changed when the material facts change (severity), keeping firstSeen', () => {
    const finding = hashed(aFinding());
    const stored = [aStoredState(finding, T0, { materialHash: finding.materialHash })];
    const severityChanged = diffFindings({
      stored,
      findings: [hashed({ ...finding, severity: 'high' })],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    expect(severityChanged.changes.map((c) => c.kind)).toEqual(['changed']);
    expect(severityChanged.changes[0]?.next).toMatchObject({
      severity: 'high',
      firstSeen: T0,
      revision: 2,
    });
    expect(severityChanged.changes[0]?.next.materialHash).not.toBe(finding.materialHash);
    expect(severityChanged.changes[0]?.previous).toEqual(stored[0]);
  });

  it('reports changed when a declared material evidence path changes, not when a count moves', () => {
    // Prepare: subnets-have-free-ips style evidence; only the set of failing subnets is material
    const material = ['subnets[].id'];
    const low = (free: Record<string, number>) =>
      hashed(
        aFinding({
          checkId: 'subnets-have-free-ips',
          evidence: { subnets: Object.entries(free).map(([id, count]) => ({ id, free: count })) },
          message: `Subnets with too few free IPs: ${JSON.stringify(free)}`,
        }),
        material
      );
    const first = low({ 'subnet-a': 3 });
    const stored = [aStoredState(first, T0, { materialHash: first.materialHash })];
    const now = at('2026-11-01T01:00:00Z');
    // Act
    const countMoved = diffFindings({ stored, findings: [low({ 'subnet-a': 4 })], scope, now });
    const setGrew = diffFindings({
      stored,
      findings: [low({ 'subnet-a': 4, 'subnet-b': 1 })],
      scope,
      now,
    });
    // Assess
    expect(countMoved.changes).toEqual([]);
    expect(setGrew.changes.map((c) => c.kind)).toEqual(['changed']);
  });

  it('never reports a volatile message as changed, and still reminds once the interval passed', () => {
    // Prepare: status-agrees-with-scan says "Unknown for N minutes", N growing every scan
    const unknownFor = (minutes: number) =>
      hashed(
        aFinding({
          checkId: 'status-agrees-with-scan',
          severity: 'high',
          message: `Ready condition is Unknown for ${minutes} minutes.`,
          evidence: { minutes },
        })
      );
    let stored = applyChanges(
      [],
      diffFindings({ stored: [], findings: [unknownFor(15)], scope, now: at(T0) }).changes
    );
    const kinds: string[] = [];
    // Act: a scan every 15 minutes for a day and 15 minutes
    for (let scan = 1; scan <= 97; scan++) {
      const now = new Date(Date.parse(T0) + scan * 15 * 60_000);
      const diff = diffFindings({ stored, findings: [unknownFor(15 * (scan + 1))], scope, now });
      kinds.push(...diff.changes.map((c) => c.kind));
      stored = applyChanges(
        applyChanges(
          stored,
          diff.touched.map((next) => ({ next }))
        ),
        diff.changes
      );
    }
    // Assess: one reminder after 24 hours, nothing else
    expect(kinds).toEqual(['reminder']);
  });

  it('records the hash of a state stored before hashes silently, then judges on material facts', () => {
    // Prepare: a state written by an earlier version (no materialHash)
    const finding = hashed(aFinding({ message: 'Reworded since.' }));
    const legacy = aStoredState(aFinding(), T0);
    expect(legacy.materialHash).toBeUndefined();
    // Act
    const upgrade = diffFindings({
      stored: [legacy],
      findings: [finding],
      scope,
      now: at('2026-11-01T00:15:00Z'),
    });
    const after = upgrade.touched.map((next) => ({ next }));
    const next = diffFindings({
      stored: applyChanges([legacy], after),
      findings: [hashed({ ...finding, severity: 'high' })],
      scope,
      now: at('2026-11-01T00:30:00Z'),
    });
    // Assess: no alert storm on upgrade; the hash is stored; a later severity change alerts
    expect(upgrade.changes).toEqual([]);
    expect(upgrade.touched).toEqual([
      { ...legacy, lastSeen: '2026-11-01T00:15:00.000Z', materialHash: finding.materialHash },
    ]);
    expect(next.changes.map((c) => c.kind)).toEqual(['changed']);
  });

  it('judges a hash-less state on severity and status alone', () => {
    const legacy = aStoredState(aFinding(), T0);
    const diff = diffFindings({
      stored: [legacy],
      findings: [hashed(aFinding({ severity: 'medium' }))],
      scope,
      now: at('2026-11-01T00:15:00Z'),
    });
    expect(diff.changes.map((c) => c.kind)).toEqual(['changed']);
  });

  it('reports resolved when a stored failure now passes', () => {
    const finding = aFinding();
    const stored = [aStoredState(finding, T0)];
    const diff = diffFindings({
      stored,
      findings: [{ ...finding, status: 'pass', message: 'Instance profile "x" is a name.' }],
      scope,
      now: at('2026-11-01T03:00:00Z'),
    });
    expect(diff.changes).toHaveLength(1);
    expect(diff.changes[0]).toMatchObject({
      kind: 'resolved',
      next: { status: 'resolved', resolvedAt: '2026-11-01T03:00:00.000Z', revision: 2 },
    });
  });

  it('reports resolved when the NodeClass is gone from a cluster that was read', () => {
    const stored = [aStoredState(aFinding(), T0)];
    const diff = diffFindings({ stored, findings: [], scope, now: at('2026-11-01T03:00:00Z') });
    expect(diff.changes.map((c) => c.kind)).toEqual(['resolved']);
    expect(diff.changes[0]?.finding).toBeUndefined();
  });

  it('never resolves a failure whose finding now errors (same id)', () => {
    const finding = aFinding();
    const stored = [aStoredState(finding, T0)];
    const diff = diffFindings({
      stored,
      findings: [{ ...finding, status: 'error', message: 'ec2:DescribeImages throttled' }],
      scope,
      now: at('2026-11-02T03:00:00Z'),
    });
    expect(diff.changes).toEqual([]);
    expect(diff.touched).toEqual([]);
  });

  it('never resolves a failure when the same check errors on the same resource under another id', () => {
    const finding = aFinding();
    const stored = [aStoredState(finding, T0)];
    const errored = aFinding({ id: 'other-id', status: 'error', message: 'AWS facts unavailable' });
    const diff = diffFindings({
      stored,
      findings: [errored],
      scope,
      now: at('2026-11-01T03:00:00Z'),
    });
    expect(diff.changes.map((c) => c.kind)).toEqual(['new']);
    expect(diff.changes[0]?.next.id).toBe('other-id');
  });

  it('never resolves findings of a check that crashed, nor anything in an unread cluster', () => {
    const stored = [aStoredState(aFinding(), T0)];
    const crash = aFinding({
      id: 'crash',
      status: 'error',
      resource: { kind: 'Cluster', name: '*' },
    });
    const crashed = diffFindings({
      stored,
      findings: [crash],
      scope,
      now: at('2026-11-01T03:00:00Z'),
    });
    const unread = diffFindings({
      stored,
      findings: [],
      scope,
      unreadClusters: ['prod'],
      now: at('2026-11-01T03:00:00Z'),
    });
    expect(crashed.changes.filter((c) => c.kind === 'resolved')).toEqual([]);
    expect(unread.changes).toEqual([]);
  });

  it('never resolves NodePool findings of a cluster whose NodePools could not be listed', () => {
    const pool = aFinding({
      checkId: 'nodepool-nodeclass-exists',
      resource: { kind: 'NodePool', name: 'general' },
    });
    const nodeClass = aFinding();
    const stored = [aStoredState(pool, T0), aStoredState(nodeClass, T0)];
    const diff = (unreadNodePools: string[]) =>
      diffFindings({
        stored,
        findings: [],
        scope,
        unreadNodePools,
        now: at('2026-11-01T03:00:00Z'),
      }).changes.map((change) => `${change.kind} ${change.next.resource.kind}`);
    // The NodeClass finding is gone and resolves; the NodePool one is unknown, not gone.
    expect(diff(['prod'])).toEqual(['resolved EC2NodeClass']);
    expect(diff([]).sort()).toEqual(['resolved EC2NodeClass', 'resolved NodePool']);
  });

  it('leaves stored findings outside the scan scope alone', () => {
    const other = aStoredState(aFinding({ resource: { cluster: 'staging' } }), T0);
    const sibling = aStoredState(aFinding({ resource: { name: 'gpu' } }), T0);
    const restricted = { clusters: ['prod'], nodeClasses: [{ cluster: 'prod', name: 'default' }] };
    const diff = diffFindings({
      stored: [other, sibling],
      findings: [],
      scope: restricted,
      now: at(T0),
    });
    expect(diff.changes).toEqual([]);
  });

  it('ignores new findings outside a restricted scope', () => {
    const restricted = { clusters: ['prod'], nodeClasses: [{ cluster: 'prod', name: 'default' }] };
    const diff = diffFindings({
      stored: [],
      findings: [
        aFinding({ resource: { name: 'gpu' } }),
        aFinding({ resource: { kind: 'Cluster', name: 'prod' } }),
      ],
      scope: restricted,
      now: at(T0),
    });
    expect(diff.changes).toEqual([]);
  });

  it('takes NodePools listed in a restricted scope in, and leaves the others out', () => {
    const scope = {
      clusters: ['prod'],
      nodeClasses: [{ cluster: 'prod', name: 'default' }],
      nodePools: [{ cluster: 'prod', name: 'general' }],
    };
    const diff = diffFindings({
      stored: [],
      findings: [
        aFinding({ resource: { kind: 'NodePool', name: 'general' } }),
        aFinding({ resource: { kind: 'NodePool', name: 'other' } }),
      ],
      scope,
      now: at(T0),
    });
    expect(diff.changes.map((change) => change.next.resource.name)).toEqual(['general']);
  });

  it('sends a reminder once the interval since the last notification has passed', () => {
    const finding = aFinding();
    const stored = [aStoredState(finding, T0)];
    const early = diffFindings({
      stored,
      findings: [finding],
      scope,
      now: at('2026-11-01T23:59:00Z'),
    });
    const due = diffFindings({
      stored,
      findings: [finding],
      scope,
      now: at('2026-11-02T00:00:00Z'),
    });
    const custom = diffFindings({
      stored,
      findings: [finding],
      scope,
      now: at('2026-11-01T06:00:00Z'),
      reminderIntervalMs: 6 * 3600 * 1000,
    });
    expect(early.changes.filter((c) => c.kind === 'reminder')).toEqual([]);
    expect(due.changes.map((c) => c.kind)).toEqual(['reminder']);
    expect(due.changes[0]?.next).toMatchObject({
      lastNotified: '2026-11-02T00:00:00.000Z',
      firstSeen: T0,
      revision: 2,
    });
    expect(custom.changes.map((c) => c.kind)).toEqual(['reminder']);
  });

  it('reopens a resolved finding as new with a fresh firstSeen', () => {
    const finding = aFinding();
    const resolved: FindingState = {
      ...aStoredState(finding, T0),
      status: 'resolved',
      resolvedAt: T0,
      revision: 2,
    };
    const diff = diffFindings({
      stored: [resolved],
      findings: [finding],
      scope,
      now: at('2026-11-03T00:00:00Z'),
    });
    expect(diff.changes[0]).toMatchObject({
      kind: 'new',
      previous: resolved,
      next: { status: 'open', firstSeen: '2026-11-03T00:00:00.000Z', revision: 3 },
    });
  });

  it('does not notify passing or not-applicable findings it never stored', () => {
    const diff = diffFindings({
      stored: [],
      findings: [aFinding({ status: 'pass' }), aFinding({ id: 'na', status: 'not-applicable' })],
      scope,
      now: at(T0),
    });
    expect(diff.changes).toEqual([]);
  });

  it('orders changes new, changed, resolved, reminder and by severity', () => {
    const gone = aStoredState(aFinding({ id: 'gone', severity: 'low' }), T0);
    const diff = diffFindings({
      stored: [gone],
      findings: [aFinding({ id: 'b', severity: 'low' }), aFinding({ id: 'a', severity: 'high' })],
      scope,
      now: at(T0),
    });
    expect(diff.changes.map((c) => `${c.kind}:${c.next.id}`)).toEqual([
      'new:a',
      'new:b',
      'resolved:gone',
    ]);
  });
});

describe('diffFindings with root causes', () => {
  const root = aFinding({ checkId: 'ami-selector-resolves', severity: 'critical' });
  const followOn = aFinding({
    checkId: 'controller-can-launch',
    status: 'error',
    severity: 'critical',
    message: 'Launching nodes could not be verified: the AMI did not resolve.',
    causedBy: root.id,
  });
  // The same finding standing on its own (no root cause).
  const { causedBy, ...uncaused } = followOn;

  it('alerts the root only and shows the follow-on under it', () => {
    // Act
    const diff = diffFindings({ stored: [], findings: [root, followOn], scope, now: at(T0) });
    // Assess
    expect(diff.changes.map((c) => `${c.kind}:${c.next.checkId}`)).toEqual([
      'new:ami-selector-resolves',
    ]);
    expect(diff.changes[0]?.followOns).toEqual([followOn]);
    expect(openBySeverity(applyChanges([], diff.changes)).critical).toBe(1);
  });

  it('closes a stored open follow-on silently, so it never counts as open', () => {
    // Prepare: the launch check was alerted on its own before its root failed
    const stored = [aStoredState(root, T0), aStoredState({ ...uncaused, status: 'fail' }, T0)];
    // Act
    const diff = diffFindings({
      stored,
      findings: [root, followOn],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    // Assess
    expect(diff.changes).toEqual([]);
    expect(diff.silenced).toHaveLength(1);
    expect(diff.silenced[0]?.next).toMatchObject({
      id: followOn.id,
      status: 'resolved',
      revision: 2,
      lastNotified: T0,
    });
    expect(openBySeverity(applyChanges(stored, diff.silenced)).critical).toBe(1);
  });

  it('does not resolve a stored failure of the check whose follow-on now errors', () => {
    // Prepare: a real denial of controller-can-launch under another id (another discriminator)
    const denial = aFinding({ id: 'denial', checkId: 'controller-can-launch' });
    // Act
    const diff = diffFindings({
      stored: [aStoredState(denial, T0)],
      findings: [root, followOn],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    // Assess
    expect(diff.changes.filter((c) => c.kind === 'resolved')).toEqual([]);
  });

  it('alerts the follow-on as new once it fails on its own after the root is fixed', () => {
    const first = diffFindings({ stored: [], findings: [root, followOn], scope, now: at(T0) });
    const stored = applyChanges([], first.changes);
    const standalone = { ...uncaused, status: 'fail' as const };
    const diff = diffFindings({
      stored,
      findings: [{ ...root, status: 'pass' }, standalone],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    expect(diff.changes.map((c) => `${c.kind}:${c.next.checkId}`)).toEqual([
      'new:controller-can-launch',
      'resolved:ami-selector-resolves',
    ]);
  });
});

describe('diffFindings with suppressed findings', () => {
  const failing = hashed(aFinding({ checkId: 'node-role-policies', severity: 'high' }));
  const suppressed: Finding = {
    ...failing,
    status: 'suppressed',
    suppression: {
      reason: 'CNI policy is attached through IRSA',
      source: 'config',
      status: 'fail',
      expires: '2026-12-01',
    },
  };

  it('never alerts a suppressed finding and never counts it as open', () => {
    const diff = diffFindings({ stored: [], findings: [suppressed], scope, now: at(T0) });
    expect(diff.changes).toEqual([]);
    expect(diff.silenced).toEqual([]);
  });

  it('announces an open finding that became suppressed once, and alerts it as new when the suppression expires', () => {
    // Prepare: alerted while failing
    const first = diffFindings({ stored: [], findings: [failing], scope, now: at(T0) });
    let stored = applyChanges([], first.changes);
    // Act: suppressed; a day later still suppressed; then the rule expired (the finding fails again)
    const announced = diffFindings({
      stored,
      findings: [suppressed],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    stored = applyChanges(stored, announced.changes);
    const stillQuiet = diffFindings({
      stored,
      findings: [suppressed],
      scope,
      now: at('2026-11-02T02:00:00Z'),
    });
    const expired = diffFindings({
      stored,
      findings: [failing],
      scope,
      now: at('2026-12-02T00:00:00Z'),
    });
    // Assess: one `suppressed` change, closing the state (notified now), and nothing after it
    expect(announced.silenced).toEqual([]);
    expect(announced.changes).toHaveLength(1);
    expect(announced.changes[0]).toMatchObject({
      kind: 'suppressed',
      finding: suppressed,
      previous: { status: 'open', revision: 1 },
      next: {
        status: 'resolved',
        resolvedAt: '2026-11-01T01:00:00.000Z',
        lastNotified: '2026-11-01T01:00:00.000Z',
        revision: 2,
      },
    });
    expect(openBySeverity(stored).high).toBe(0);
    expect([...stillQuiet.changes, ...stillQuiet.silenced, ...stillQuiet.touched]).toEqual([]);
    expect(expired.changes.map((c) => c.kind)).toEqual(['new']);
    expect(expired.changes[0]?.next).toMatchObject({
      status: 'open',
      firstSeen: '2026-12-02T00:00:00.000Z',
      revision: 3,
    });
  });

  it('re-opens a suppressed finding as new when the annotation is removed', () => {
    // Prepare: alerted, then suppressed by an annotation
    const byAnnotation: Finding = {
      ...suppressed,
      suppression: { reason: 'accepted', source: 'annotation', status: 'fail' },
    };
    let stored = applyChanges(
      [],
      diffFindings({ stored: [], findings: [failing], scope, now: at(T0) }).changes
    );
    stored = applyChanges(
      stored,
      diffFindings({ stored, findings: [byAnnotation], scope, now: at('2026-11-01T01:00:00Z') })
        .changes
    );
    // Act
    const removed = diffFindings({
      stored,
      findings: [failing],
      scope,
      now: at('2026-11-01T02:00:00Z'),
    });
    // Assess
    expect(removed.changes.map((c) => c.kind)).toEqual(['new']);
    expect(removed.changes[0]?.previous).toMatchObject({ status: 'resolved', revision: 2 });
  });

  it('never announces a suppression of a finding that was not open (resolved before, or never seen)', () => {
    const resolved: FindingState = {
      ...aStoredState(failing, T0),
      status: 'resolved',
      resolvedAt: T0,
      revision: 2,
    };
    const diff = diffFindings({
      stored: [resolved],
      findings: [suppressed],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    expect([...diff.changes, ...diff.silenced, ...diff.touched]).toEqual([]);
  });

  it('orders suppressed changes after resolved and before reminders', () => {
    const reminded = aFinding({ id: 'still', severity: 'high' });
    const gone = aStoredState(aFinding({ id: 'gone', severity: 'low' }), T0);
    const diff = diffFindings({
      stored: [aStoredState(failing, T0), aStoredState(reminded, T0), gone],
      findings: [suppressed, reminded],
      scope,
      now: at('2026-11-02T00:00:00Z'),
    });
    expect(diff.changes.map((c) => `${c.kind}:${c.next.id}`)).toEqual([
      'resolved:gone',
      `suppressed:${failing.id}`,
      'reminder:still',
    ]);
  });

  it('does not resolve a stored failure of the check when a suppressed finding of it errors', () => {
    const denial = aFinding({ id: 'denial', checkId: 'node-role-policies' });
    const erroring: Finding = {
      ...suppressed,
      suppression: { reason: 'accepted', source: 'annotation', status: 'error' },
    };
    const diff = diffFindings({
      stored: [aStoredState(denial, T0)],
      findings: [erroring],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    expect(diff.changes).toEqual([]);
  });
});

describe('diffFindings with notices', () => {
  // The 412 dry-run notice: once per cluster, info, a notice (an earlier version: an info `fail`).
  const notice = hashed(
    aFinding({
      checkId: 'karpenter-version-supported',
      status: 'notice',
      severity: 'info',
      resource: { kind: 'Cluster', name: 'prod' },
      message: 'Expected, not an error: validation dry-runs succeed as HTTP 412 DryRunOperation.',
      evidence: { defect: 'dry-run-412-noise' },
    }),
    ['defect']
  );
  const asFailure = hashed({ ...notice, status: 'fail' }, ['defect']);

  it('never stores, alerts or reminds a notice, scan after scan', () => {
    let stored: FindingState[] = [];
    for (const now of ['2026-11-01T00:00:00Z', '2026-11-02T01:00:00Z', '2026-11-09T00:00:00Z']) {
      const diff = diffFindings({ stored, findings: [notice], scope, now: at(now) });
      expect([...diff.changes, ...diff.silenced, ...diff.touched]).toEqual([]);
      stored = applyChanges(stored, diff.changes);
    }
    expect(stored).toEqual([]);
  });

  it('closes the notice an earlier version stored as an open failure silently: no RESOLVED, no reminder', () => {
    // Prepare: stored by the previous version (an info `fail`, notified, a day ago)
    const legacy = aStoredState(asFailure, T0, { materialHash: asFailure.materialHash });
    // Act: the first scans after the upgrade
    const upgrade = diffFindings({
      stored: [legacy],
      findings: [notice],
      scope,
      now: at('2026-11-02T06:00:00Z'),
    });
    const stored = applyChanges([legacy], upgrade.silenced);
    const later = diffFindings({
      stored,
      findings: [notice],
      scope,
      now: at('2026-11-03T07:00:00Z'),
    });
    // Assess
    expect(upgrade.changes).toEqual([]);
    expect(upgrade.touched).toEqual([]);
    expect(upgrade.silenced).toHaveLength(1);
    expect(upgrade.silenced[0]).toMatchObject({
      finding: notice,
      previous: legacy,
      next: {
        status: 'resolved',
        resolvedAt: '2026-11-02T06:00:00.000Z',
        lastNotified: T0,
        revision: 2,
      },
    });
    expect(openBySeverity(stored).info).toBe(0);
    expect([...later.changes, ...later.silenced, ...later.touched]).toEqual([]);
  });

  it('resolves, with an alert, a real failure of another severity that is now only a notice', () => {
    // Prepare: a critical pending AMI on Karpenter 1.1.2 …
    const critical = hashed(
      aFinding({ checkId: 'ami-newest-match-available', severity: 'critical' }),
      ['images[].id']
    );
    // … which, after the upgrade to 1.6.2, Karpenter skips: an info notice of the same id.
    const skipped = hashed({ ...critical, status: 'notice', severity: 'info' }, ['images[].id']);
    // Act
    const diff = diffFindings({
      stored: [aStoredState(critical, T0, { materialHash: critical.materialHash })],
      findings: [skipped],
      scope,
      now: at('2026-11-01T03:00:00Z'),
    });
    // Assess
    expect(diff.silenced).toEqual([]);
    expect(diff.changes.map((change) => [change.kind, change.next.severity])).toEqual([
      ['resolved', 'critical'],
    ]);
  });

  it('alerts a notice that turns into a failure as new', () => {
    const failing = hashed(
      aFinding({ checkId: 'ami-newest-match-available', severity: 'critical' }),
      ['images[].id']
    );
    const skipped = hashed({ ...failing, status: 'notice', severity: 'info' }, ['images[].id']);
    const before = diffFindings({ stored: [], findings: [skipped], scope, now: at(T0) });
    const after = diffFindings({
      stored: applyChanges([], before.changes),
      findings: [failing],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    expect(before.changes).toEqual([]);
    expect(after.changes.map((change) => change.kind)).toEqual(['new']);
  });
});

describe('openBySeverity', () => {
  it('counts open states per severity, zeros included', () => {
    const states = [
      aStoredState(aFinding({ id: '1', severity: 'high' }), T0),
      aStoredState(aFinding({ id: '2', severity: 'high' }), T0),
      {
        ...aStoredState(aFinding({ id: '3', severity: 'critical' }), T0),
        status: 'resolved' as const,
      },
    ];
    expect(openBySeverity(states)).toEqual({ critical: 0, high: 2, medium: 0, low: 0, info: 0 });
  });
});

describe('adoptablePending', () => {
  const state = aStoredState(aFinding(), T0);
  const pending = (scanId: string, scanSeq: number, since = T0): PendingPublish => ({
    kind: 'new',
    state,
    message: {
      id: `new-${state.id}`,
      subject: 's',
      attributes: {},
      bodies: { default: '{}', email: '', https: '{}' },
    },
    scanId,
    scanSeq,
    since,
  });
  const stamp = {
    cluster: { account: '111122223333', region: 'eu-west-1', name: 'prod' },
    scanId: 'msg-1',
    scanSeq: 5,
    at: '2026-11-01T00:01:00.000Z',
  };

  it('takes over what an earlier attempt of the same scan left pending', () => {
    expect(adoptablePending([pending('msg-1', 4)], stamp)).toHaveLength(1);
  });

  it('leaves a publish pending of another scan that may still run, or its own', () => {
    expect(adoptablePending([pending('event-7', 4), pending('msg-1', 5)], stamp)).toEqual([]);
  });

  it('takes over any pending publish whose lease has run out', () => {
    const late = {
      ...stamp,
      at: new Date(Date.parse(T0) + DEFAULT_PENDING_LEASE_MS).toISOString(),
    };
    expect(adoptablePending([pending('event-7', 9)], late)).toHaveLength(1);
    expect(adoptablePending([pending('event-7', 9)], stamp, 60_000)).toHaveLength(1);
  });
});
