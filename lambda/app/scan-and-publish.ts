// The service's use case: scan clusters (all of their NodeClasses, or only those an event can
// affect), diff the findings against stored state, claim each change with a conditional write,
// publish the claimed ones, and record metrics. Partial-failure policy: each cluster is scanned
// and published on its own, so one cluster throwing never stops the others.
//
// Batching: more than `alertBatchThreshold` changes of one cluster scan, or any change of a cluster
// with no stored state yet (its first scan), go out as ONE summary message. Every claim of the
// batch carries that same message (the store keeps it once, each claim names it), and messages
// are published once per id, so a summary is sent once however many claims (own or adopted)
// carry it. A `suppressed` change is never batched: it
// is always its own message, so a subscription filter on `change = suppressed` sees every one.
//
// A cluster is its identity (account, region, name: cluster-identity.ts): its state, sequence and
// index are its own, so same-named clusters of two regions never resolve or re-open each other's
// findings. Logs, metrics and messages show its label (`name@region` outside the home region).
//
// Store calls of one cluster scan, in order (a fault from any of them on fails the scan, and the
// redelivery of the same scan finishes its work):
//   1. nextScanSeq  (before the cluster is read: the sequence orders overlapping scans)
//   2. loadFindings (with the claims still pending publish; the first load of an identity adopts
//      the state an earlier version kept under the cluster's name alone)
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
import { type ClusterIdentity, clusterLabel, identityOf } from '../core/cluster-identity.js';
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
  type LifecycleDiff,
  openBySeverity,
  type PendingPublish,
  type ScanStamp,
  type SilentClose,
  type StoredFindings,
} from '../core/lifecycle.js';
import type { Finding, ResourceRef } from '../core/model.js';
import { type DigestChange, renderDigest } from '../core/notify/digest.js';
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
  PublishFailure,
  ServiceMetrics,
} from '../core/ports/service.js';
import { applyStorageLimits, type OversizedItem } from '../core/storage-limits.js';
import { mapLimited } from '../shared/concurrency.js';
import { clusterReadDeadline, type ScanDeadline, withScanDeadline } from '../shared/deadline.js';
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
  /**
   * The home region: the region of a cluster whose target names none. A cluster is kept and shown
   * by its identity (account, region, name): `name@region` outside the home region.
   */
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
  /**
   * The reading deadline of a whole request, taken as it starts (none: reads are not cut short).
   * Its clusters share it (`clusterReadDeadline`); the time after it stores and publishes.
   */
  readonly readDeadline?: () => ScanDeadline | undefined;
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
  /** The cluster's label (`clusterLabel`): its name, `name@region` outside the home region. */
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
  /** Labels of the clusters whose scan failed. */
  readonly failedClusters: readonly string[];
}

/** The cluster's region for a log line, when known. */
function regionOf(cluster: ClusterIdentity): { region?: string } {
  return cluster.region === '' ? {} : { region: cluster.region };
}

/** One cluster of a scan request, with the identity it is kept under and the label it is shown by. */
interface ClusterTarget {
  readonly target: ScanRequest['clusters'][number];
  readonly identity: ClusterIdentity;
  readonly label: string;
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
  /** The changes published, each with its cluster's label. */
  readonly published: readonly DigestChange[];
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
): {
  planned: { change: LifecycleChange; message: OutgoingMessage }[];
  /** The first scan's summary: its changes are claimed as one batch when the store can. */
  firstScanSummary?: OutgoingMessage;
} {
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
  // One summary per scan however many changes it has: the message lists the first ones and counts
  // the rest (renderSummary bounds it), and the store keeps it and the changes it covers once,
  // not in each claim (a first scan's as one batch, `claimBatch`; any other apart from the
  // claims that name it). So no item grows with the summary, and no split into parts is needed.
  const summary =
    (batch.firstScan && fresh.length > 0) || fresh.length > batch.threshold
      ? renderSummary({
          cluster: batch.cluster,
          scanSeq: batch.stamp.scanSeq,
          location: batch.location,
          changes: fresh,
          firstScan: batch.firstScan,
        })
      : undefined;
  const inSummary = new Set(summary === undefined ? [] : fresh);
  const planned = candidates.map((change) => ({
    change,
    message:
      summaries.get(coverKey(change)) ??
      (inSummary.has(change) ? summary : undefined) ??
      renderChangeMessage(change, { location: batch.location }),
  }));
  const firstScanSummary = batch.firstScan ? summary : undefined;
  return { planned, ...(firstScanSummary === undefined ? {} : { firstScanSummary }) };
}

