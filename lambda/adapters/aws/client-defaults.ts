// Client settings shared by every adapter, in a module of their own so a Lambda can create the one
// client a phase needs without importing every SDK client (clients.ts imports all of them).
import type { MetadataBearer, NodeHttpHandlerOptions, Pluggable } from '@smithy/types';
import { currentScanDeadline, ScanDeadlineError } from '../../shared/deadline.js';
import { limitsFromEnv } from '../files/limits.js';
import { type ApiCallCounter, apiCallCounterPlugin, operationOf } from './api-call-counter.js';
import { type ApiRateLimiter, limitClient } from './rate-limit.js';

/** First try plus three retries: enough to ride out a burst, bounded so a scan cannot stall. */
export const DEFAULT_MAX_ATTEMPTS = 4;

/** The SDK's standard retries: the only retry layer. */
const STANDARD_RETRIES = {
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
  retryMode: 'standard',
} as const;

/** Time limits of one HTTP attempt; the SDK retries an attempt that breaks one (a TimeoutError). */
export interface AwsTimeouts {
  /** Until the TCP connection is up. */
  readonly connectionTimeoutMs: number;
  /** From the request sent to the response's last byte (an endpoint that accepts and never answers). */
  readonly requestTimeoutMs: number;
}

/** Far above any healthy call (large IAM and EC2 pages answer in a few seconds). */
const DEFAULT_AWS_TIMEOUTS: AwsTimeouts = {
  connectionTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
};

/** The environment variable for each timeout (the CLI and the Lambdas read them). */
export const AWS_TIMEOUT_ENV: { readonly [Key in keyof AwsTimeouts]: string } = {
  connectionTimeoutMs: 'NODECLASS_SCAN_AWS_CONNECT_TIMEOUT_MS',
  requestTimeoutMs: 'NODECLASS_SCAN_AWS_REQUEST_TIMEOUT_MS',
};

/** The timeouts, each lowered or raised by its variable; a bad value is a ConfigError. */
export function awsTimeoutsFromEnv(env: Readonly<Record<string, string | undefined>>): AwsTimeouts {
  return limitsFromEnv(DEFAULT_AWS_TIMEOUTS, AWS_TIMEOUT_ENV, env);
}

/**
 * The SDK's node handler options for `timeouts`. Without `throwOnRequestTimeout` a request past
 * its timeout is only logged, and waits on.
 */
export function requestHandlerOptions(
  timeouts: AwsTimeouts = DEFAULT_AWS_TIMEOUTS
): NodeHttpHandlerOptions {
  return {
    connectionTimeout: timeouts.connectionTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    throwOnRequestTimeout: true,
  };
}

/** Every SDK client's settings: the standard retries and the timeouts. */
export function clientDefaults(timeouts: AwsTimeouts = DEFAULT_AWS_TIMEOUTS) {
  return { ...STANDARD_RETRIES, requestHandler: requestHandlerOptions(timeouts) };
}

/**
 * SDK plugin: the calls of a scan with a deadline (shared/deadline.ts) fail at once past it, and
 * a call still running then (an attempt, a backoff, a rate-limit wait) is abandoned. Checked
 * before the retries (the whole call) and again before each attempt, so no attempt starts late.
 */
export function scanDeadlinePlugin<Input extends object, Output extends MetadataBearer>(
  service: string
): Pluggable<Input, Output> {
  return {
    applyToStack(stack) {
      stack.add(
        (next, context) => (args) => {
          const deadline = currentScanDeadline();
          if (deadline === undefined) return next(args);
          const what = `${service}:${operationOf(context.commandName)}`;
          const left = deadline.at - Date.now();
          if (left <= 0) return Promise.reject(new ScanDeadlineError(what, deadline));
          let timer: ReturnType<typeof setTimeout> | undefined;
          const abandoned = new Promise<never>((_resolve, reject) => {
            timer = setTimeout(() => reject(new ScanDeadlineError(what, deadline)), left);
          });
          return Promise.race([next(args), abandoned]).finally(() => clearTimeout(timer));
        },
        {
          step: 'initialize',
          priority: 'high',
          name: 'nodeclassScannerScanDeadline',
          override: true,
        }
      );
      stack.add(
        (next, context) => (args) => {
          const deadline = currentScanDeadline();
          if (deadline === undefined || Date.now() < deadline.at) return next(args);
          const what = `${service}:${operationOf(context.commandName)}`;
          return Promise.reject(new ScanDeadlineError(what, deadline));
        },
        {
          step: 'finalizeRequest',
          priority: 'low',
          name: 'nodeclassScannerAttemptDeadline',
          override: true,
        }
      );
    },
  };
}

interface PluggableClient {
  // biome-ignore lint/suspicious/noExplicitAny: any SDK client's stack, whatever its input types.
  readonly middlewareStack: { use(plugin: Pluggable<any, any>): void };
  // biome-ignore lint/suspicious/noExplicitAny: mirrors the SDK's overloaded `send` signature.
  send(command: any): Promise<any>;
}

/** Counts the client's calls in `counter` and, given a limiter, paces them (once per client). */
export function instrumentClient<T extends PluggableClient>(
  client: T,
  service: string,
  counter: ApiCallCounter,
  limiter?: ApiRateLimiter
): T {
  client.middlewareStack.use(apiCallCounterPlugin(counter, service));
  return limiter === undefined ? client : limitClient(client, service, limiter);
}
