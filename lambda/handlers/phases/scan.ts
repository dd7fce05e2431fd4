// Phase: the scanning stack — EKS and Kubernetes reads, EC2/SSM/IAM facts, permission simulations,
// the checks — loaded when an invocation first scans (an event that affects no NodeClass never does).
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { awsTimeoutsFromEnv } from '../../adapters/aws/client-defaults.js';
import { createAwsClients } from '../../adapters/aws/clients.js';
import type { ApiRateLimiter } from '../../adapters/aws/rate-limit.js';
import { limitsFromEnv } from '../../adapters/files/limits.js';
import {
  DEFAULT_KUBE_LIMITS,
  DEFAULT_KUBE_RETRY,
  DEFAULT_KUBE_TIMEOUTS,
  KUBE_LIMIT_ENV,
  KUBE_RETRY_ENV,
  KUBE_TIMEOUT_ENV,
} from '../../adapters/kube/kube-client.js';
import { createLivePlan } from '../../adapters/live-plan.js';
import {
  type PlanFactory,
  type ScanAndPublishDeps,
  type ScanRequest,
  type ScanResult,
  scanAndPublish,
} from '../../app/scan-and-publish.js';
import { CHECKS } from '../../core/checks/index.js';
import type { SimulationCachePort } from '../../core/iam/simulation-cache.js';
import type {
  FindingStore,
  NotificationPublisher,
  ServiceMetrics,
} from '../../core/ports/service.js';
import { partitionOf } from '../../core/region.js';
import {
  type Config,
  type HandlerName,
  SSM_PARAMETER_PREFIXES_SETTING,
} from '../../shared/config.js';
import {
  deadlineAfter,
  lambdaReadBudgetMs,
  SCAN_DEADLINE_ENV,
  type ScanDeadline,
} from '../../shared/deadline.js';
import { appLogger, logger } from '../../shared/logger.js';
import { deferredPort } from '../deferred.js';

export interface ScannerInput {
  readonly handler: HandlerName;
  readonly config: Config;
  readonly counter: ApiCallCounter;
  readonly limiter: ApiRateLimiter;
  readonly clock: () => Date;
  readonly store: FindingStore;
  readonly publisher: NotificationPublisher;
  readonly metrics: ServiceMetrics;
  readonly simulationCache: SimulationCachePort;
  /** Tests' replacement for the live plan. */
  readonly planFor?: PlanFactory;
  /** The running invocation's remaining time (Lambda's `getRemainingTimeInMillis`), if any. */
  readonly remainingTimeMs?: () => number | undefined;
  /**
   * Where the time limits of reads may be lowered (tests, the deployment simulation): AWS
   * timeouts, Kubernetes limits and retries, and a cap on a scan's reading time.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * One reading deadline per request (an invocation scans once), shared by its clusters: their reads
 * end before the invocation does, leaving the reserve to store and publish all of them and the
 * digest.
 */
function readDeadlineOf(input: ScannerInput): () => ScanDeadline | undefined {
  const noCap = { capMs: Number.POSITIVE_INFINITY };
  const { capMs } = limitsFromEnv(noCap, { capMs: SCAN_DEADLINE_ENV }, input.env ?? {});
  return () => {
    const remaining = input.remainingTimeMs?.();
    const budget = remaining === undefined ? capMs : lambdaReadBudgetMs(remaining, capMs);
    if (!Number.isFinite(budget)) return undefined;
    return deadlineAfter(
      budget,
      `the scan deadline (${budget} ms of reading for the request's clusters; the rest of the invocation stores and publishes)`
    );
  };
}

export function createScanner(input: ScannerInput): (request: ScanRequest) => Promise<ScanResult> {
  const { config, counter, limiter, clock } = input;
  const env = input.env ?? {};
  const timeouts = awsTimeoutsFromEnv(env);
  const kubeLimits = limitsFromEnv(DEFAULT_KUBE_LIMITS, KUBE_LIMIT_ENV, env);
  const kubeRetry = limitsFromEnv(DEFAULT_KUBE_RETRY, KUBE_RETRY_ENV, env);
  const kubeTimeouts = limitsFromEnv(DEFAULT_KUBE_TIMEOUTS, KUBE_TIMEOUT_ENV, env);
  const clients = createAwsClients({ region: config.region, counter, limiter, timeouts });
  const planFor: PlanFactory =
    input.planFor ??
    (({ cluster, region }) =>
      createLivePlan({
        region: region ?? config.region,
        clusters: [cluster],
        now: clock,
        clients:
          region === undefined || region === config.region
            ? clients
            : createAwsClients({ region, counter, limiter, timeouts }),
        kubeLimits,
        kubeRetry,
        ...kubeTimeouts,
        // A cluster's own environment (clusterSettings) wins over the global one.
        environment: config.clusterEnvironments.get(cluster) ?? config.environment,
        ...(config.dryRunRoleArn === undefined ? {} : { dryRunRole: config.dryRunRoleArn }),
        // The role may read only these parameters: others are an error naming the setting.
        ssmParameterScope: {
          prefixes: config.ssmParameterPrefixes,
          setting: SSM_PARAMETER_PREFIXES_SETTING,
        },
        simulationCache: {
          port: input.simulationCache,
          ttlSeconds: config.simulationCacheHours * 3600,
          refresh: input.handler === 'iam-event',
          onError: (error) =>
            logger.warn('Simulation cache unavailable; simulating without it', { error }),
        },
      }));
  const deps: ScanAndPublishDeps = {
    planFor,
    store: input.store,
    publisher: input.publisher,
    metrics: input.metrics,
    logger: appLogger(),
    clock,
    settings: {
      reminderIntervalMs: config.reminderIntervalMs,
      digest: config.digest,
      ignore: config.ignore,
      annotationSuppression: config.annotationSuppression,
      alertBatchThreshold: config.alertBatchThreshold,
      account: config.account,
      region: config.region,
    },
    apiCallCount: () => counter.totalCalls(),
    readDeadline: readDeadlineOf(input),
    ...(config.securityHub
      ? {
          securityHub: {
            port: deferredPort(
              async () => (await import('./security-hub.js')).createSecurityHub(config, counter),
              { importFindings: true, markResolved: true, updateWorkflow: true }
            ),
            target: {
              account: config.account,
              region: config.region,
              partition: partitionOf(config.region),
            },
            checks: new Map(CHECKS.map((check) => [check.id, check])),
          },
        }
      : {}),
  };
  return (request) => scanAndPublish(deps, request);
}
