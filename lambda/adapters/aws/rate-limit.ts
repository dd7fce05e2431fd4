// Client-side rate limits per AWS operation. EC2's request buckets are per account and region and
// shared with Karpenter, and IAM's are unpublished: the scanner takes a bounded share instead of
// discovering the limit through RequestLimitExceeded. Applied as SDK middleware keyed by the
// middleware context's command name (minified bundles rename classes).
import type { MetadataBearer, Pluggable } from '@smithy/types';
import { TokenBucket } from '../../shared/token-bucket.js';
import { operationOf } from './api-call-counter.js';

export interface RateLimit {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** One bucket per operation (EC2's model), or one for the whole service (IAM's account budget). */
  readonly per: 'operation' | 'service';
}

/**
 * By service. EC2 buckets are per action and non-mutating ones refill at 20/s: half stays for
 * Karpenter. IAM and EKS publish no rates: conservative, and IAM's budget is shared by all its
 * APIs. Services not listed are not limited.
 */
const DEFAULT_RATE_LIMITS: Readonly<Record<string, RateLimit>> = {
  ec2: { ratePerSecond: 10, burst: 20, per: 'operation' },
  // A burst below IAM's own (5/s, burst 10 as the benchmarks model it): once both buckets run dry,
  // a request arriving a little earlier than its predecessor's spacing (network jitter) finds no
  // token server-side, and its backed-off retry then takes the next request's. With the same rate
  // and a burst `m` smaller, the server always holds `m` tokens more than this bucket, which
  // absorbs `m / rate` seconds of jitter (400 ms) for 2 requests' worth of burst (0.4 s per scan).
  iam: { ratePerSecond: 5, burst: 8, per: 'service' },
  ssm: { ratePerSecond: 20, burst: 40, per: 'operation' },
  eks: { ratePerSecond: 10, burst: 20, per: 'operation' },
};

/** Paces one service's calls, possibly together with other processes (table-rate-budget.ts). */
export interface SharedRateLimit {
  take(): Promise<void>;
}

export interface ApiRateLimiterOptions {
  readonly limits?: Readonly<Record<string, RateLimit>>;
  /**
   * Services paced by a limit other processes share (the Lambdas' account-wide IAM budget)
   * instead of this process's bucket.
   */
  readonly shared?: Readonly<Record<string, SharedRateLimit>>;
  /** Milliseconds since any fixed origin. */
  readonly now: () => number;
  readonly sleep: (milliseconds: number) => Promise<void>;
}

/** One token bucket per `service:Operation`, created on first use. */
export class ApiRateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly limits: Readonly<Record<string, RateLimit>>;

  public constructor(private readonly options: ApiRateLimiterOptions) {
    this.limits = options.limits ?? DEFAULT_RATE_LIMITS;
  }

  public take(service: string, operation: string): Promise<void> {
    const shared = this.options.shared?.[service];
    if (shared) return shared.take();
    const limit = this.limits[service];
    if (!limit) return Promise.resolve();
    const key = limit.per === 'service' ? service : `${service}:${operation}`;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new TokenBucket({
        ratePerSecond: limit.ratePerSecond,
        burst: limit.burst,
        now: this.options.now,
        sleep: this.options.sleep,
      });
      this.buckets.set(key, bucket);
    }
    return bucket.take();
  }
}

export function realTimeRateLimiter(
  limits?: Readonly<Record<string, RateLimit>>,
  shared?: Readonly<Record<string, SharedRateLimit>>
): ApiRateLimiter {
  return new ApiRateLimiter({
    ...(limits === undefined ? {} : { limits }),
    ...(shared === undefined ? {} : { shared }),
    now: () => performance.now(),
    sleep: (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)),
  });
}

interface Sender {
  // biome-ignore lint/suspicious/noExplicitAny: mirrors the SDK's overloaded `send` signature.
  send(command: any): Promise<any>;
}

/**
 * SDK plugin: every command waits for its operation's token once, at `initialize` (before the
 * retry middleware: retries are paced by the SDK's own retry strategy).
 */
function rateLimitPlugin<Input extends object, Output extends MetadataBearer>(
  limiter: ApiRateLimiter,
  service: string
): Pluggable<Input, Output> {
  return {
    applyToStack(stack) {
      stack.add(
        (next, context) => async (args) => {
          await limiter.take(service, operationOf(context.commandName));
          return next(args);
        },
        { step: 'initialize', name: 'nodeclassScannerRateLimit', override: true }
      );
    },
  };
}

interface StackSender extends Sender {
  // biome-ignore lint/suspicious/noExplicitAny: every SDK client's stack, whatever its input types.
  readonly middlewareStack: { use(plugin: Pluggable<any, any>): void };
}

/** SDK clients that already carry a limiter's plugin, so no second one is added. */
const limitedClients = new WeakMap<object, ApiRateLimiter>();

/** Adds the limiter to an SDK client once (createAwsClients does it for the clients it makes). */
export function limitClient<T extends StackSender>(
  client: T,
  service: string,
  limiter: ApiRateLimiter
): T {
  if (limitedClients.has(client)) return client;
  client.middlewareStack.use(rateLimitPlugin(limiter, service));
  limitedClients.set(client, limiter);
  return client;
}

/**
 * A rate-limited sender. SDK clients get the middleware (once); a bare `send` (benchmarks' world
 * SDK) is wrapped, keyed by the command's class name, which unminified code keeps.
 */
export function rateLimited<T extends Sender>(
  sender: T,
  service: string,
  limiter: ApiRateLimiter
): Pick<T, 'send'> {
  const stack = (sender as Partial<StackSender>).middlewareStack;
  if (stack !== undefined && typeof stack.use === 'function')
    return limitClient(sender as T & StackSender, service, limiter);
  return {
    send: async (command: { constructor: { name: string } }) => {
      await limiter.take(service, operationOf(command.constructor.name));
      return sender.send(command);
    },
  } as Pick<T, 'send'>;
}
