import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Check, defineCheck, type FindingDraft } from '../../lambda/core/check.js';
import { controllerCanPassNodeRole } from '../../lambda/core/checks/controller-can-pass-node-role.js';
import { controllerRoleFound } from '../../lambda/core/checks/controller-role-found.js';
import { karpenterVersionSupported } from '../../lambda/core/checks/karpenter-version-supported.js';
import { scannerCanReadCluster } from '../../lambda/core/checks/scanner-can-read-cluster.js';
import { runChecks } from '../../lambda/core/evaluate.js';
import { unavailable } from '../../lambda/core/facts/slice.js';
import {
  applyChanges,
  diffFindings,
  type FindingState,
  type LifecycleDiff,
} from '../../lambda/core/lifecycle.js';
import type { Finding, ReadFault, ResourceRef } from '../../lambda/core/model.js';
import { aFinding, aStoredState } from '../support/findings.js';
import {
  aCluster,
  aClusterState,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  withSimulations,
} from '../support/permission-builders.js';

const T0 = '2026-11-01T00:00:00.000Z';
const LATER = new Date('2026-11-03T00:00:00Z');
const scope = { clusters: ['prod'] };
const FAULT: ReadFault = { reason: 'unknown', input: 'the Karpenter controller Deployment' };

/** Ids of every stored state the diff writes or notifies. */
function written(diff: LifecycleDiff): string[] {
  return [
    ...diff.changes.map((change) => change.next.id),
    ...diff.silenced.map((close) => close.next.id),
    ...diff.touched.map((state) => state.id),
  ];
}

describe('diffFindings: a read fault is never a verdict', () => {
  const clusterDefect = aFinding({
    checkId: 'karpenter-version-supported',
    id: 'kvs-cluster',
    severity: 'medium',
    resource: { kind: 'Cluster', name: 'prod' },
  });
  const passRole = aFinding({
    checkId: 'controller-can-pass-node-role',
    resource: { name: 'gpu' },
    severity: 'critical',
  });

  it('keeps a Cluster-scoped failure when the check only has per-NodeClass read-fault follow-ons', () => {
    // Prepare: the reproduced case; the version is unknown on this scan
    const stored = [aStoredState(clusterDefect, T0)];
    const faulty = ['default', 'gpu'].map((name) =>
      aFinding({
        checkId: 'karpenter-version-supported',
        status: 'error',
        resource: { name },
        causedBy: 'scanner-root',
        readFault: FAULT,
      })
    );
    // Act
    const during = diffFindings({ stored, findings: faulty, scope, now: LATER });
    const after = diffFindings({
      stored: applyChanges(stored, [...during.changes, ...during.silenced]),
      findings: [clusterDefect],
      scope,
      now: LATER,
    });
    // Assess: nothing during, and the clean scan finds it still open (no NEW, firstSeen kept)
    expect(written(during)).toEqual([]);
    expect(after.changes.filter((change) => change.kind !== 'reminder')).toEqual([]);
    expect(after.changes.every((change) => change.next.firstSeen === T0)).toBe(true);
  });

  it('keeps an open failure whose finding is now a read-fault follow-on, and sends nothing after', () => {
    // Prepare: the other reproduced case; the follow-on inherited the root's read fault
    const stored = [aStoredState(passRole, T0, { materialHash: passRole.materialHash })];
    const followOn = {
      ...passRole,
      status: 'error' as const,
      causedBy: 'role-root',
      readFault: FAULT,
    };
    // Act
    const during = diffFindings({ stored, findings: [followOn], scope, now: new Date(T0) });
    const kept = applyChanges(stored, [...during.changes, ...during.silenced]);
    const after = diffFindings({ stored: kept, findings: [passRole], scope, now: new Date(T0) });
    // Assess
    expect(written(during)).toEqual([]);
    expect(kept).toEqual(stored);
    expect(written(after)).toEqual([]);
  });

  it('closes a follow-on of a real failure silently, as before', () => {
    const stored = [aStoredState(passRole, T0)];
    const followOn = { ...passRole, status: 'error' as const, causedBy: 'real-failure' };
    const diff = diffFindings({ stored, findings: [followOn], scope, now: LATER });
    expect(diff.silenced.map((close) => close.next.id)).toEqual([passRole.id]);
  });

  it('opens nothing for a read fault, even of a state resolved before', () => {
    const fault = aFinding({ status: 'error', readFault: FAULT });
    const resolved = aStoredState(fault, T0, { status: 'resolved', resolvedAt: T0 });
    expect(diffFindings({ stored: [], findings: [fault], scope, now: LATER }).changes).toEqual([]);
    expect(
      written(diffFindings({ stored: [resolved], findings: [fault], scope, now: LATER }))
    ).toEqual([]);
  });

  it('announces no suppression and no reminder for a state whose finding is a read fault', () => {
    const stored = [aStoredState(passRole, T0)];
    const suppressedFault: Finding = {
      ...passRole,
      status: 'suppressed',
      suppression: { reason: 'accepted', source: 'config', status: 'error' },
      readFault: FAULT,
    };
    const diff = diffFindings({ stored, findings: [suppressedFault], scope, now: LATER });
    expect(written(diff)).toEqual([]);
  });

  it('keeps every state of a check on a cluster whose Cluster-scoped read fault covers them', () => {
    const stored = [aStoredState(passRole, T0)];
    const clusterFault = aFinding({
      checkId: 'controller-can-pass-node-role',
      id: 'cluster-fault',
      status: 'error',
      resource: { kind: 'Cluster', name: 'prod' },
      readFault: FAULT,
    });
    const diff = diffFindings({ stored, findings: [clusterFault], scope, now: LATER });
    expect(written(diff)).toEqual([]);
  });

  it('still resolves what passes when the read fault is on another resource', () => {
    const stored = [aStoredState(passRole, T0)];
    const elsewhere = aFinding({
      checkId: 'controller-can-pass-node-role',
      status: 'error',
      resource: { name: 'default' },
      readFault: FAULT,
    });
    const diff = diffFindings({
      stored,
      findings: [elsewhere, { ...passRole, status: 'pass' }],
      scope,
      now: LATER,
    });
    expect(diff.changes.map((change) => `${change.kind}:${change.next.id}`)).toEqual([
      `resolved:${passRole.id}`,
    ]);
  });
});

