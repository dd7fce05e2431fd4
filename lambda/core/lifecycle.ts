// Finding lifecycle: the pure diff between stored finding state and a new scan. It decides what is
// worth telling someone (new, changed, resolved, suppressed, reminder) so a finding alerts once per
// change, not
// on every run (Cloud Custodian's most common complaint,
// https://github.com/cloud-custodian/cloud-custodian/issues/6530).
import type { ClusterIdentity } from './cluster-identity.js';
import { changeBetween } from './material.js';
import type { Finding, ResourceRef, Severity } from './model.js';
import { SEVERITIES } from './model.js';
import type { OutgoingMessage } from './notify/outgoing-message.js';

export const CHANGE_KINDS = ['new', 'changed', 'resolved', 'suppressed', 'reminder'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** Finding statuses that are tracked and notified: a failure, or a check that could not look. */
export type OpenFindingStatus = 'fail' | 'error';

const DEFAULT_REMINDER_INTERVAL_MS = 24 * 60 * 60 * 1000;
/** Unchanged open findings get `lastSeen` refreshed at most this often (saves one write per scan). */
const DEFAULT_TOUCH_INTERVAL_MS = 60 * 60 * 1000;

/** What the store remembers about one finding id. Times are ISO-8601 strings. */
export interface FindingState {
  readonly id: string;
  readonly checkId: string;
  readonly resource: ResourceRef;
  readonly status: 'open' | 'resolved';
  /** The finding status last confirmed while open. */
  readonly findingStatus: OpenFindingStatus;
  readonly severity: Severity;
  readonly message: string;
  /** The finding's material hash when last notified (absent on states stored before hashes). */
  readonly materialHash?: string;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly lastNotified?: string;
  readonly resolvedAt?: string;
  /** Bumped by every notifying transition; the store writes conditionally on it. */
  readonly revision: number;
}

export interface LifecycleChange {
  readonly kind: ChangeKind;
  /** The state to store; its `revision` is `previous.revision + 1` (or 1). */
  readonly next: FindingState;
  /** The stored state this change replaces; absent for a first sighting. */
  readonly previous?: FindingState;
  /** The finding from this scan (absent when resolved because the resource is gone). */
  readonly finding?: Finding;
  /** Findings of this scan that could not be evaluated because of this one (`causedBy`). */
  readonly followOns?: readonly Finding[];
}

/**
 * A stored open finding closed without a notification, because it is now a follow-on of another
 * finding, or a notice that an earlier version stored as a failure (`isStoredNotice`). Stored as
 * resolved, so it alerts as new once it stands on its own again. (One that became suppressed is
 * closed with a `suppressed` change, which notifies: a suppression never goes unseen.)
 */
export interface SilentClose {
  readonly next: FindingState;
  readonly previous: FindingState;
  readonly finding: Finding;
}

/** Which resources a scan looked at: stored findings outside it are left alone. */
export interface DiffScope {
  readonly clusters: readonly string[];
  /** Set for event-driven rescans restricted to some NodeClasses. */
  readonly nodeClasses?: readonly { readonly cluster: string; readonly name: string }[];
  /** With `nodeClasses`: the NodePools launching through them, re-evaluated with them. */
  readonly nodePools?: readonly { readonly cluster: string; readonly name: string }[];
}

export interface DiffInput {
  readonly stored: readonly FindingState[];
  readonly findings: readonly Finding[];
  readonly scope: DiffScope;
  /** Clusters whose objects could not be read: nothing there is resolved ("gone" is unknowable). */
  readonly unreadClusters?: readonly string[];
  /** Clusters whose NodePools could not be read: none of their NodePool findings is resolved. */
  readonly unreadNodePools?: readonly string[];
  readonly now: Date;
  readonly reminderIntervalMs?: number;
  readonly touchIntervalMs?: number;
}

export interface LifecycleDiff {
  /** Transitions to write conditionally and then notify, in a stable order. */
  readonly changes: readonly LifecycleChange[];
  /**
   * Unchanged open findings refreshed without a notification: `lastSeen`, and the material hash of
   * a state stored before hashes existed.
   */
  readonly touched: readonly FindingState[];
  /** Stored open findings now follow-ons or notices: written as resolved, never notified. */
  readonly silenced: readonly SilentClose[];
}

function isOpenStatus(status: Finding['status']): status is OpenFindingStatus {
  return status === 'fail' || status === 'error';
}

/** Suppressed findings and follow-ons of another finding never alert and never count as open. */
function isQuiet(finding: Pick<Finding, 'status' | 'causedBy'>): boolean {
  return finding.status === 'suppressed' || finding.causedBy !== undefined;
}

/**
 * A stored open state that is the same finding as this `notice`, stored as a failure by a version
 * that reported notices as `fail` (the 412 dry-run notice was an info `fail`): same id, stored as
 * `fail`, same severity. Closing it is no news, so it is closed silently. A stored failure of
 * another severity was a real problem that is now only a notice (a critical pending AMI once
 * Karpenter is upgraded): that one is resolved, and says so.
 */
function isStoredNotice(previous: FindingState, finding: Finding): boolean {
  return (
    finding.status === 'notice' &&
    previous.findingStatus === 'fail' &&
    previous.severity === finding.severity
  );
}

/** The check could not look: an `error`, also when it is suppressed or a follow-on. */
function couldNotLook(finding: Finding): boolean {
  return finding.status === 'error' || finding.suppression?.status === 'error';
}

function inScope(scope: DiffScope, resource: ResourceRef): boolean {
  if (!scope.clusters.includes(resource.cluster)) return false;
  if (scope.nodeClasses === undefined) return true;
  const listed =
    resource.kind === 'EC2NodeClass'
      ? scope.nodeClasses
      : resource.kind === 'NodePool'
        ? (scope.nodePools ?? [])
        : [];
  return listed.some(
    (target) => target.cluster === resource.cluster && target.name === resource.name
  );
}

function resourceKey(checkId: string, resource: ResourceRef): string {
  return [checkId, resource.cluster, resource.kind, resource.name].join('\u0000');
}

/**
 * Keys of (check, resource) pairs whose input errored in this scan, plus checks that crashed
 * outright (resource name `*`): a stored failure under one of them cannot be called resolved.
 */
function erroredInputs(findings: readonly Finding[]): {
  pairs: Set<string>;
  crashedChecks: Set<string>;
} {
  const pairs = new Set<string>();
  const crashedChecks = new Set<string>();
  for (const finding of findings) {
    if (!couldNotLook(finding)) continue;
    pairs.add(resourceKey(finding.checkId, finding.resource));
    if (finding.resource.name === '*') crashedChecks.add(finding.checkId);
  }
  return { pairs, crashedChecks };
}

/** Where this scan's read faults are, per check (`Finding.readFault`). */
interface ReadFaults {
  /** Check and resource of every read fault. */
  readonly resources: Set<string>;
  /** Check and cluster of every read fault, whatever its resource. */
  readonly clusters: Set<string>;
  /** Check and cluster of read faults on the Cluster itself. */
  readonly onClusters: Set<string>;
}

function clusterKey(checkId: string, cluster: string): string {
  return `${checkId}\u0000${cluster}`;
}

function readFaultsOf(findings: Iterable<Finding>): ReadFaults {
  const faults: ReadFaults = { resources: new Set(), clusters: new Set(), onClusters: new Set() };
  for (const finding of findings) {
    if (finding.readFault === undefined) continue;
    const { checkId, resource } = finding;
    faults.resources.add(resourceKey(checkId, resource));
    faults.clusters.add(clusterKey(checkId, resource.cluster));
    if (resource.kind === 'Cluster') faults.onClusters.add(clusterKey(checkId, resource.cluster));
  }
  return faults;
}

/** Statuses that are a verdict of "nothing to report": what a read fault could have caused. */
function isQuietVerdict(finding: Finding | undefined): boolean {
  return (
    finding === undefined ||
    finding.status === 'pass' ||
    finding.status === 'not-applicable' ||
    finding.status === 'notice'
  );
}

/**
 * A stored state this scan cannot judge, so it is kept exactly as stored: its finding is a read
 * fault, or its finding is absent or quiet while a read fault of the same check covers it (on the
 * same resource; anywhere in the cluster for a Cluster-scoped state, whose verdict depends on
 * every object; or on the cluster itself, which covers all of the check's states there).
 */
function isKeptByReadFault(
  faults: ReadFaults,
  previous: FindingState,
  finding: Finding | undefined
): boolean {
  if (finding?.readFault !== undefined) return true;
  if (!isQuietVerdict(finding)) return false;
  const { checkId, resource } = previous;
  return (
    faults.resources.has(resourceKey(checkId, resource)) ||
    faults.onClusters.has(clusterKey(checkId, resource.cluster)) ||
    (resource.kind === 'Cluster' && faults.clusters.has(clusterKey(checkId, resource.cluster)))
  );
}

function elapsedMs(from: string | undefined, now: Date): number {
  if (from === undefined) return Number.POSITIVE_INFINITY;
  const then = Date.parse(from);
  return Number.isNaN(then) ? Number.POSITIVE_INFINITY : now.getTime() - then;
}

function openState(finding: Finding, now: string, previous?: FindingState): FindingState {
  const reopened = previous === undefined || previous.status === 'resolved';
  return {
    id: finding.id,
    checkId: finding.checkId,
    resource: finding.resource,
    status: 'open',
    findingStatus: finding.status === 'error' ? 'error' : 'fail',
    severity: finding.severity,
    message: finding.message,
    materialHash: finding.materialHash,
    firstSeen: reopened ? now : previous.firstSeen,
    lastSeen: now,
    lastNotified: now,
    revision: (previous?.revision ?? 0) + 1,
  };
}

/** Current follow-on findings (that would alert on their own) per root finding id. */
function followOnsByRoot(findings: Iterable<Finding>): Map<string, Finding[]> {
  const byRoot = new Map<string, Finding[]>();
  for (const finding of findings) {
    if (finding.causedBy === undefined || !isOpenStatus(finding.status)) continue;
    byRoot.set(finding.causedBy, [...(byRoot.get(finding.causedBy) ?? []), finding]);
  }
  return byRoot;
}

/**
 * Diffs stored state against a new scan. First rule, before any other: a read fault is never a
 * verdict. A stored state is kept exactly as stored (no change, no silent close, no touch) when
 * its finding in this scan is a read fault (`readFault`: an `error` because an input could not be
 * read; root or follow-on, suppressed or not), or when its finding is absent, passing,
 * not-applicable or a notice while a read fault of the same check covers it: on the same
 * resource; anywhere in the cluster when the stored state is Cluster-scoped; on the cluster itself
 * for any of the check's states there (`isKeptByReadFault`). A read fault with no open state
 * opens nothing: persistent faults are the `SourceErrors` alarm's. Then:
 * - `new`: an open finding with no stored state, or whose stored state is resolved (reopened);
 * - `changed`: still open with other material facts (`changeBetween`: status, severity, the
 *   evidence its check declares material), never for a re-worded message alone;
 * - `resolved`: stored open, in scope, and now passing, a notice (of another severity) or gone —
 *   unless kept by a read fault, or its input errored (the same id now `error`, an `error` for the
 *   same check and resource, a crashed check, an unread cluster or unread NodePools);
 * - `suppressed`: stored open, and now accepted by an annotation or an ignore rule: closed (stored
 *   as resolved) with one notification saying who suppressed it and why, so whoever can edit a
 *   NodeClass cannot close an alert without a trace. When the suppression is removed or expires
 *   and the finding still fails, it is `new` again;
 * - `reminder`: unchanged and last notified at least `reminderIntervalMs` ago.
 * A stored failure that now errors stays open and silent: "could not look" is not "fixed".
 * Suppressed findings and follow-ons (`causedBy`) never alert on their own: a stored open follow-on
 * of a real failure is closed silently (`silenced`), and an `error` among them still blocks
 * resolving its check's failures.
 * Notices are never stored, alerted or reminded; a stored failure that was the notice itself (an
 * earlier version's state, `isStoredNotice`) is closed silently too.
 */
export function diffFindings(input: DiffInput): LifecycleDiff {
  const now = input.now.toISOString();
  const reminderInterval = input.reminderIntervalMs ?? DEFAULT_REMINDER_INTERVAL_MS;
  const touchInterval = input.touchIntervalMs ?? DEFAULT_TOUCH_INTERVAL_MS;
  const unread = new Set(input.unreadClusters ?? []);
  const unreadPools = new Set(input.unreadNodePools ?? []);
  const storedById = new Map(input.stored.map((state) => [state.id, state]));
  const current = new Map<string, Finding>();
  for (const finding of input.findings) {
    if (inScope(input.scope, finding.resource) && !current.has(finding.id)) {
      current.set(finding.id, finding);
    }
  }
  const errored = erroredInputs([...current.values()]);
  const faults = readFaultsOf(current.values());
  const followOns = followOnsByRoot(current.values());
  const withFollowOns = (id: string) => {
    const list = followOns.get(id);
    return list === undefined ? {} : { followOns: list };
  };
  const changes: LifecycleChange[] = [];
  const touched: FindingState[] = [];
  const silenced: SilentClose[] = [];

  for (const finding of current.values()) {
    const previous = storedById.get(finding.id);
    // A read fault opens nothing, and whatever is stored stays as it is.
    if (finding.readFault !== undefined) continue;
    if (previous?.status === 'open' && isKeptByReadFault(faults, previous, finding)) continue;
    if (finding.status === 'suppressed' && previous?.status === 'open') {
      changes.push({
        kind: 'suppressed',
        next: { ...closedState(previous, now), lastNotified: now },
        previous,
        finding,
      });
      continue;
    }
    if (isQuiet(finding) || (previous !== undefined && isStoredNotice(previous, finding))) {
      if (previous?.status === 'open') {
        silenced.push({ next: closedState(previous, now), previous, finding });
      }
      continue;
    }
    if (!isOpenStatus(finding.status)) continue;
    if (previous === undefined || previous.status === 'resolved') {
      changes.push({
        kind: 'new',
        next: openState(finding, now, previous),
        finding,
        ...(previous ? { previous } : {}),
        ...withFollowOns(finding.id),
      });
      continue;
    }
    if (finding.status === 'error' && previous.findingStatus === 'fail') continue;
    const verdict = changeBetween(
      {
        severity: previous.severity,
        status: previous.findingStatus,
        ...(previous.materialHash === undefined ? {} : { materialHash: previous.materialHash }),
      },
      finding
    );
    if (verdict === 'changed') {
      changes.push({
        kind: 'changed',
        next: openState(finding, now, previous),
        previous,
        finding,
        ...withFollowOns(finding.id),
      });
    } else if (
      elapsedMs(previous.lastNotified ?? previous.firstSeen, input.now) >= reminderInterval
    ) {
      changes.push({
        kind: 'reminder',
        next: openState(finding, now, previous),
        previous,
        finding,
        ...withFollowOns(finding.id),
      });
    } else if (
      previous.materialHash === undefined ||
      elapsedMs(previous.lastSeen, input.now) >= touchInterval
    ) {
      // A state stored before hashes gets this scan's hash, silently, so the next change is
      // judged on material facts (and the first scan after an upgrade sends nothing).
      touched.push({ ...previous, lastSeen: now, materialHash: finding.materialHash });
    }
  }

  for (const previous of input.stored) {
    if (previous.status !== 'open' || !inScope(input.scope, previous.resource)) continue;
    const finding = current.get(previous.id);
    if (
      finding !== undefined &&
      (isOpenStatus(finding.status) || isQuiet(finding) || isStoredNotice(previous, finding))
    )
      continue;
    const blocked =
      isKeptByReadFault(faults, previous, finding) ||
      unread.has(previous.resource.cluster) ||
      (previous.resource.kind === 'NodePool' && unreadPools.has(previous.resource.cluster)) ||
      errored.crashedChecks.has(previous.checkId) ||
      errored.pairs.has(resourceKey(previous.checkId, previous.resource));
    if (blocked) continue;
    changes.push({
      kind: 'resolved',
      next: {
        ...previous,
        status: 'resolved',
        lastSeen: now,
        lastNotified: now,
        resolvedAt: now,
        revision: previous.revision + 1,
      },
      previous,
      ...(finding ? { finding } : {}),
    });
  }

  return { changes: changes.sort(compareChanges), touched, silenced };
}

/** A stored open state closed without notifying (`lastNotified` stays). */
function closedState(previous: FindingState, now: string): FindingState {
  return {
    ...previous,
    status: 'resolved',
    lastSeen: now,
    resolvedAt: now,
    revision: previous.revision + 1,
  };
}

const KIND_ORDER: Readonly<Record<ChangeKind, number>> = {
  new: 0,
  changed: 1,
  resolved: 2,
  suppressed: 3,
  reminder: 4,
};

function compareChanges(a: LifecycleChange, b: LifecycleChange): number {
  return (
    KIND_ORDER[a.kind] - KIND_ORDER[b.kind] ||
    SEVERITIES.indexOf(a.next.severity) - SEVERITIES.indexOf(b.next.severity) ||
    a.next.id.localeCompare(b.next.id)
  );
}

/** The stored states after applying the changes (and silent closes) that were written. */
export function applyChanges(
  stored: readonly FindingState[],
  applied: readonly { readonly next: FindingState }[]
): FindingState[] {
  const byId = new Map(stored.map((state) => [state.id, state]));
  for (const change of applied) byId.set(change.next.id, change.next);
  return [...byId.values()];
}

/** Open findings per severity, every severity present (zero included) for steady metrics. */
export function openBySeverity(states: readonly FindingState[]): Record<Severity, number> {
  const counts = Object.fromEntries(SEVERITIES.map((severity) => [severity, 0])) as Record<
    Severity,
    number
  >;
  for (const state of states) if (state.status === 'open') counts[state.severity] += 1;
  return counts;
}

/**
 * The scan that writes: `scanSeq` is taken from the cluster's counter before the cluster is read,
 * so a higher number means a fresher view. `at` is the scan's start (ISO). `cluster` is the
 * cluster scanned: its states are stored under its identity (account, region and name), never
 * under its name alone, so same-named clusters of two regions never share state.
 */
export interface ScanStamp {
  readonly cluster: ClusterIdentity;
  readonly scanId: string;
  readonly scanSeq: number;
  readonly at: string;
}

/**
 * A claimed change whose notification is not known to be published yet. It lives on the claimed
 * item until a publish succeeds, so a scan that dies between claim and publish loses nothing.
 */
export interface PendingPublish {
  readonly kind: ChangeKind;
  /** The claimed state (its revision is the claim's). */
  readonly state: FindingState;
  readonly message: OutgoingMessage;
  /** The scan that owns the publish, and when it took it (ISO). */
  readonly scanId: string;
  readonly scanSeq: number;
  readonly since: string;
}

/** A cluster's stored finding states, and the claims among them still waiting to be published. */
export interface StoredFindings {
  readonly states: readonly FindingState[];
  readonly pending: readonly PendingPublish[];
}

/**
 * How long a pending publish belongs to the scan that claimed it. Lambda stops every invocation
 * within 15 minutes, so after that its owner is gone for sure.
 */
export const DEFAULT_PENDING_LEASE_MS = 15 * 60 * 1000;

/**
 * The pending publishes a scan may take over: those of an earlier attempt of the same scan (a
 * redelivery runs only after that attempt ended), and any whose lease has run out. A pending
 * publish of another scan that may still be running is left to it: taking it could send twice.
 */
export function adoptablePending(
  pending: readonly PendingPublish[],
  stamp: ScanStamp,
  leaseMs: number = DEFAULT_PENDING_LEASE_MS
): PendingPublish[] {
  const now = new Date(stamp.at);
  return pending.filter(
    (item) =>
      (item.scanId === stamp.scanId && item.scanSeq < stamp.scanSeq) ||
      elapsedMs(item.since, now) >= leaseMs
  );
}
