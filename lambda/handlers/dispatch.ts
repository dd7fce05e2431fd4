// Lambda: on schedule, enqueue one scan request per configured (and discovered) cluster. Composed
// on its own, without the scanning stack; the SQS client loads on the first invocation and the EKS
// client only when discovery is configured.
import type { ScheduledEvent } from 'aws-lambda';
import { type ClusterLister, discoverTargets, dispatchScans } from '../app/dispatch.js';
import { parseConfig } from '../shared/env-config.js';
import { ScannerError } from '../shared/errors.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { once } from './deferred.js';
import { withPowertools } from './powertools.js';

export interface DispatchOverrides {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly clock?: () => Date;
}

async function build(overrides: DispatchOverrides) {
  // The zod-free parser: dispatch reads no IGNORE_RULES.
  const config = parseConfig(overrides.env ?? process.env, 'dispatch');
  const { createQueue } = await import('./phases/scan-queue.js');
  const discoveryLister = once(async () =>
    (await import('./phases/cluster-discovery.js')).createClusterLister()
  );
  const lister: ClusterLister = {
    listClusters: async (region, tagFilter) =>
      (await discoveryLister()).listClusters(region, tagFilter),
  };
  return {
    config,
    lister,
    queue: createQueue(config.region, config.scanQueueUrl),
    clock: overrides.clock ?? (() => new Date()),
  };
}

export function createHandler(overrides: DispatchOverrides = {}) {
  const service = once(() => build(overrides));
  // No metrics middleware: this function writes no metrics (its failures are Lambda errors).
  return withPowertools(async (event: Partial<ScheduledEvent>) => {
    setCorrelationId(typeof event.id === 'string' ? event.id : undefined);
    const { config, lister, queue, clock } = await service();
    const { targets, failures } = await discoverTargets(
      lister,
      config.region,
      config.clusters.map(({ name, region }) => ({ name, region })),
      config.discovery
    );
    const requests = await dispatchScans(
      { queue, logger: appLogger(), clock },
      targets,
      'schedule'
    );
    if (failures.length > 0) {
      // The found clusters are already queued; failing the invocation makes the gap visible (alarm).
      appLogger().error('Cluster discovery failed', { failures });
      throw new ScannerError(
        `cluster discovery failed in ${failures.map((failure) => `${failure.region} (${failure.message})`).join(', ')}`
      );
    }
    return { enqueued: requests.length };
  });
}

export const handler = createHandler();
