// The service's use case: scan clusters (all of their NodeClasses, or only those an event can
// affect), diff the findings against stored state, claim each change with a conditional write,
// publish the claimed ones, and record metrics. Partial-failure policy: each cluster is scanned
// and published on its own, so one cluster throwing never stops the others.
//
// Batching: more than `alertBatchThreshold` changes of one cluster scan, or any change of a cluster
// with no stored state yet (its first scan), go out as ONE summary message. Every claim of the
// batch carries that same message, and messages are published once per id, so a summary is sent
// once however many claims (own or adopted) carry it. A `suppressed` change is never batched: it
// is always its own message, so a subscription filter on `change = suppressed` sees every one.
//
// Store calls of one cluster scan, in order (a fault from any of them on fails the scan, and the
// redelivery of the same scan finishes its work):
//   1. nextScanSeq  (before the cluster is read: the sequence orders overlapping scans)
//   2. loadFindings (with the claims still pending publish)
//   3. adopt        one per pending publish this scan may take over (`adoptablePending`)
//   4. latestScanSeq (a newer scan has started: this one is stale and writes no change)
//   5. claim        one per change, most severe first; each claim carries its rendered message
//      (a change an adopted summary already lists is claimed with that summary)
//      -- SNS publish of the adopted and claimed messages, each message id once --
//   6. clearPending the published ones (up to CLEAR_ATTEMPTS passes)
//   7. release      one per claim whose message SNS refused
//   8. close (silent closes of follow-on and notice findings), touch, then the NodeClass
//      index (loadIndex + batch write, or batch write)
//
// Items the store cannot hold (over DynamoDB's 400 KB) are found before step 1 writes anything
// else (`oversizedItems`): each becomes an `error` finding on its object, and the rest of the scan
// is stored and alerted (storage-limits.ts). A scan that fails anyway logs the cluster and, when a
// write of one object failed, that object.
import type { AnnotationSuppression } from '../core/annotation-policy.js';
import {
  indexEntriesOf,
  type NodeClassIndexEntry,
  type NodeClassRef,
} from '../core/event-index.js';
import type { IgnoreRule } from '../core/ignore-rules.js';
import { type Inventory, unavailableSources } from '../core/inventory.js';
import {
  adoptablePending,
  applyChanges,
  type DiffScope,
  diffFindings,
  type FindingState,
  type LifecycleChange,
  openBySeverity,
  type PendingPublish,
  type ScanStamp,
} from '../core/lifecycle.js';
import type { ResourceRef } from '../core/model.js';
import { renderDigest } from '../core/notify/digest.js';
import {
  type AlertLocation,
  type OutgoingMessage,
  renderChangeMessage,
} from '../core/notify/message.js';
import { renderSummary } from '../core/notify/summary.js';
import type { LoadedObjects, ObjectSource } from '../core/ports/objects.js';
import type {
  AppLogger,
  FindingStore,
  NotificationPublisher,
  ServiceMetrics,
} from '../core/ports/service.js';
import { applyStorageLimits, type OversizedItem } from '../core/storage-limits.js';
import { mapLimited } from '../shared/concurrency.js';
import { ItemTooLargeError } from '../shared/errors.js';
import { apiCallMeter } from './api-call-meter.js';
import { logFindingStates } from './finding-state-log.js';
import { deliverToSecurityHub, type SecurityHubSink } from './publish-security-hub.js';
import { collectInventory, evaluateInventory, type ScanPlan } from './run-scan.js';

/** Builds the plan that scans one cluster (live EKS + AWS in production). */
export type PlanFactory = (target: {
  readonly cluster: string;
  readonly region?: string;
}) => ScanPlan | Promise<ScanPlan>;

/** More changes than this in one cluster scan are sent as one summary message. */
const DEFAULT_ALERT_BATCH_THRESHOLD = 5;

