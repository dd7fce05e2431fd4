// The service's use case: scan clusters (all of their NodeClasses, or only those an event can
// affect), diff the findings against stored state, claim each change with a conditional write,
// publish the claimed ones, and record metrics. Partial-failure policy: each cluster is scanned
// and published on its own, so one cluster throwing never stops the others.
import {
  indexEntriesOf,
  type NodeClassIndexEntry,
  type NodeClassRef,
} from '../core/event-index.js';
import { type Inventory, unavailableSources } from '../core/inventory.js';
import {
  applyChanges,
  type DiffScope,
  diffFindings,
  type FindingState,
  type LifecycleChange,
  openBySeverity,
} from '../core/lifecycle.js';
import { renderDigest } from '../core/notify/digest.js';
import { type OutgoingMessage, renderChangeMessage } from '../core/notify/message.js';
import type { LoadedObjects, ObjectSource } from '../core/ports.js';
import type {
  AppLogger,
  FindingStore,
  NotificationPublisher,
  ServiceMetrics,
} from '../core/service-ports.js';
import { mapLimited } from '../shared/concurrency.js';
import { collectInventory, evaluateInventory, type ScanPlan } from './run-scan.js';

/** Builds the plan that scans one cluster (live EKS + AWS in production). */
export type PlanFactory = (target: {
  readonly cluster: string;
  readonly region?: string;
}) => ScanPlan | Promise<ScanPlan>;

export interface ScanSettings {
  readonly reminderIntervalMs: number;
  readonly digest: 'on-change' | 'always' | 'never';
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
  readonly error?: string;
}

export interface ScanResult {
  readonly outcomes: readonly ClusterOutcome[];
  readonly failedClusters: readonly string[];
}

const CLAIM_CONCURRENCY = 10;

/** The plan with its NodeClasses narrowed to `names` before any enricher looks at them. */
export function restrictPlan(plan: ScanPlan, names: readonly string[]): ScanPlan {
  const wanted = new Set(names);
  const objects: ObjectSource = {
    async load(): Promise<LoadedObjects> {
      const loaded = await plan.objects.load();
      return {
        ...loaded,
        nodeClasses: loaded.nodeClasses.filter((entry) => wanted.has(entry.name)),
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

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

interface ClusterRun {
  readonly outcome: ClusterOutcome;
  readonly published: readonly LifecycleChange[];
  /** Stored states after this scan's published changes. */
  readonly states: readonly FindingState[];
}

async function scanCluster(
  deps: ScanAndPublishDeps,
  request: ScanRequest,
  target: ScanRequest['clusters'][number]
): Promise<ClusterRun> {
  const { cluster } = target;
  const started = deps.clock();
  const names = request.restrictTo?.filter((ref) => ref.cluster === cluster).map((ref) => ref.name);
  const basePlan = await deps.planFor(target);
  const plan = names === undefined ? basePlan : restrictPlan(basePlan, names);
  const { inventory, inputErrors } = await collectInventory(plan);
  const report = evaluateInventory(inventory, { now: started }, inputErrors);
  const unread = unreadClusters(inventory, cluster, inputErrors.length);
  const scope: DiffScope = {
    clusters: [cluster],
    ...(names === undefined ? {} : { nodeClasses: names.map((name) => ({ cluster, name })) }),
  };
  const stored = await deps.store.loadFindings(cluster);
  const diff = diffFindings({
    stored,
    findings: report.findings,
    scope,
    unreadClusters: unread,
    now: started,
    reminderIntervalMs: deps.settings.reminderIntervalMs,
  });

  // Claim first, publish second: a duplicate delivery loses the conditional write and stays quiet.
  const claims = await mapLimited(diff.changes, CLAIM_CONCURRENCY, async (change) =>
    (await deps.store.claim(change)) ? change : undefined
  );
  const claimed = claims.filter((change): change is LifecycleChange => change !== undefined);
  const messages = new Map<string, { change: LifecycleChange; message: OutgoingMessage }>();
  for (const change of claimed) {
    const message = renderChangeMessage(change);
    messages.set(message.id, { change, message });
  }
  const { failed } = await deps.publisher.publish([...messages.values()].map((m) => m.message));
  const failedIds = new Set(failed.map((failure) => failure.id));
  const unpublished = [...messages.values()]
    .filter((m) => failedIds.has(m.message.id))
    .map((m) => m.change);
  // Undo the claims whose message did not go out, so the retry notifies them.
  await mapLimited(unpublished, CLAIM_CONCURRENCY, (change) => deps.store.release(change));
  const published = claimed.filter((change) => !unpublished.includes(change));
  await deps.store.touch(diff.touched);

  const entries: NodeClassIndexEntry[] = indexEntriesOf(inventory);
  if (names !== undefined) await deps.store.putIndexEntries(entries);
  else if (!unread.includes(cluster)) await deps.store.replaceClusterIndex(cluster, entries);

  const states = applyChanges(stored, published);
  const errors = unavailableSources(inventory).length + inputErrors.length;
  deps.metrics.clusterScanned({
    cluster,
    durationMs: deps.clock().getTime() - started.getTime(),
    nodeClasses: inventory.nodeClasses.length,
    openBySeverity: openBySeverity(states),
  });
  deps.metrics.sourceErrors(cluster, errors);
  deps.metrics.notificationsSent(published.length);
  deps.logger.info('Cluster scanned', {
    cluster,
    scanId: request.scanId,
    nodeClasses: inventory.nodeClasses.length,
    changes: diff.changes.length,
    claimed: claimed.length,
    published: published.length,
    sourceErrors: errors,
  });
  if (failed.length > 0) {
    deps.logger.error('Some notifications were not published', {
      cluster,
      failed: failed.map((failure) => ({ id: failure.id, code: failure.code })),
    });
  }
  return {
    outcome: {
      cluster,
      ok: failed.length === 0,
      nodeClassesScanned: inventory.nodeClasses.length,
      changes: diff.changes.length,
      published: published.length,
      ...(failed.length > 0 ? { error: `${failed.length} notifications not published` } : {}),
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
  const callsBefore = deps.apiCallCount?.() ?? 0;
  const outcomes: ClusterOutcome[] = [];
  const published: LifecycleChange[] = [];
  const states: FindingState[] = [];
  for (const target of request.clusters) {
    try {
      const run = await scanCluster(deps, request, target);
      outcomes.push(run.outcome);
      published.push(...run.published);
      states.push(...run.states);
    } catch (error) {
      deps.metrics.sourceErrors(target.cluster, 1);
      deps.logger.error('Cluster scan failed', {
        cluster: target.cluster,
        scanId: request.scanId,
        error: errorText(error),
      });
      outcomes.push({
        cluster: target.cluster,
        ok: false,
        nodeClassesScanned: 0,
        changes: 0,
        published: 0,
        error: errorText(error),
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
      failedClusters,
      nodeClassesScanned: outcomes.reduce((sum, outcome) => sum + outcome.nodeClassesScanned, 0),
      changes: published,
      openBySeverity: openBySeverity(states),
    });
    const { failed } = await deps.publisher.publish([digest]);
    if (failed.length > 0)
      deps.logger.error('Digest not published', { scanId: request.scanId, code: failed[0]?.code });
  }
  if (deps.apiCallCount) deps.metrics.apiCalls(deps.apiCallCount() - callsBefore);
  return { outcomes, failedClusters };
}
