// Each cluster's own scan environment (clusterSettings → CLUSTER_ENVIRONMENTS) reaches the plan the
// scanning Lambdas build for that cluster; other clusters keep the global SCAN_ENVIRONMENT.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiCallCounter } from '../../lambda/adapters/aws/api-call-counter.js';
import { realTimeRateLimiter } from '../../lambda/adapters/aws/rate-limit.js';
import type { FindingStore, ServiceMetrics } from '../../lambda/core/ports/service.js';
import { createScanner } from '../../lambda/handlers/phases/scan.js';
import { loadConfig } from '../../lambda/shared/config.js';

const planned = vi.hoisted(() => [] as { cluster: string; environment: unknown }[]);

vi.mock('../../lambda/adapters/live-plan.js', () => ({
  createLivePlan: (options: { clusters: string[]; environment?: unknown }) => {
    planned.push({ cluster: options.clusters[0] ?? '', environment: options.environment });
    // Only the plan's options matter here: the scan of this cluster stops.
    throw new Error('no live plan in this test');
  },
}));

describe('per-cluster scan environment at run time', () => {
  beforeEach(() => {
    planned.length = 0;
  });

  it('plans each cluster in its own environment, the others in the global one', async () => {
    // Prepare
    const config = loadConfig(
      {
        STATE_TABLE_NAME: 'state',
        FINDINGS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:111122223333:findings',
        AWS_REGION: 'eu-west-1',
        SCAN_ENVIRONMENT: 'production',
        CLUSTER_ENVIRONMENTS: 'dev=non-production',
      },
      'scan-cluster'
    );
    const store = { nextScanSeq: async () => 1 } as unknown as FindingStore;
    const metrics = new Proxy({}, { get: () => () => undefined }) as ServiceMetrics;
    const scan = createScanner({
      handler: 'scan-cluster',
      config,
      counter: new ApiCallCounter(),
      limiter: realTimeRateLimiter(),
      clock: () => new Date('2026-11-22T12:00:00Z'),
      store,
      publisher: { publish: async () => [] } as never,
      metrics,
      simulationCache: {} as never,
    });

    // Act
    const result = await scan({
      scanId: 'scan-1',
      trigger: 'schedule',
      clusters: [{ cluster: 'dev' }, { cluster: 'prod' }],
    });

    // Assess
    expect(result.failedClusters).toEqual(['dev', 'prod']);
    expect(planned).toEqual([
      { cluster: 'dev', environment: 'non-production' },
      { cluster: 'prod', environment: 'production' },
    ]);
  });
});