export interface ScanSettings {
  readonly reminderIntervalMs: number;
  /** Config `ignore` rules (validated); annotations on the objects apply as well. */
  readonly ignore?: readonly IgnoreRule[];
  /** Whether annotations on the objects may suppress (the `annotationSuppression` setting). */
  readonly annotationSuppression?: AnnotationSuppression;
  readonly digest: 'on-change' | 'always' | 'never';
  /** How long a claim pending publish belongs to its scan (`DEFAULT_PENDING_LEASE_MS`). */
  readonly pendingLeaseMs?: number;
  /** More changes than this per cluster scan go out as one summary (`DEFAULT_ALERT_BATCH_THRESHOLD`). */
  readonly alertBatchThreshold?: number;
  /** The AWS account the clusters are in, named in every message. */
  readonly account?: string;
  /** The home region: the region of a cluster whose target names none. */
  readonly region?: string;
}

export interface ScanAndPublishDeps {
  readonly planFor: PlanFactory;
  readonly store: FindingStore;
  readonly publisher: NotificationPublisher;
  readonly metrics: ServiceMetrics;
  readonly logger: AppLogger;
  readonly clock: () => Date;
  readonly settings: ScanSettings;
  /** Total AWS calls so far (the SDK counter); the difference is reported as `AwsApiCalls`. */
  readonly apiCallCount?: () => number;
  /** Opt-in (`securityHub` setting): changes are imported into Security Hub before the claim. */
  readonly securityHub?: SecurityHubSink;
}

export interface ScanRequest {
  /** Unique per scan: names the digest and correlates logs. */
  readonly scanId: string;
  readonly trigger: string;
  readonly clusters: readonly { readonly cluster: string; readonly region?: string }[];
  /** Re-evaluate only these NodeClasses (event-driven); all of each cluster's otherwise. */
  readonly restrictTo?: readonly NodeClassRef[];
}

export interface ClusterOutcome {
  readonly cluster: string;
  readonly ok: boolean;
  readonly nodeClassesScanned: number;
  readonly changes: number;
  readonly published: number;
  /** A newer scan of the cluster started first: this one published only pending claims. */
  readonly superseded?: boolean;
  readonly error?: string;
}

export interface ScanResult {
  readonly outcomes: readonly ClusterOutcome[];
  readonly failedClusters: readonly string[];
}

const CLAIM_CONCURRENCY = 10;
/**
 * Passes over the pending marks of published messages. The SDK has retried each write already;
 * these extra passes exist because a mark left behind makes the next attempt send its message a
 * second time.
 */
const CLEAR_ATTEMPTS = 3;

/**
 * The plan with its NodeClasses narrowed to `names` before any enricher looks at them, and its
 * NodePools to those launching through one of them (a change to a class re-evaluates its
 * NodePools; the others would only miss their class in the narrowed view).
 */
function restrictPlan(plan: ScanPlan, names: readonly string[]): ScanPlan {
  const wanted = new Set(names);
  const objects: ObjectSource = {
    async load(): Promise<LoadedObjects> {
      const loaded = await plan.objects.load();
      return {
        ...loaded,
        nodeClasses: loaded.nodeClasses.filter((entry) => wanted.has(entry.name)),
        nodePools: loaded.nodePools.filter(
          (entry) =>
            entry.parsed.ok &&
            wanted.has(entry.parsed.value.spec.template?.spec?.nodeClassRef?.name ?? '')
        ),
      };
    },
  };
  return { ...plan, objects };
}

/** Clusters whose objects could not be read: nothing there may be called resolved. */
function unreadClusters(inventory: Inventory, cluster: string, inputErrors: number): string[] {
  const unread = inventory.clusters
    .filter((context) => context.state?.read.status === 'unavailable')
    .map((context) => context.name);
  return inputErrors > 0 ? [...unread, cluster] : unread;
}

