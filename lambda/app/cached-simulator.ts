// A PolicySimulatorPort that answers from verdicts cached across scans. A scan looks its requests
// up in one go (`prefetch`), simulates the misses, and writes their verdicts back (`flush`). The
// cache is an optimisation: when it cannot be read or written, the scan simulates as without it.
import type { SimulationRequest, SimulationResult } from '../core/facts/permissions.js';
import {
  cacheKeyId,
  type RolePolicySet,
  type SimulationCacheEntry,
  type SimulationCacheKey,
  type SimulationCachePort,
  simulationCacheKey,
} from '../core/iam/simulation-cache.js';
import type { PolicySimulatorPort } from '../core/ports/permissions.js';

export interface SimulationCacheOptions {
  readonly port: SimulationCachePort;
  /** Seconds a verdict is kept; 0 disables the cache. */
  readonly ttlSeconds: number;
  /**
   * Simulate everything and overwrite the stored verdicts (the IAM-event rescan: the edit it
   * follows may not be visible in the policies yet, and is always simulated afresh).
   */
  readonly refresh?: boolean;
  /** Told when the cache could not be read or written (the scan goes on without it). */
  readonly onError?: (error: unknown) => void;
}

export interface CachingSimulator extends PolicySimulatorPort {
  /** Looks up the verdicts of these requests (one cache read). */
  prefetch(requests: readonly SimulationRequest[]): Promise<void>;
  /** Writes the verdicts simulated since the last flush. */
  flush(): Promise<void>;
}

/**
 * `policiesOf` gives each principal's policies as read this scan, or undefined when they could not
 * be read: those requests are never cached (their key would not capture the policies).
 */
export function createCachingSimulator(
  simulator: PolicySimulatorPort,
  cache: SimulationCacheOptions,
  policiesOf: (principalArn: string) => RolePolicySet | undefined
): CachingSimulator {
  const enabled = cache.ttlSeconds > 0;
  const found = new Map<string, readonly SimulationResult[]>();
  const pending = new Map<string, SimulationCacheEntry>();
  const keyOf = (request: SimulationRequest): SimulationCacheKey | undefined => {
    if (!enabled) return undefined;
    const policies = policiesOf(request.principalArn);
    return policies === undefined ? undefined : simulationCacheKey(request, policies);
  };
  return {
    async prefetch(requests) {
      const keys = new Map<string, SimulationCacheKey>();
      for (const request of requests) {
        const key = keyOf(request);
        if (key !== undefined && !found.has(cacheKeyId(key))) keys.set(cacheKeyId(key), key);
      }
      if (keys.size === 0 || cache.refresh === true) return;
      try {
        for (const [id, results] of await cache.port.get([...keys.values()]))
          found.set(id, results);
      } catch (error) {
        cache.onError?.(error);
      }
    },
    async simulate(request) {
      const key = keyOf(request);
      const cached = key === undefined ? undefined : found.get(cacheKeyId(key));
      if (cached !== undefined) return cached;
      const results = await simulator.simulate(request);
      if (key !== undefined) {
        found.set(cacheKeyId(key), results);
        pending.set(cacheKeyId(key), { key, results });
      }
      return results;
    },
    async flush() {
      const entries = [...pending.values()];
      pending.clear();
      if (entries.length === 0) return;
      try {
        await cache.port.put(entries, cache.ttlSeconds);
      } catch (error) {
        cache.onError?.(error);
      }
    },
  };
}
