// Shared composition for the Lambda handlers: config, SDK clients (created on first use and kept
// for warm invocations, each counted for `AwsApiCalls`), adapters, the scan use case, and the
// Powertools metrics instance its handlers flush.

import type { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { apiCallCounterPlugin } from '../adapters/aws/api-call-counter.js';
import {
  type AwsClients,
  createAwsClients,
  DEFAULT_MAX_ATTEMPTS,
} from '../adapters/aws/clients.js';
import { createFindingStore } from '../adapters/aws/finding-store.js';
import { createScanQueue } from '../adapters/aws/queue.js';
import { createSimulationCacheStore } from '../adapters/aws/simulation-cache-store.js';
import { createSnsPublisher } from '../adapters/aws/sns-publisher.js';
import { createLivePlan } from '../adapters/live-plan.js';
import { createMetrics, createPowertoolsMetrics } from '../adapters/metrics.js';
import {
  type PlanFactory,
  type ScanAndPublishDeps,
  type ScanRequest,
  type ScanResult,
  scanAndPublish,
} from '../app/scan-and-publish.js';
import { CHECKS } from '../core/checks/index.js';
import type {
  FindingStore,
  NotificationPublisher,
  ScanQueue,
  ServiceMetrics,
} from '../core/service-ports.js';
import {
  type Config,
  type HandlerName,
  loadConfig,
  SSM_PARAMETER_PREFIXES_SETTING,
} from '../shared/config.js';
import { appLogger, logger } from '../shared/logger.js';
import { withPowertools } from './powertools.js';

/** What tests (and only tests) replace: the live plan needs EKS and the Kubernetes API. */
export interface ServiceOverrides {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly planFor?: PlanFactory;
  readonly clock?: () => Date;
}

export interface Service {
  readonly config: Config;
  readonly clients: AwsClients;
  readonly store: FindingStore;
  readonly publisher: NotificationPublisher;
  readonly queue: ScanQueue;
  readonly metrics: ServiceMetrics;
  readonly clock: () => Date;
  scan(request: ScanRequest): Promise<ScanResult>;
}

function build(handler: HandlerName, overrides: ServiceOverrides, emf: Metrics): Service {
  const config = loadConfig(overrides.env ?? process.env, handler, {
    checkIds: CHECKS.map((check) => check.id),
  });
  const clock = overrides.clock ?? (() => new Date());
  const clients = createAwsClients({ region: config.region });
  // Count our own calls (DynamoDB, SNS, SQS) in `AwsApiCalls` too.
  const counted = <T extends DynamoDBClient | SNSClient | SQSClient>(
    client: T,
    service: string
  ): T => {
    (client.middlewareStack as DynamoDBClient['middlewareStack']).use(
      apiCallCounterPlugin(clients.counter, service)
    );
    return client;
  };
  const common = {
    region: config.region,
    maxAttempts: DEFAULT_MAX_ATTEMPTS,
    retryMode: 'standard' as const,
  };
  const documents = DynamoDBDocumentClient.from(counted(new DynamoDBClient(common), 'dynamodb'), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const sns = counted(new SNSClient(common), 'sns');
  const sqs = counted(new SQSClient(common), 'sqs');
  const store = createFindingStore(documents, {
    tableName: config.stateTableName,
    resolvedTtlDays: config.resolvedTtlDays,
    now: clock,
  });
  const simulationCache = createSimulationCacheStore(documents, {
    tableName: config.stateTableName,
    now: clock,
  });
  const publisher = createSnsPublisher(sns, config.findingsTopicArn);
  const metrics = createMetrics(emf);
  const planFor: PlanFactory =
    overrides.planFor ??
    (({ cluster, region }) =>
      createLivePlan({
        region: region ?? config.region,
        clusters: [cluster],
        now: clock,
        clients:
          region === undefined || region === config.region
            ? clients
            : createAwsClients({ region, counter: clients.counter }),
        environment: config.environment,
        ...(config.dryRunRoleArn === undefined ? {} : { dryRunRole: config.dryRunRoleArn }),
        // The role may read only these parameters: others are an error naming the setting.
        ssmParameterScope: {
          prefixes: config.ssmParameterPrefixes,
          setting: SSM_PARAMETER_PREFIXES_SETTING,
        },
        simulationCache: {
          port: simulationCache,
          ttlSeconds: config.simulationCacheHours * 3600,
          refresh: handler === 'iam-event',
          onError: (error) =>
            logger.warn('Simulation cache unavailable; simulating without it', { error }),
        },
      }));
  const deps: ScanAndPublishDeps = {
    planFor,
    store,
    publisher,
    metrics,
    logger: appLogger(),
    clock,
    settings: {
      reminderIntervalMs: config.reminderIntervalMs,
      digest: config.digest,
      ignore: config.ignore,
      alertBatchThreshold: config.alertBatchThreshold,
      account: config.account,
      region: config.region,
    },
    apiCallCount: () => clients.counter.totalCalls(),
  };
  return {
    config,
    clients,
    store,
    publisher,
    queue: createScanQueue(sqs, config.scanQueueUrl),
    metrics,
    clock,
    scan: (request) => scanAndPublish(deps, request),
  };
}

/** The service, built on the first invocation (never at import time) and reused while warm. */
export function lazyService(
  handler: HandlerName,
  overrides: ServiceOverrides,
  emf: Metrics
): () => Service {
  let service: Service | undefined;
  return () => {
    service ??= build(handler, overrides, emf);
    return service;
  };
}

/** The EventBridge event id of an untrusted event, when it has one (the correlation id). */
export function eventIdOf(event: unknown): string | undefined {
  const id = (event as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** A handler over the lazily built service, with its own metrics instance flushed per invocation. */
export function serviceHandler<TEvent, TResult>(
  name: HandlerName,
  overrides: ServiceOverrides,
  run: (service: Service, event: TEvent, context: Context) => Promise<TResult>
) {
  const emf = createPowertoolsMetrics(logger);
  const service = lazyService(name, overrides, emf);
  return withPowertools<TEvent, TResult>(
    async (event, context) => run(service(), event, context),
    emf
  );
}