/** Clusters whose NodePools could not be listed: their NodePools are unknown, not gone. */
function unreadNodePools(inventory: Inventory): string[] {
  return inventory.clusters
    .filter((context) => context.state?.nodePools?.status === 'unavailable')
    .map((context) => context.name);
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** A store write for one object failed: the failed scan's log names the object and the step. */
class ObjectWriteError extends Error {
  public readonly object: string;
  public readonly step: string;

  public constructor(resource: ResourceRef, step: string, cause: unknown) {
    super(`${step} of ${resource.kind}/${resource.name} failed`, { cause });
    this.name = 'ObjectWriteError';
    this.object = `${resource.kind}/${resource.name}`;
    this.step = step;
  }
}

async function forObject<T>(resource: ResourceRef, step: string, write: () => Promise<T>) {
  try {
    return await write();
  } catch (error) {
    throw new ObjectWriteError(resource, step, error);
  }
}

/** What the log of a failed scan says about the failure: the error, and the object if known. */
function failureOf(error: unknown): {
  error: string;
  object?: string;
  step?: string;
  item?: string;
} {
  const cause = error instanceof ObjectWriteError ? error.cause : error;
  return {
    error: errorText(cause),
    ...(error instanceof ObjectWriteError ? { object: error.object, step: error.step } : {}),
    ...(cause instanceof ItemTooLargeError ? { item: cause.item } : {}),
  };
}

function oversizedObject(item: OversizedItem): string {
  return item.item === 'nodeclass-index'
    ? `EC2NodeClass/${item.entry.name}`
    : `${item.finding.resource.kind}/${item.finding.resource.name}`;
}

interface ClusterRun {
  readonly outcome: ClusterOutcome;
  readonly published: readonly LifecycleChange[];
  /** Stored states after this scan's published changes. */
  readonly states: readonly FindingState[];
}

function defined<T>(value: T | undefined): value is T {
  return value !== undefined;
}

/**
 * Clears the pending marks of messages SNS accepted. This is the one step where exactly-once
 * cannot hold: if it fails after SNS took the messages, the redelivery publishes them again.
 * It runs right after the publish, for all messages in one pass, and is retried here.
 */
async function clearPublished(
  deps: ScanAndPublishDeps,
  states: readonly FindingState[],
  stamp: ScanStamp
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.store.clearPending(states, stamp);
      return;
    } catch (error) {
      if (attempt >= CLEAR_ATTEMPTS) throw error;
      deps.logger.warn('Pending marks not cleared, retrying', { attempt, error: errorText(error) });
    }
  }
}

interface Outgoing {
  readonly change: LifecycleChange;
  readonly message: OutgoingMessage;
  /** Claimed by this scan (false: a pending publish taken over from an earlier attempt). */
  readonly own: boolean;
}

const coverKey = (change: Pick<LifecycleChange, 'kind' | 'next'>) =>
  `${change.kind}:${change.next.id}`;

/**
 * The message each candidate change is claimed with. A change that a summary taken over from an
 * earlier attempt already lists is claimed with that summary (the earlier attempt claimed part of
 * the batch, then stopped): it is then sent once, in the summary. The others go out one message
 * each, or as one new summary when there are more than the threshold or the cluster is new;
 * a suppression always goes alone.
 */
function messagesFor(
  candidates: readonly LifecycleChange[],
  adopted: readonly PendingPublish[],
  batch: {
    readonly cluster: string;
    readonly stamp: ScanStamp;
    readonly location: AlertLocation;
    readonly threshold: number;
    readonly firstScan: boolean;
  }
): { change: LifecycleChange; message: OutgoingMessage }[] {
  const summaries = new Map<string, OutgoingMessage>();
  for (const pending of adopted) {
    if (pending.message.attributes.change !== 'summary') continue;
    for (const key of pending.message.covers ?? []) summaries.set(key, pending.message);
  }
  // A suppression always goes out as its own message (`change = suppressed`), never inside a
  // summary: a subscription filter on it must see every one.
  const batchable = (change: LifecycleChange) => change.kind !== 'suppressed';
  const fresh = candidates.filter(
    (change) => batchable(change) && !summaries.has(coverKey(change))
  );
  const summary =
    fresh.length > batch.threshold || (batch.firstScan && fresh.length > 0)
      ? renderSummary({
          cluster: batch.cluster,
          scanSeq: batch.stamp.scanSeq,
          location: batch.location,
          changes: fresh,
          firstScan: batch.firstScan,
        })
      : undefined;
  return candidates.map((change) => ({
    change,
    message:
      summaries.get(coverKey(change)) ??
      (batchable(change) ? summary : undefined) ??
      renderChangeMessage(change, { location: batch.location }),
  }));
}