describe('diffFindings property: no change for a finding whose inputs failed', () => {
  const CHECKS = ['check-a', 'check-b'] as const;
  const RESOURCES: readonly ResourceRef[] = [
    { cluster: 'prod', kind: 'Cluster', name: 'prod' },
    { cluster: 'prod', kind: 'EC2NodeClass', name: 'a' },
    { cluster: 'prod', kind: 'EC2NodeClass', name: 'b' },
    { cluster: 'prod', kind: 'NodePool', name: 'p' },
  ];
  const OUTCOMES = [
    'absent',
    'pass',
    'notice',
    'fail',
    'error',
    'fault',
    'fault-follow-on',
    'fault-suppressed',
    'follow-on',
    'suppressed',
  ] as const;
  type Outcome = (typeof OUTCOMES)[number];
  const slots = CHECKS.flatMap((checkId) => RESOURCES.map((resource) => ({ checkId, resource })));
  const idOf = (slot: (typeof slots)[number]) =>
    `${slot.checkId}/${slot.resource.kind}/${slot.resource.name}`;

  const slotArbitrary = fc.record({
    stored: fc.option(
      fc.record({
        status: fc.constantFrom('open' as const, 'resolved' as const),
        findingStatus: fc.constantFrom('fail' as const, 'error' as const),
        severity: fc.constantFrom('critical' as const, 'low' as const),
        hash: fc.constantFrom('h1', 'h2'),
        lastNotified: fc.constantFrom(T0, '2026-11-02T23:30:00.000Z'),
      }),
      { nil: undefined }
    ),
    outcome: fc.constantFrom(...OUTCOMES),
    /** A second finding of the check on the resource (another discriminator) that is a read fault. */
    siblingFault: fc.boolean(),
    severity: fc.constantFrom('critical' as const, 'low' as const),
    hash: fc.constantFrom('h1', 'h2'),
  });

  function findingOf(
    id: string,
    slot: (typeof slots)[number],
    outcome: Outcome,
    extra: {
      severity: 'critical' | 'low';
      hash: string;
    }
  ): Finding | undefined {
    if (outcome === 'absent') return undefined;
    const base = aFinding({
      id,
      checkId: slot.checkId,
      resource: slot.resource,
      severity: extra.severity,
      materialHash: extra.hash,
    });
    switch (outcome) {
      case 'pass':
      case 'notice':
      case 'fail':
      case 'error':
        return { ...base, status: outcome };
      case 'fault':
        return { ...base, status: 'error', readFault: FAULT };
      case 'fault-follow-on':
        return { ...base, status: 'error', causedBy: 'root', readFault: FAULT };
      case 'fault-suppressed':
        return {
          ...base,
          status: 'suppressed',
          suppression: { reason: 'r', source: 'config', status: 'error' },
          readFault: FAULT,
        };
      case 'follow-on':
        return { ...base, status: 'error', causedBy: 'root' };
      case 'suppressed':
        return {
          ...base,
          status: 'suppressed',
          suppression: { reason: 'r', source: 'config', status: 'fail' },
        };
    }
  }

  it('emits no change, silent close or touch for a stored state a read fault covers, and acts on what was read', () => {
    const checked = { resolved: 0, new: 0 };
    fc.assert(
      fc.property(
        fc.array(slotArbitrary, { minLength: slots.length, maxLength: slots.length }),
        (generated) => {
          const stored: FindingState[] = [];
          const findings: Finding[] = [];
          slots.forEach((slot, index) => {
            const pick = generated[index];
            if (pick === undefined) return;
            const id = idOf(slot);
            if (pick.stored) {
              stored.push({
                ...aStoredState(
                  aFinding({ id, checkId: slot.checkId, resource: slot.resource }),
                  T0
                ),
                status: pick.stored.status,
                findingStatus: pick.stored.findingStatus,
                severity: pick.stored.severity,
                materialHash: pick.stored.hash,
                lastNotified: pick.stored.lastNotified,
              });
            }
            const finding = findingOf(id, slot, pick.outcome, pick);
            if (finding) findings.push(finding);
            if (pick.siblingFault) {
              findings.push(
                aFinding({
                  id: `${id}#sibling`,
                  checkId: slot.checkId,
                  resource: slot.resource,
                  status: 'error',
                  readFault: FAULT,
                })
              );
            }
          });
          // The rule, restated independently of the implementation.
          const faults = findings.filter((finding) => finding.readFault !== undefined);
          const byId = new Map(findings.map((finding) => [finding.id, finding]));
          /** A read fault of the check could have hidden something on `resource`. */
          const faultReaches = (checkId: string, resource: ResourceRef): boolean =>
            faults.some(
              (fault) =>
                fault.checkId === checkId &&
                (fault.resource.name === resource.name && fault.resource.kind === resource.kind
                  ? true
                  : resource.kind === 'Cluster' || fault.resource.kind === 'Cluster')
            );
          const covered = (state: FindingState): boolean => {
            const finding = byId.get(state.id);
            if (finding?.readFault) return true;
            const quiet =
              finding === undefined ||
              ['pass', 'not-applicable', 'notice'].includes(finding.status);
            return quiet && faultReaches(state.checkId, state.resource);
          };
          const diff = diffFindings({ stored, findings, scope, now: LATER });
          const touchedIds = new Set(written(diff));
          for (const state of stored) {
            if (covered(state)) expect(touchedIds.has(state.id), state.id).toBe(false);
          }
          // A read fault never opens anything, and nothing it covers changes state.
          for (const change of diff.changes) expect(change.finding?.readFault).toBeUndefined();
          const after = new Map(
            applyChanges(stored, [...diff.changes, ...diff.silenced]).map((state) => [
              state.id,
              state,
            ])
          );
          for (const state of stored)
            if (covered(state)) expect(after.get(state.id)).toEqual(state);
          // The converse, so that a diff emitting nothing fails: with every input read, a stored
          // open failure that now passes (or is gone) is resolved, and a failure with no open
          // state is new.
          const kindOf = new Map(diff.changes.map((change) => [change.next.id, change.kind]));
          for (const state of stored) {
            const finding = byId.get(state.id);
            const fixed = finding === undefined || finding.status === 'pass';
            if (state.status !== 'open' || !fixed || faultReaches(state.checkId, state.resource))
              continue;
            expect(kindOf.get(state.id), state.id).toBe('resolved');
            checked.resolved += 1;
          }
          const openIds = new Set(
            stored.filter((state) => state.status === 'open').map((state) => state.id)
          );
          for (const finding of findings) {
            const failing =
              (finding.status === 'fail' || finding.status === 'error') &&
              finding.readFault === undefined &&
              finding.causedBy === undefined;
            if (
              !failing ||
              openIds.has(finding.id) ||
              faultReaches(finding.checkId, finding.resource)
            )
              continue;
            expect(kindOf.get(finding.id), finding.id).toBe('new');
            checked.new += 1;
          }
        }
      ),
      { numRuns: 300 }
    );
    // Both cases are reached (about 25 and 30 times in 300 runs), so the converse is exercised.
    expect(checked.resolved).toBeGreaterThanOrEqual(5);
    expect(checked.new).toBeGreaterThanOrEqual(5);
  });
});

