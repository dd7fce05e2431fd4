// Shared composition for the scanning Lambdas, loaded in phases: only the Powertools middleware,
// the call counter and the rate limiter are imported at cold start. The first invocation loads the
// configuration (zod); the state table (DynamoDB), the scanning stack (EKS, Kubernetes, EC2, SSM,
// IAM, the checks) and publishing (SNS) load when first used, so an event that affects no
// NodeClass never loads the scanner. SDK clients are kept for warm invocations and counted for
// `AwsApiCalls`.

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import { ApiCallCounter } from '../adapters/aws/api-call-counter.js';
import { type ApiRateLimiter, realTimeRateLimiter } from '../adapters/aws/rate-limit.js';
import { createMetrics, createPowertoolsMetrics } from '../adapters/metrics.js';
import type { PlanFactory, ScanRequest, ScanResult } from '../app/scan-and-publish.js';
import type { FindingStore, NotificationPublisher, ServiceMetrics } from '../core/ports/service.js';
import type { Config, HandlerName } from '../shared/env-config.js';
import { logger } from '../shared/logger.js';
import { deferredPort, once } from './deferred.js';
import { withPowertools } from './powertools.js';

/** What tests (and only tests) replace: the live plan needs EKS and the Kubernetes API. */
export interface ServiceOverrides {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly planFor?: PlanFactory;
  readonly clock?: () => Date;
}

export interface Service {
  readonly config: Config;
  /** Every AWS call of this function's clients (the `AwsApiCalls` metric). */
  readonly counter: ApiCallCounter;
  /** Client-side rate limits shared by every client of this function (IAM's by the account's). */
  readonly limiter: ApiRateLimiter;
  /** Loads DynamoDB on its first call. */
  readonly store: FindingStore;
  /** Loads SNS on its first call. */
  readonly publisher: NotificationPublisher;
  readonly metrics: ServiceMetrics;
  readonly clock: () => Date;
  /** Loads the scanning stack on its first call. */
  scan(request: ScanRequest): Promise<ScanResult>;
}

const FINDING_STORE_METHODS: Readonly<Record<keyof FindingStore, true>> = {
  nextScanSeq: true,
  latestScanSeq: true,
  loadFindings: true,
  claim: true,
  claimBatch: true,
  close: true,
  adopt: true,
  clearPending: true,
  release: true,
  touch: true,
  oversizedItems: true,
  loadIndex: true,
  replaceClusterIndex: true,
  putIndexEntries: true,
};

async function build(
  handler: HandlerName,
  overrides: ServiceOverrides,
  emf: Metrics,
  remainingTimeMs: () => number | undefined
): Promise<Service> {
  const { loadScanningConfig, metricsDetailOf } = await import('./phases/config.js');
  const env = overrides.env ?? process.env;
  const config = loadScanningConfig(env, handler);
  const clock = overrides.clock ?? (() => new Date());
  const counter = new ApiCallCounter();
  const metrics = createMetrics(emf, metricsDetailOf(config));
  const stateStores = once(async () =>
    (await import('./phases/state.js')).createStateStores(config, counter, clock)
  );
  // IAM's rate is the account's: every environment takes its IAM calls from one budget in the
  // state table (loaded with the state table, on the first IAM call).
  const limiter = realTimeRateLimiter(undefined, {
    iam: { take: async () => (await stateStores()).iamBudget.take() },
  });
  const store = deferredPort(async () => (await stateStores()).store, FINDING_STORE_METHODS);
  const publisher = deferredPort(
    async () => (await import('./phases/publish.js')).createPublisher(config, counter),
    { publish: true }
  );
  const scanner = once(async () => {
    const [{ createScanner }, { simulationCache }] = await Promise.all([
      import('./phases/scan.js'),
      stateStores(),
    ]);
    return createScanner({
      handler,
      config,
      counter,
      limiter,
      clock,
      store,
      publisher,
      metrics,
      simulationCache,
      remainingTimeMs,
      env,
      ...(overrides.planFor === undefined ? {} : { planFor: overrides.planFor }),
    });
  });
  return {
    config,
    counter,
    limiter,
    store,
    publisher,
    metrics,
    clock,
    scan: async (request) => (await scanner())(request),
  };
}

/** The EventBridge event id of an untrusted event, when it has one (the correlation id). */
export function eventIdOf(event: unknown): string | undefined {
  const id = (event as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * A handler over the service, built on the first invocation (never at import time) and reused
 * while warm, with its own metrics instance flushed per invocation.
 */
export function serviceHandler<TEvent, TResult>(
  name: HandlerName,
  overrides: ServiceOverrides,
  run: (service: Service, event: TEvent, context: Context) => Promise<TResult>
) {
  const emf = createPowertoolsMetrics(logger);
  // The invocation each call runs for: a scan's reads end before its time does.
  const invocation = new AsyncLocalStorage<Context>();
  const remainingTimeMs = () => invocation.getStore()?.getRemainingTimeInMillis();
  const service = once(() => build(name, overrides, emf, remainingTimeMs));
  return withPowertools<TEvent, TResult>(
    (event, context) => invocation.run(context, async () => run(await service(), event, context)),
    emf
  );
}
