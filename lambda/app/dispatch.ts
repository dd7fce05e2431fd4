// The schedule's fan-out: one queue message per target cluster, so each cluster is scanned by its
// own worker invocation (bounded concurrency, its own retries and DLQ).
import type { AppLogger, ClusterScanRequest, ScanQueue } from '../core/ports/service.js';
import { PublishError } from '../shared/errors.js';

export interface DispatchDeps {
  readonly queue: ScanQueue;
  readonly logger: AppLogger;
  readonly clock: () => Date;
}

export interface DispatchTarget {
  readonly name: string;
  readonly region?: string;
}

/** Port: lists a region's EKS clusters whose tags match (`*` matches any value). */
export interface ClusterLister {
  listClusters(
    region: string,
    tagFilter: Readonly<Record<string, string>>
  ): Promise<readonly string[]>;
}

export interface DiscoveryResult {
  readonly targets: readonly DispatchTarget[];
  /** Regions whose clusters could not be listed, with the reason. */
  readonly failures: readonly { readonly region: string; readonly message: string }[];
}

/**
 * The configured clusters plus, when discovery is on, every cluster found in the discovery regions
 * (deduplicated by region and name: same-named clusters of two regions are two targets, scanned
 * and kept apart; `region` omitted for the home region). A region that cannot be listed is
 * reported, never allowed to drop the clusters found elsewhere.
 */
export async function discoverTargets(
  lister: ClusterLister,
  homeRegion: string,
  explicit: readonly DispatchTarget[],
  discovery:
    | { readonly tagFilter: Readonly<Record<string, string>>; readonly regions: readonly string[] }
    | undefined
): Promise<DiscoveryResult> {
  const targets = new Map<string, DispatchTarget>();
  const add = (target: DispatchTarget) => {
    const region = target.region ?? homeRegion;
    targets.set(
      `${region}/${target.name}`,
      region === homeRegion ? { name: target.name } : { name: target.name, region }
    );
  };
  explicit.forEach(add);
  const failures: { region: string; message: string }[] = [];
  for (const region of discovery?.regions ?? []) {
    try {
      for (const name of await lister.listClusters(region, discovery?.tagFilter ?? {}))
        add({ name, region });
    } catch (error) {
      failures.push({ region, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return { targets: [...targets.values()], failures };
}

/**
 * Enqueues one scan request per cluster. Throws when any could not be enqueued so the schedule's
 * retry runs again: a duplicate request only repeats a scan, which the lifecycle keeps silent.
 */
export async function dispatchScans(
  deps: DispatchDeps,
  targets: readonly DispatchTarget[],
  trigger: string
): Promise<readonly ClusterScanRequest[]> {
  const requestedAt = deps.clock().toISOString();
  const requests: ClusterScanRequest[] = targets.map((target) => ({
    version: 1,
    cluster: target.name,
    ...(target.region === undefined ? {} : { region: target.region }),
    trigger,
    requestedAt,
  }));
  const { failed } = await deps.queue.enqueue(requests);
  if (failed.length > 0) {
    deps.logger.error('Scan requests not enqueued', { failed });
    throw new PublishError(
      `${failed.length} of ${requests.length} scan requests were not enqueued: ${failed.map((f) => `${f.id} (${f.code})`).join(', ')}`
    );
  }
  // Clusters as people read them: `name@region` outside the home region.
  deps.logger.info('Scan requests enqueued', {
    clusters: requests.map((r) =>
      r.region === undefined ? r.cluster : `${r.cluster}@${r.region}`
    ),
    trigger,
  });
  return requests;
}