describe('runChecks: read faults through the engine', () => {
  const now = new Date(T0);
  /** The controller Deployment list failed once (HTTP 500): version and role are unknown. */
  function faultyInventory() {
    const cluster = aCluster({
      state: {
        ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
        controller: unavailable('unknown', 'HTTP 500 listing deployments'),
      },
    });
    const { karpenterVersion: _dropped, ...withoutVersion } = cluster;
    return withSimulations(aPermissionsInventory({ clusters: [withoutVersion] }));
  }

  it('marks the unreadable controller, and every error that follows from it, as a read fault', () => {
    // Act
    const { findings } = runChecks(
      faultyInventory(),
      [
        scannerCanReadCluster,
        controllerRoleFound,
        controllerCanPassNodeRole,
        karpenterVersionSupported,
      ],
      { now }
    );
    // Assess
    const errors = findings.filter((finding) => finding.status === 'error');
    expect(errors.map((finding) => finding.checkId).sort()).toEqual(
      expect.arrayContaining([
        'controller-can-pass-node-role',
        'controller-role-found',
        'karpenter-version-supported',
        'scanner-can-read-cluster',
      ])
    );
    for (const finding of errors) expect(finding.readFault, finding.id).toBeDefined();
    expect(findings.filter((finding) => finding.status === 'fail')).toEqual([]);
  });
});

