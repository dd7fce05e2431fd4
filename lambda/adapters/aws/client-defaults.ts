// Client settings shared by every adapter, in a module of their own so a Lambda can create the one
// client a phase needs without importing every SDK client (clients.ts imports all of them).
import type { Pluggable } from '@smithy/types';
import { type ApiCallCounter, apiCallCounterPlugin } from './api-call-counter.js';
import { type ApiRateLimiter, limitClient } from './rate-limit.js';

/** First try plus three retries: enough to ride out a burst, bounded so a scan cannot stall. */
export const DEFAULT_MAX_ATTEMPTS = 4;

/** The SDK's standard retries: the only retry layer. */
export const STANDARD_RETRIES = {
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
  retryMode: 'standard',
} as const;

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