/** What the evaluation of one cluster yields, ready to diff and store (steps before any write). */
interface EvaluatedCluster {
  readonly inventory: Inventory;
  readonly inputErrors: number;
  /** The scan's findings, after the items the store cannot hold became `error` findings. */
  readonly findings: readonly Finding[];
  /** Index entries the store can hold. */
  readonly index: readonly NodeClassIndexEntry[];
  readonly scope: DiffScope;
  /** Clusters whose objects could not be read. */
  readonly unread: readonly string[];
}

/**
 * Reads and evaluates the cluster (only `names`' NodeClasses when set), then turns what the store
 * could not hold into `error` findings on their objects, before anything is written.
 */
async function evaluateCluster(
  deps: ScanAndPublishDeps,
  { target, identity, label }: ClusterTarget,
  names: readonly string[] | undefined,
  started: Date,
  readDeadline: () => ScanDeadline | undefined
): Promise<EvaluatedCluster> {
  const cluster = identity.name;
  // Reads only: past the deadline they fail fast and become `error` findings, and the writes
  // below still have the time the deadline left them.
  const { inventory, inputErrors } = await withScanDeadline(readDeadline(), async () => {
    const basePlan = await deps.planFor(target);
    const plan = names === undefined ? basePlan : restrictPlan(basePlan, names);
    return collectInventory(plan);
  });
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
  // What cannot be stored is reported on its object instead, before anything is written. Index
  // entries carry the identity of their cluster: events find them by it.
  const allEntries = indexEntriesOf(inventory).map((entry) => ({
    ...entry,
    account: identity.account,
    region: identity.region,
  }));
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
      cluster: label,
      object: oversizedObject(item),
      item: item.item,
      bytes: item.bytes,
      maxBytes: item.maxBytes,
    });
  }
  return {
    inventory,
    inputErrors: inputErrors.length,
    findings: storable.findings,
    index: storable.index,
    scope: {
      clusters: [cluster],
      ...(names === undefined
        ? {}
        : {
            nodeClasses: names.map((name) => ({ cluster, name })),
            nodePools: inventory.nodePools.map((entry) => ({ cluster, name: entry.name })),
          }),
    },
    unread: unreadClusters(inventory, cluster, inputErrors.length),
  };
}

/** Step 3: takes over the claims an earlier attempt wrote but never published. */
async function adoptPending(
  deps: ScanAndPublishDeps,
  pending: readonly PendingPublish[],
  stamp: ScanStamp
): Promise<PendingPublish[]> {
  const adoptable = adoptablePending(pending, stamp, deps.settings.pendingLeaseMs);
  return (
    await mapLimited(adoptable, CLAIM_CONCURRENCY, async (item) =>
      (await deps.store.adopt(item, stamp)) ? item : undefined
    )
  ).filter(defined);
}

/**
 * Step 5: claims each planned change; a duplicate delivery loses the conditional write. The
 * changes of a first scan's summary are claimed as one batch when the store can (all or none).
 */
async function claimChanges(
  deps: ScanAndPublishDeps,
  planned: readonly { change: LifecycleChange; message: OutgoingMessage }[],
  stamp: ScanStamp,
  firstScanSummary: OutgoingMessage | undefined
): Promise<{ change: LifecycleChange; message: OutgoingMessage }[]> {
  const claimBatch = deps.store.claimBatch?.bind(deps.store);
  const batched = new Set(
    claimBatch === undefined || firstScanSummary === undefined
      ? []
      : planned.filter(
          (item) => item.message === firstScanSummary && item.change.previous === undefined
        )
  );
  const batchWon =
    claimBatch !== undefined &&
    firstScanSummary !== undefined &&
    batched.size > 0 &&
    (await claimBatch(
      [...batched].map((item) => item.change),
      { stamp, message: firstScanSummary }
    ));
  const single = planned.filter((item) => !batched.has(item));
  const claimedSingly = (
    await mapLimited(single, CLAIM_CONCURRENCY, async ({ change, message }) =>
      (await forObject(change.next.resource, 'claim', () =>
        deps.store.claim(change, { stamp, message })
      ))
        ? { change, message }
        : undefined
    )
  ).filter(defined);
  return [...(batchWon ? batched : []), ...claimedSingly];
}

interface Delivery {
  /** Every message sent to SNS, each id once. */
  readonly messages: readonly OutgoingMessage[];
  readonly failed: readonly PublishFailure[];
  readonly failedIds: ReadonlySet<string>;
  /** Adopted and claimed changes whose message SNS accepted. */
  readonly sent: readonly Outgoing[];
}

