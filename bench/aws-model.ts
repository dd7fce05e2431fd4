// AWS as the benchmarks model it: per-call latency, token-bucket rate limits, and the SDK's
// standard retry strategy (the clients the scanner builds: `retryMode: 'standard'`,
// DEFAULT_MAX_ATTEMPTS attempts, throttling backoff base 500 ms with full jitter, retry quota 500,
// cost 5 per throttled retry, refunded on success — https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html). All waiting is on `clock`.
import { DEFAULT_MAX_ATTEMPTS } from '../lambda/adapters/aws/clients.js';
import { sortedKeysJson } from '../lambda/shared/sorted-keys-json.js';
import { TokenBucket } from '../lambda/shared/token-bucket.js';
import { mulberry32 } from './prng.js';
import type { Clock } from './virtual-clock.js';
import { type AwsService, type Interceptor, sdkError } from './world-sdk.js';

export interface BucketSpec {
  readonly capacity: number;
  readonly refillPerSecond: number;
}

/**
 * The limits the benchmarks assume. EC2 non-mutating is documented (https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html) and buckets
 * are per API action. IAM and SSM rates are unpublished: the figures below are our
 * assumptions — IAM reads share one budget; SimulatePrincipalPolicy has its own, tighter one.
 */
export const RATE_LIMITS = {
  ec2: { capacity: 100, refillPerSecond: 20 },
  ssm: { capacity: 40, refillPerSecond: 40 },
  iam: { capacity: 20, refillPerSecond: 10 },
  iamSimulate: { capacity: 10, refillPerSecond: 5 },
} as const satisfies Record<string, BucketSpec>;

export const DEFAULT_LATENCY_MS = 40;

const THROTTLING_BASE_MS = 500;
const MAX_DELAY_MS = 20_000;
const RETRY_QUOTA = 500;
const THROTTLE_RETRY_COST = 5;
const SUCCESS_REFUND = 1;

export interface OperationStats {
  /** Commands sent (what the scanner asked for; one per `send`). */
  calls: number;
  /** HTTP attempts, retries included. */
  attempts: number;
  /** Attempts refused by a rate limit. */
  throttled: number;
  /** Commands that failed after the SDK gave up retrying. */
  failed: number;
  /** Commands whose input equals an earlier command's of the same operation (should be 0). */
  identical: number;
}

export interface SimulatedAwsOptions {
  readonly clock: Clock;
  readonly latencyMs?: number;
  readonly limits?: typeof RATE_LIMITS;
  readonly maxAttempts?: number;
  /** Seed of the jitter PRNG (deterministic runs). */
  readonly seed?: number;
  /** False: latency only, no rate limits (measures deduplication alone). */
  readonly rateLimited?: boolean;
}

export class SimulatedAws {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly quota = new Map<AwsService, number>();
  private readonly stats = new Map<string, OperationStats>();
  private readonly seenRequests = new Set<string>();
  private readonly random: () => number;
  private readonly latencyMs: number;
  private readonly limits: typeof RATE_LIMITS;
  private readonly maxAttempts: number;

  public constructor(private readonly options: SimulatedAwsOptions) {
    this.random = mulberry32(options.seed ?? 7);
    this.latencyMs = options.latencyMs ?? DEFAULT_LATENCY_MS;
    this.limits = options.limits ?? RATE_LIMITS;
    this.maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  private bucketFor(service: AwsService, operation: string): TokenBucket {
    const key =
      service === 'ec2'
        ? `ec2:${operation}`
        : operation === 'SimulatePrincipalPolicy'
          ? 'iam:simulate'
          : service;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      const spec =
        service === 'ec2'
          ? this.limits.ec2
          : service === 'ssm'
            ? this.limits.ssm
            : key === 'iam:simulate'
              ? this.limits.iamSimulate
              : this.limits.iam;
      const clock = this.options.clock;
      bucket = new TokenBucket({
        ratePerSecond: spec.refillPerSecond,
        burst: spec.capacity,
        now: () => clock.now(),
        sleep: (ms) => clock.sleep(ms),
      });
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  private statsFor(operation: string): OperationStats {
    let stats = this.stats.get(operation);
    if (!stats) {
      stats = { calls: 0, attempts: 0, throttled: 0, failed: 0, identical: 0 };
      this.stats.set(operation, stats);
    }
    return stats;
  }

  public readonly intercept: Interceptor = async (service, operation, input, answer) => {
    const stats = this.statsFor(`${service}:${operation}`);
    const bucket = this.bucketFor(service, operation);
    const clock = this.options.clock;
    stats.calls++;
    const request = `${service}:${operation} ${sortedKeysJson(input)}`;
    if (this.seenRequests.has(request)) stats.identical++;
    else this.seenRequests.add(request);
    let retryCost = 0;
    for (let attempt = 1; ; attempt++) {
      stats.attempts++;
      const admitted = this.options.rateLimited === false || bucket.tryTake();
      await clock.sleep(this.latencyMs);
      if (admitted) {
        const capacity = this.quota.get(service) ?? RETRY_QUOTA;
        this.quota.set(service, Math.min(RETRY_QUOTA, capacity + (retryCost || SUCCESS_REFUND)));
        return answer();
      }
      stats.throttled++;
      const capacity = this.quota.get(service) ?? RETRY_QUOTA;
      if (attempt >= this.maxAttempts || capacity < THROTTLE_RETRY_COST) {
        stats.failed++;
        throw sdkError(
          service === 'ec2' ? 'RequestLimitExceeded' : 'Throttling',
          service === 'ec2' ? 503 : 400,
          'Rate exceeded'
        );
      }
      this.quota.set(service, capacity - THROTTLE_RETRY_COST);
      retryCost = THROTTLE_RETRY_COST;
      const ceiling = Math.min(MAX_DELAY_MS, THROTTLING_BASE_MS * 2 ** (attempt - 1));
      await clock.sleep(Math.floor(this.random() * ceiling));
    }
  };

  /** Stats per `service:Operation`, sorted. */
  public report(): Record<string, OperationStats> {
    return Object.fromEntries(
      [...this.stats.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([operation, stats]) => [operation, { ...stats }])
    );
  }
}
