// Shared composition for the Lambda handlers: config, SDK clients (created on first use and kept
// for warm invocations, each counted for `AwsApiCalls`), adapters, and the scan use case.
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
import { createSnsPublisher } from '../adapters/aws/sns-publisher.js';
import { createLivePlan } from '../adapters/live-plan.js';
import { createMetrics, type EmfMetrics } from '../adapters/metrics.js';
import {
  type PlanFactory,
  type ScanAndPublishDeps,
  type ScanRequest,
  type ScanResult,
  scanAndPublish,
} from '../app/scan-and-publish.js';
import type { FindingStore, NotificationPublisher, ScanQueue } from '../core/service-ports.js';
import { type Config, type HandlerName, loadConfig } from '../shared/config.js';
import { appLogger, logger, setCorrelationId } from '../shared/logger.js';

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
  readonly metrics: EmfMetrics;
  readonly clock: () => Date;
  scan(request: ScanRequest): Promise<ScanResult>;
}

function build(handler: HandlerName, overrides: ServiceOverrides): Service {
  const config = loadConfig(overrides.env ?? process.env, handler);
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
  const publisher = createSnsPublisher(sns, config.findingsTopicArn);
  const metrics = createMetrics();
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
      }));
  const deps: ScanAndPublishDeps = {
    planFor,
    store,
    publisher,
    metrics,
    logger: appLogger(),
    clock,
    settings: { reminderIntervalMs: config.reminderIntervalMs, digest: config.digest },
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
export function lazyService(handler: HandlerName, overrides: ServiceOverrides = {}): () => Service {
  let service: Service | undefined;
  return () => {
    service ??= build(handler, overrides);
    return service;
  };
}

/** The EventBridge event id of an untrusted event, when it has one (the correlation id). */
export function eventIdOf(event: unknown): string | undefined {
  const id = (event as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/** Per-invocation logging context and a metrics flush, whatever the outcome. */
export async function invoke<T>(
  service: () => Service,
  context: Context | undefined,
  correlationId: string | undefined,
  run: (service: Service) => Promise<T>
): Promise<T> {
  if (context) logger.addContext(context);
  setCorrelationId(correlationId);
  const current = service();
  try {
    return await run(current);
  } finally {
    current.metrics.flush();
  }
}