/**
 * The publish and steps 6–7: publishes the adopted and claimed messages (a summary carried by
 * every claim of its batch goes out once), clears the pending marks of those SNS accepted, and
 * releases this scan's claims it refused, so the next attempt claims and notifies them again. A
 * refused adopted message stays pending for the next attempt.
 */
async function publishAndSettle(
  deps: ScanAndPublishDeps,
  outgoing: readonly Outgoing[],
  stamp: ScanStamp
): Promise<Delivery> {
  const messages = [...new Map(outgoing.map((item) => [item.message.id, item.message])).values()];
  const { failed } = await deps.publisher.publish(messages);
  const failedIds = new Set(failed.map((failure) => failure.id));
  const sent = outgoing.filter((item) => !failedIds.has(item.message.id));
  await clearPublished(
    deps,
    sent.map((item) => item.change.next),
    stamp
  );
  const refused = outgoing
    .filter((item) => item.own && failedIds.has(item.message.id))
    .map((item) => item.change);
  await mapLimited(refused, CLAIM_CONCURRENCY, (change) =>
    forObject(change.next.resource, 'release', () => deps.store.release(change, stamp))
  );
  return { messages, failed, failedIds, sent };
}

/**
 * Step 8: the writes that notify nobody: silent closes (follow-ons, notices), `lastSeen` of
 * unchanged findings, and the NodeClass index (upserted after a restricted scan, replaced after a
 * full one whose cluster was read). Returns the closes written.
 */
async function writeQuietState(
  deps: ScanAndPublishDeps,
  input: {
    readonly stamp: ScanStamp;
    readonly silenced: readonly SilentClose[];
    readonly touched: readonly FindingState[];
    readonly index: readonly NodeClassIndexEntry[];
    readonly restricted: boolean;
    readonly unread: readonly string[];
  }
): Promise<SilentClose[]> {
  const { stamp } = input;
  const closed = (
    await mapLimited(input.silenced, CLAIM_CONCURRENCY, async (close) =>
      (await forObject(close.next.resource, 'close', () => deps.store.close(close, stamp)))
        ? close
        : undefined
    )
  ).filter(defined);
  await deps.store.touch(input.touched, stamp);
  if (input.restricted) await deps.store.putIndexEntries(input.index);
  else if (!input.unread.includes(stamp.cluster.name))
    await deps.store.replaceClusterIndex(stamp.cluster, input.index);
  return closed;
}

/**
 * The logs and metrics of a scan that ran to its end: the finding state lines (unless a newer
 * scan superseded it), the scan's metrics and its `Cluster scanned` line.
 */
function recordScan(
  deps: ScanAndPublishDeps,
  scan: {
    readonly cluster: ClusterTarget;
    readonly scanId: string;
    readonly stamp: ScanStamp;
    readonly started: Date;
    readonly evaluated: EvaluatedCluster;
    /** Stored states before and after this scan's writes. */
    readonly before: readonly FindingState[];
    readonly states: readonly FindingState[];
    readonly changes: number;
    readonly adopted: number;
    readonly claimed: number;
    readonly closed: number;
    readonly superseded: boolean;
    readonly delivery: Delivery;
  }
): void {
  const { evaluated, delivery } = scan;
  const { identity, label: cluster } = scan.cluster;
  if (!scan.superseded) {
    logFindingStates(
      deps.logger,
      {
        cluster,
        name: identity.name,
        account: identity.account,
        region: identity.region,
        scanId: scan.stamp.scanId,
        scanSeq: scan.stamp.scanSeq,
      },
      scan.before,
      scan.states
    );
  }
  const { inventory } = evaluated;
  const unavailable = unavailableSources(inventory);
  const errors = unavailable.length + evaluated.inputErrors;
  const ok = delivery.failed.length === 0;
  // Only a completed scan counts as scanned; a failed one is counted by `scanFailed`.
  if (ok) {
    deps.metrics.clusterScanned({
      cluster,
      durationMs: deps.clock().getTime() - scan.started.getTime(),
      nodeClasses: inventory.nodeClasses.length,
      openBySeverity: openBySeverity(scan.states),
    });
  } else deps.metrics.scanFailed(cluster);
  deps.metrics.sourceErrors(cluster, errors);
  deps.metrics.notificationsSent(
    delivery.messages.filter((message) => !delivery.failedIds.has(message.id)).length
  );
  deps.logger.info('Cluster scanned', {
    cluster,
    ...regionOf(identity),
    scanId: scan.scanId,
    scanSeq: scan.stamp.scanSeq,
    nodeClasses: inventory.nodeClasses.length,
    changes: scan.changes,
    adopted: scan.adopted,
    claimed: scan.claimed,
    published: delivery.sent.length,
    messages: delivery.messages.length,
    silentlyClosed: scan.closed,
    superseded: scan.superseded,
    sourceErrors: errors,
    // What could not be read, for whoever the SourceErrors alarm sends here (a few suffice).
    ...(unavailable.length === 0 ? {} : { unavailable: unavailable.slice(0, 10) }),
  });
  if (!ok) {
    deps.logger.error('Some notifications were not published', {
      cluster,
      ...regionOf(identity),
      failed: delivery.failed.map((failure) => ({ id: failure.id, code: failure.code })),
    });
  }
}