async function scanCluster(
  deps: ScanAndPublishDeps,
  request: ScanRequest,
  target: ScanRequest['clusters'][number]
): Promise<ClusterRun> {
  const { cluster } = target;
  const started = deps.clock();
  // Taken before the cluster is read, so a higher sequence always holds a fresher view.
  const stamp: ScanStamp = {
    scanId: request.scanId,
    scanSeq: await deps.store.nextScanSeq(cluster),
    at: started.toISOString(),
  };
  const names = request.restrictTo?.filter((ref) => ref.cluster === cluster).map((ref) => ref.name);
  const basePlan = await deps.planFor(target);
  const plan = names === undefined ? basePlan : restrictPlan(basePlan, names);
  const { inventory, inputErrors } = await collectInventory(plan);
  const evaluated = evaluateInventory(
    inventory,
    {
      now: started,
      ignore: deps.settings.ignore ?? [],
      annotationSuppression: deps.settings.annotationSuppression,
      annotationSuppressionSetting: "the deployment's annotationSuppression setting",
    },
    inputErrors
  );
  // What cannot be stored is reported on its object instead, before anything is written.
  const allEntries = indexEntriesOf(inventory);
  const oversized = await deps.store.oversizedItems({
    findings: evaluated.findings,
    index: allEntries,
  });
  const storable = applyStorageLimits({
    findings: evaluated.findings,
    index: allEntries,
    oversized,
  });
  for (const item of oversized) {
    deps.logger.warn('Item too large to store', {
      cluster,
      object: oversizedObject(item),
      item: item.item,
      bytes: item.bytes,
      maxBytes: item.maxBytes,
    });
  }
  const report = { ...evaluated, findings: storable.findings };
  const unread = unreadClusters(inventory, cluster, inputErrors.length);
  const scope: DiffScope = {
    clusters: [cluster],
    ...(names === undefined
      ? {}
      : {
          nodeClasses: names.map((name) => ({ cluster, name })),
          nodePools: inventory.nodePools.map((entry) => ({ cluster, name: entry.name })),
        }),
  };
  const stored = await deps.store.loadFindings(cluster);

  // Claims an earlier attempt wrote but never published go out with this scan's own.
  const adoptable = adoptablePending(stored.pending, stamp, deps.settings.pendingLeaseMs);
  const adopted = (
    await mapLimited(adoptable, CLAIM_CONCURRENCY, async (pending) =>
      (await deps.store.adopt(pending, stamp)) ? pending : undefined
    )
  ).filter(defined);
  const diff = diffFindings({
    stored: stored.states,
    findings: report.findings,
    scope,
    unreadClusters: unread,
    unreadNodePools: unreadNodePools(inventory),
    now: started,
    reminderIntervalMs: deps.settings.reminderIntervalMs,
  });
  // A newer scan of this cluster has started: its view wins, this one changes nothing. (The
  // per-item `scanSeq` conditions cover a newer scan that starts after this check.)
  const superseded = (await deps.store.latestScanSeq(cluster)) > stamp.scanSeq;
  // A finding with a publish pending cannot be claimed again until that publish is done.
  const pendingIds = new Set(stored.pending.map((pending) => pending.state.id));
  const candidates = superseded
    ? []
    : diff.changes.filter((change) => !pendingIds.has(change.next.id));
  // Security Hub (opt-in) gets each change before it is claimed; one it cannot take for now stays
  // unclaimed and unclosed, so the next scan delivers it to both (publish-security-hub.ts).
  const toSecurityHub = await deliverToSecurityHub(
    deps.securityHub,
    {
      cluster,
      ...(target.region === undefined ? {} : { region: target.region }),
      stamp,
      changes: candidates,
      silenced: superseded ? [] : diff.silenced.filter((close) => !pendingIds.has(close.next.id)),
    },
    deps.logger
  );
  const heldBack = (id: string) => toSecurityHub.held.has(id);

  const location: AlertLocation = {
    ...(deps.settings.account ? { account: deps.settings.account } : {}),
    ...((target.region ?? deps.settings.region)
      ? { region: target.region ?? deps.settings.region }
      : {}),
  };
  const planned = messagesFor(
    candidates.filter((change) => !heldBack(change.next.id)),
    adopted,
    {
      cluster,
      stamp,
      location,
      threshold: deps.settings.alertBatchThreshold ?? DEFAULT_ALERT_BATCH_THRESHOLD,
      // No stored state at all: the cluster's first scan.
      firstScan: stored.states.length === 0,
    }
  );

  // Claim first, publish second: a duplicate delivery loses the conditional write and stays quiet.
  const claimed = (
    await mapLimited(planned, CLAIM_CONCURRENCY, async ({ change, message }) =>
      (await forObject(change.next.resource, 'claim', () =>
        deps.store.claim(change, { stamp, message })
      ))
        ? { change, message }
        : undefined
    )
  ).filter(defined);
  const outgoing: Outgoing[] = [
    ...adopted.map((pending) => ({
      change: { kind: pending.kind, next: pending.state },
      message: pending.message,
      own: false,
    })),
    ...claimed.map((claim) => ({ ...claim, own: true })),
  ];
  // A summary is carried by every claim of its batch: it is published once.
  const messages = [...new Map(outgoing.map((item) => [item.message.id, item.message])).values()];
  const { failed } = await deps.publisher.publish(messages);
  const failedIds = new Set(failed.map((failure) => failure.id));
  const sent = outgoing.filter((item) => !failedIds.has(item.message.id));
  await clearPublished(
    deps,
    sent.map((item) => item.change.next),
    stamp
  );
  // Undo this scan's claims that SNS refused, so the next attempt claims and notifies them again.
  // A refused adopted message stays pending for the next attempt.
  const refused = outgoing
    .filter((item) => item.own && failedIds.has(item.message.id))
    .map((item) => item.change);
  await mapLimited(refused, CLAIM_CONCURRENCY, (change) =>
    forObject(change.next.resource, 'release', () => deps.store.release(change, stamp))
  );
  const published = sent.map((item) => item.change);

  const entries: NodeClassIndexEntry[] = storable.index;
  const closed = superseded
    ? []
    : (
        await mapLimited(
          diff.silenced.filter(
            (close) => !pendingIds.has(close.next.id) && !heldBack(close.next.id)
          ),
          CLAIM_CONCURRENCY,
          async (close) =>
            (await forObject(close.next.resource, 'close', () => deps.store.close(close, stamp)))
              ? close
              : undefined
        )
      ).filter(defined);
  if (!superseded) {
    await deps.store.touch(diff.touched, stamp);
    if (names !== undefined) await deps.store.putIndexEntries(entries);
    else if (!unread.includes(cluster)) await deps.store.replaceClusterIndex(cluster, entries);
  }

  const states = applyChanges(stored.states, [
    ...sent.filter((item) => item.own).map((item) => item.change),
    ...closed,
  ]);
  if (!superseded) logFindingStates(deps.logger, { cluster, ...stamp }, stored.states, states);
  const errors = unavailableSources(inventory).length + inputErrors.length;
  const ok = failed.length === 0;
  // Only a completed scan counts as scanned; a failed one is counted by `scanFailed`.
  if (ok) {
    deps.metrics.clusterScanned({
      cluster,
      durationMs: deps.clock().getTime() - started.getTime(),
      nodeClasses: inventory.nodeClasses.length,
      openBySeverity: openBySeverity(states),
    });
  } else deps.metrics.scanFailed(cluster);
  deps.metrics.sourceErrors(cluster, errors);
  deps.metrics.notificationsSent(messages.filter((message) => !failedIds.has(message.id)).length);
  deps.logger.info('Cluster scanned', {
    cluster,
    scanId: request.scanId,
    scanSeq: stamp.scanSeq,
    nodeClasses: inventory.nodeClasses.length,
    changes: diff.changes.length,
    adopted: adopted.length,
    claimed: claimed.length,
    published: published.length,
    messages: messages.length,
    silentlyClosed: closed.length,
    superseded,
    sourceErrors: errors,
  });
  if (!ok) {
    deps.logger.error('Some notifications were not published', {
      cluster,
      failed: failed.map((failure) => ({ id: failure.id, code: failure.code })),
    });
  }
  return {
    outcome: {
      cluster,
      ok,
      nodeClassesScanned: inventory.nodeClasses.length,
      changes: diff.changes.length,
      published: published.length,
      ...(superseded ? { superseded } : {}),
      ...(ok ? {} : { error: `${failed.length} notifications not published` }),
    },
    published,
    states,
  };
}

