// Lambda: on schedule, enqueue one scan request per configured (and discovered) cluster. Composed
// on its own so this bundle carries only the SQS and EKS clients, not the scanning stack.
import { EKSClient } from '@aws-sdk/client-eks';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { ScheduledEvent } from 'aws-lambda';
import { DEFAULT_MAX_ATTEMPTS } from '../adapters/aws/client-defaults.js';
import { createEksReader } from '../adapters/aws/eks-reader.js';
import { createScanQueue } from '../adapters/aws/queue.js';
import { type ClusterLister, discoverTargets, dispatchScans } from '../app/dispatch.js';
import { parseConfig } from '../shared/env-config.js';
import { ScannerError } from '../shared/errors.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { withPowertools } from './powertools.js';

export interface DispatchOverrides {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly clock?: () => Date;
}

function build(overrides: DispatchOverrides) {
  // The zod-free parser: dispatch reads no IGNORE_RULES.
  const config = parseConfig(overrides.env ?? process.env, 'dispatch');
  const common = { maxAttempts: DEFAULT_MAX_ATTEMPTS, retryMode: 'standard' as const };
  const eksByRegion = new Map<string, EKSClient>();
  const lister: ClusterLister = {
    listClusters: (region, tagFilter) => {
      let eks = eksByRegion.get(region);
      if (!eks) {
        eks = new EKSClient({ ...common, region });
        eksByRegion.set(region, eks);
      }
      return createEksReader({ eks }).listClusters(tagFilter);
    },
  };
  const queue = createScanQueue(
    new SQSClient({ ...common, region: config.region }),
    config.scanQueueUrl
  );
  return { config, lister, queue, clock: overrides.clock ?? (() => new Date()) };
}

export function createHandler(overrides: DispatchOverrides = {}) {
  let service: ReturnType<typeof build> | undefined;
  // No metrics middleware: this function writes no metrics (its failures are Lambda errors).
  return withPowertools(async (event: Partial<ScheduledEvent>) => {
    setCorrelationId(typeof event.id === 'string' ? event.id : undefined);
    service ??= build(overrides);
    const { config, lister, queue, clock } = service;
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
