// Splits an invocation's AWS calls (`AwsApiCalls`) by cluster scan, so the dashboard can show which
// cluster spends the API budget shared with Karpenter. Clusters are scanned one after another, so
// the counter's difference across one scan is that scan's calls (verdicts cached by an earlier
// cluster's scan are not counted again). What no cluster scan made is reported without a cluster.
import type { ServiceMetrics } from '../core/ports/service.js';

export interface ApiCallMeter {
  /** Runs one cluster's scan and reports the calls it made, whether it returns or throws. */
  cluster<T>(cluster: string, scan: () => Promise<T>): Promise<T>;
  /** Reports the calls of the invocation that no cluster scan made (digest, event lookups). */
  rest(): void;
}

export function apiCallMeter(
  totalCalls: (() => number) | undefined,
  metrics: Pick<ServiceMetrics, 'apiCalls'>
): ApiCallMeter {
  const start = totalCalls?.() ?? 0;
  let byClusters = 0;
  return {
    async cluster(cluster, scan) {
      const before = totalCalls?.() ?? 0;
      try {
        return await scan();
      } finally {
        if (totalCalls) {
          const calls = totalCalls() - before;
          byClusters += calls;
          metrics.apiCalls(calls, cluster);
        }
      }
    },
    rest() {
      if (totalCalls) metrics.apiCalls(totalCalls() - start - byClusters);
    },
  };
}