/** What one scan decided from the diff, before any change is written. */
interface Decision {
  readonly diff: LifecycleDiff;
  /** A newer scan of the cluster started first: this one writes no change. */
  readonly superseded: boolean;
  /** Each change with the message it is claimed with (step 5). */
  readonly planned: readonly { change: LifecycleChange; message: OutgoingMessage }[];
  /** The first scan's summary, claimed as one batch (step 5). */
  readonly firstScanSummary?: OutgoingMessage;
  /** The silent closes to write (step 8). */
  readonly silenced: readonly SilentClose[];
}

/**
 * The diff, step 4, Security Hub and the messages: what this scan claims, with which message, and
 * what it closes silently. A finding with a publish pending is left alone until that publish is
 * done; one Security Hub could not take for now stays unclaimed and unclosed, so the next scan
 * delivers it to both (publish-security-hub.ts).
 */
async function decideChanges(
  deps: ScanAndPublishDeps,
  input: {
    readonly cluster: ClusterTarget;
    readonly stamp: ScanStamp;
    readonly started: Date;
    readonly evaluated: EvaluatedCluster;
    readonly stored: StoredFindings;
    readonly adopted: readonly PendingPublish[];
  }
): Promise<Decision> {
  const { cluster, stamp, evaluated, stored } = input;
  const { identity } = cluster;
  const diff = diffFindings({
    stored: stored.states,
    findings: evaluated.findings,
    scope: evaluated.scope,
    unreadClusters: evaluated.unread,
    unreadNodePools: unreadNodePools(evaluated.inventory),
    now: input.started,
    reminderIntervalMs: deps.settings.reminderIntervalMs,
  });
  // Step 4: a newer scan of this cluster has started: its view wins, this one changes nothing.
  // (The per-item `scanSeq` conditions cover a newer scan that starts after this check.)
  const superseded = (await deps.store.latestScanSeq(identity)) > stamp.scanSeq;
  const pendingIds = new Set(stored.pending.map((pending) => pending.state.id));
  const candidates = superseded
    ? []
    : diff.changes.filter((change) => !pendingIds.has(change.next.id));
  const closes = superseded ? [] : diff.silenced.filter((close) => !pendingIds.has(close.next.id));
  const toSecurityHub = await deliverToSecurityHub(
    deps.securityHub,
    {
      cluster: cluster.label,
      ...(identity.region === '' ? {} : { region: identity.region }),
      stamp,
      changes: candidates,
      silenced: closes,
    },
    deps.logger
  );
  const ready = (id: string) => !toSecurityHub.held.has(id);
  const location: AlertLocation = {
    ...(identity.account === '' ? {} : { account: identity.account }),
    ...(identity.region === '' ? {} : { region: identity.region }),
    ...(deps.settings.region === undefined ? {} : { homeRegion: deps.settings.region }),
  };
  const { planned, firstScanSummary } = messagesFor(
    candidates.filter((change) => ready(change.next.id)),
    input.adopted,
    {
      cluster: identity.name,
      stamp,
      location,
      threshold: deps.settings.alertBatchThreshold ?? DEFAULT_ALERT_BATCH_THRESHOLD,
      // No stored state at all: the cluster's first scan.
      firstScan: stored.states.length === 0,
    }
  );
  return {
    diff,
    superseded,
    planned,
    ...(firstScanSummary === undefined ? {} : { firstScanSummary }),
    silenced: closes.filter((close) => ready(close.next.id)),
  };
}

/**
 * One cluster's scan, in the steps of the header: the sequence (1), the evaluation, the stored
 * state (2) and the pending claims taken over (3), the decision (the diff, 4, Security Hub and
 * the messages), the claims (5), the publish and its settlement (6, 7), the quiet writes (8),
 * then logs and metrics.
 */
