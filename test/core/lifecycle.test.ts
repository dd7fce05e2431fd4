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
import { aFinding, aStoredState } from '../support/findings.js';

const T0 = '2026-11-01T00:00:00.000Z';
const at = (iso: string) => new Date(iso);
const scope = { clusters: ['prod'] };

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
    const stored = [aStoredState(finding, T0)];
    const diff = diffFindings({
      stored,
      findings: [finding],
      scope,
      now: at('2026-11-01T02:00:00Z'),
    });
    expect(diff.changes).toEqual([]);
    expect(diff.touched).toEqual([{ ...stored[0], lastSeen: '2026-11-01T02:00:00.000Z' }]);
  });

  it('reports changed when the severity or the message changes, keeping firstSeen', () => {
    const finding = aFinding();
    const stored = [aStoredState(finding, T0)];
    const severityChanged = diffFindings({
      stored,
      findings: [{ ...finding, severity: 'high' }],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    const messageChanged = diffFindings({
      stored,
      findings: [{ ...finding, message: 'Another reason.' }],
      scope,
      now: at('2026-11-01T01:00:00Z'),
    });
    expect(severityChanged.changes.map((c) => c.kind)).toEqual(['changed']);
    expect(severityChanged.changes[0]?.next).toMatchObject({
      severity: 'high',
      firstSeen: T0,
      revision: 2,
    });
    expect(severityChanged.changes[0]?.previous).toEqual(stored[0]);
    expect(messageChanged.changes.map((c) => c.kind)).toEqual(['changed']);
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
  const stamp = { scanId: 'msg-1', scanSeq: 5, at: '2026-11-01T00:01:00.000Z' };

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