describe('runChecks: follow-ons inherit a read fault', () => {
  const resource: ResourceRef = { cluster: 'prod', kind: 'EC2NodeClass', name: 'a' };
  const fake = (id: string, drafts: readonly FindingDraft[]): Check =>
    defineCheck({
      id,
      title: id,
      group: 'aws',
      severity: 'high',
      inputs: [],
      rationale: '',
      remediation: '',
      references: [],
      material: [],
      evaluate: () => drafts,
    });
  const inventory = aPermissionsInventory({ inputs: new Set() });
  const run = (rootFault: ReadFault | undefined, followOnStatus: 'error' | 'fail') =>
    runChecks(
      inventory,
      [
        fake('root', [{ status: 'error', resource, message: 'root', readFault: rootFault }]),
        fake('middle', [
          { status: 'error', resource, message: 'm', causedBy: { checkId: 'root' } },
        ]),
        fake('leaf', [
          { status: followOnStatus, resource, message: 'l', causedBy: { checkId: 'middle' } },
        ]),
      ],
      { now: new Date(T0) }
    ).findings;

  it('passes the root read fault down a chain of errors, never to a fail or from a non-fault', () => {
    const chained = run(FAULT, 'error');
    expect(chained.map((finding) => finding.readFault)).toEqual([FAULT, FAULT, FAULT]);
    expect(run(FAULT, 'fail')[2]?.readFault).toBeUndefined();
    expect(run(undefined, 'error').map((finding) => finding.readFault)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });
});