async function scanCluster(
  deps: ScanAndPublishDeps,
  request: ScanRequest,
  cluster: ClusterTarget,
  readDeadline: () => ScanDeadline | undefined
): Promise<ClusterRun> {
  const { identity, label } = cluster;
  const started = deps.clock();
  // Step 1, before the cluster is read, so a higher sequence always holds a fresher view.
  const stamp: ScanStamp = {
    cluster: identity,
    scanId: request.scanId,
    scanSeq: await deps.store.nextScanSeq(identity),
    at: started.toISOString(),
  };
  const home = deps.settings.region ?? '';
  const names = request.restrictTo
    ?.filter((ref) => ref.cluster === identity.name && (ref.region ?? home) === identity.region)
    .map((ref) => ref.name);
  const evaluated = await evaluateCluster(deps, cluster, names, started, readDeadline);
  // Steps 2 and 3: claims an earlier attempt wrote but never published go out with this scan's own.
  const stored = await deps.store.loadFindings(identity);
  const adopted = await adoptPending(deps, stored.pending, stamp);
  const decision = await decideChanges(deps, {
    cluster,
    stamp,
    started,
    evaluated,
    stored,
    adopted,
  });
  // Step 5: claim first, publish second.
  const claimed = await claimChanges(deps, decision.planned, stamp, decision.firstScanSummary);
  const delivery = await publishAndSettle(
    deps,
    [
      ...adopted.map((pending) => ({
        change: { kind: pending.kind, next: pending.state },
        message: pending.message,
        own: false,
      })),
      ...claimed.map((claim) => ({ ...claim, own: true })),
    ],
    stamp
  );
  const closed = decision.superseded
    ? []
    : await writeQuietState(deps, {
        stamp,
        silenced: decision.silenced,
        touched: decision.diff.touched,
        index: evaluated.index,
        restricted: names !== undefined,
        unread: evaluated.unread,
      });
  const states = applyChanges(stored.states, [
    ...delivery.sent.filter((item) => item.own).map((item) => item.change),
    ...closed,
  ]);
  recordScan(deps, {
    cluster,
    scanId: request.scanId,
    stamp,
    started,
    evaluated,
    before: stored.states,
    states,
    changes: decision.diff.changes.length,
    adopted: adopted.length,
    claimed: claimed.length,
    closed: closed.length,
    superseded: decision.superseded,
    delivery,
  });
  const ok = delivery.failed.length === 0;
  const published = delivery.sent.map((item) => item.change);
  return {
    outcome: {
      cluster: label,
      ok,
      nodeClassesScanned: evaluated.inventory.nodeClasses.length,
      changes: decision.diff.changes.length,
      published: published.length,
      ...(decision.superseded ? { superseded: true } : {}),
      ...(ok ? {} : { error: `${delivery.failed.length} notifications not published` }),
    },
    published: published.map((change) => ({ ...change, clusterLabel: label })),
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
  const published: DigestChange[] = [];
  const states: FindingState[] = [];
  const targets: ClusterTarget[] = request.clusters.map((target) => {
    const identity = identityOf(target, deps.settings);
    return { target, identity, label: clusterLabel(identity, deps.settings.region) };
  });
  // One reading deadline for the request: a cluster that hangs spends only its share of it.
  const requestDeadline = deps.readDeadline?.();
  for (const [index, cluster] of targets.entries()) {
    const { label } = cluster;
    const readDeadline = () =>
      requestDeadline && clusterReadDeadline(requestDeadline, targets.length - index);
    try {
      const run = await calls.cluster(label, () =>
        scanCluster(deps, request, cluster, readDeadline)
      );
      outcomes.push(run.outcome);
      published.push(...run.published);
      states.push(...run.states);
    } catch (error) {
      deps.metrics.scanFailed(label);
      deps.metrics.sourceErrors(label, 1);
      const failure = failureOf(error);
      deps.logger.error('Cluster scan failed', {
        cluster: label,
        ...regionOf(cluster.identity),
        scanId: request.scanId,
        ...failure,
      });
      outcomes.push({
        cluster: label,
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
      clusters: targets.map((cluster) => cluster.label),
      ...(deps.settings.account ? { account: deps.settings.account } : {}),
      regions: Object.fromEntries(
        targets.flatMap(({ label, identity }) =>
          identity.region === '' ? [] : [[label, identity.region]]
        )
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