/** Scans every requested cluster independently, then publishes one digest for the whole scan. */
export async function scanAndPublish(
  deps: ScanAndPublishDeps,
  request: ScanRequest
): Promise<ScanResult> {
  const calls = apiCallMeter(deps.apiCallCount, deps.metrics);
  const outcomes: ClusterOutcome[] = [];
  const published: LifecycleChange[] = [];
  const states: FindingState[] = [];
  for (const target of request.clusters) {
    try {
      const run = await calls.cluster(target.cluster, () => scanCluster(deps, request, target));
      outcomes.push(run.outcome);
      published.push(...run.published);
      states.push(...run.states);
    } catch (error) {
      deps.metrics.scanFailed(target.cluster);
      deps.metrics.sourceErrors(target.cluster, 1);
      const failure = failureOf(error);
      deps.logger.error('Cluster scan failed', {
        cluster: target.cluster,
        scanId: request.scanId,
        ...failure,
      });
      outcomes.push({
        cluster: target.cluster,
        ok: false,
        nodeClassesScanned: 0,
        changes: 0,
        published: 0,
        error: failure.error,
      });
    }
  }
  const failedClusters = outcomes
    .filter((outcome) => !outcome.ok)
    .map((outcome) => outcome.cluster);
  const wantDigest =
    deps.settings.digest === 'always' ||
    (deps.settings.digest === 'on-change' && published.length > 0);
  if (wantDigest) {
    const digest = renderDigest({
      scanId: request.scanId,
      trigger: request.trigger,
      scannedAt: deps.clock().toISOString(),
      clusters: request.clusters.map((target) => target.cluster),
      ...(deps.settings.account ? { account: deps.settings.account } : {}),
      regions: Object.fromEntries(
        request.clusters.flatMap((target) => {
          const region = target.region ?? deps.settings.region;
          return region ? [[target.cluster, region]] : [];
        })
      ),
      failedClusters,
      nodeClassesScanned: outcomes.reduce((sum, outcome) => sum + outcome.nodeClassesScanned, 0),
      changes: published,
      openBySeverity: openBySeverity(states),
    });
    const { failed } = await deps.publisher.publish([digest]);
    if (failed.length > 0)
      deps.logger.error('Digest not published', { scanId: request.scanId, code: failed[0]?.code });
  }
  calls.rest();
  return { outcomes, failedClusters };
}
