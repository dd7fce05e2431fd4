// The schedule's fan-out: one queue message per target cluster, so each cluster is scanned by its
// own worker invocation (bounded concurrency, its own retries and DLQ).
import type { AppLogger, ClusterScanRequest, ScanQueue } from '../core/service-ports.js';
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
  deps.logger.info('Scan requests enqueued', { clusters: requests.map((r) => r.cluster), trigger });
  return requests;
}
