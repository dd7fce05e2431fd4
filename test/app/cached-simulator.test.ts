import { describe, expect, it } from 'vitest';
import { createPermissionsEnricher } from '../../lambda/app/collect-permissions.js';
import type { SimulationRequest, SimulationResult } from '../../lambda/core/facts/permissions.js';
import {
  cacheKeyId,
  type RolePolicySet,
  type SimulationCacheEntry,
  type SimulationCachePort,
} from '../../lambda/core/iam/simulation-cache.js';
import { nodeClassKey } from '../../lambda/core/inventory.js';
import type { PolicySimulatorPort, RolePolicyPort } from '../../lambda/core/ports/permissions.js';
import { aPermissionsInventory } from '../support/permission-builders.js';

const POLICY = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: ['ec2:*', 'iam:*'], Resource: '*' }],
});

function fakeSimulator() {
  const calls: SimulationRequest[] = [];
  const simulator: PolicySimulatorPort = {
    async simulate(request) {
      calls.push(request);
      return request.actions.flatMap((action) =>
        request.resourceArns.map(
          (resource): SimulationResult => ({
            action,
            resource,
            decision: 'allowed',
            matchedStatements: [],
            missingContextValues: [],
          })
        )
      );
    },
  };
  return { simulator, calls };
}

/** In-memory cache; counts reads and writes; `failing` makes every call throw. */
function fakeCache(options: { failing?: boolean } = {}) {
  const entries = new Map<string, readonly SimulationResult[]>();
  const log = { gets: 0, puts: 0, ttls: [] as number[] };
  const port: SimulationCachePort = {
    async get(keys) {
      log.gets++;
      if (options.failing) throw new Error('table unavailable');
      const found = new Map<string, readonly SimulationResult[]>();
      for (const key of keys) {
        const results = entries.get(cacheKeyId(key));
        if (results) found.set(cacheKeyId(key), results);
      }
      return found;
    },
    async put(written: readonly SimulationCacheEntry[], ttlSeconds) {
      log.puts++;
      log.ttls.push(ttlSeconds);
      if (options.failing) throw new Error('table unavailable');
      for (const entry of written) entries.set(cacheKeyId(entry.key), entry.results);
    },
  };
  return { port, entries, log };
}

function policies(read: () => RolePolicySet): RolePolicyPort {
  return {
    async policySet() {
      return read();
    },
    async documents() {
      const set = read();
      return set.boundary === undefined ? set.identity : [...set.identity, set.boundary];
    },
  };
}

const DAY = 86_400;

describe('permissions enricher with cached verdicts', () => {
  it('sends no simulation on the second scan of an unchanged fleet, with the same verdicts', async () => {
    // Prepare
    const fake = fakeSimulator();
    const cache = fakeCache();
    const enricher = createPermissionsEnricher({
      simulator: fake.simulator,
      policies: policies(() => ({ identity: [POLICY] })),
      cache: { port: cache.port, ttlSeconds: DAY },
    });

    // Act
    const first = await enricher.enrich(aPermissionsInventory());
    const simulatedFirst = fake.calls.length;
    const second = await enricher.enrich(aPermissionsInventory());

    // Assess
    expect(simulatedFirst).toBeGreaterThan(0);
    expect(fake.calls).toHaveLength(simulatedFirst);
    expect(cache.entries.size).toBe(simulatedFirst);
    expect(cache.log.ttls).toEqual([DAY]);
    expect(cache.log.gets).toBe(2);
    for (const name of ['default', 'gpu']) {
      const key = nodeClassKey('demo', name);
      expect(second.permissions.get(key)?.simulations).toEqual(
        first.permissions.get(key)?.simulations
      );
    }
  });

  it('simulates again when the controller role policies or boundary change', async () => {
    // Prepare
    const fake = fakeSimulator();
    const cache = fakeCache();
    let current: RolePolicySet = { identity: [POLICY] };
    const enricher = createPermissionsEnricher({
      simulator: fake.simulator,
      policies: policies(() => current),
      cache: { port: cache.port, ttlSeconds: DAY },
    });
    await enricher.enrich(aPermissionsInventory());
    const perScan = fake.calls.length;

    // Act
    current = { identity: [POLICY], boundary: POLICY };
    await enricher.enrich(aPermissionsInventory());

    // Assess
    expect(fake.calls).toHaveLength(2 * perScan);
  });

  it('caches nothing when the policies cannot be read, or when the time to live is 0', async () => {
    for (const setup of [
      {
        policies: policies(() => {
          throw new Error('AccessDenied');
        }),
        ttlSeconds: DAY,
      },
      { policies: policies(() => ({ identity: [POLICY] })), ttlSeconds: 0 },
    ]) {
      // Prepare
      const fake = fakeSimulator();
      const cache = fakeCache();
      const enricher = createPermissionsEnricher({
        simulator: fake.simulator,
        policies: setup.policies,
        cache: { port: cache.port, ttlSeconds: setup.ttlSeconds },
      });

      // Act
      await enricher.enrich(aPermissionsInventory());
      const perScan = fake.calls.length;
      await enricher.enrich(aPermissionsInventory());

      // Assess
      expect(perScan).toBeGreaterThan(0);
      expect(fake.calls).toHaveLength(2 * perScan);
      expect(cache.entries.size).toBe(0);
      expect(cache.log).toMatchObject({ gets: 0, puts: 0 });
    }
  });

  it('simulates everything and overwrites the stored verdicts when refreshing (IAM events)', async () => {
    // Prepare
    const fake = fakeSimulator();
    const cache = fakeCache();
    const read = policies(() => ({ identity: [POLICY] }));
    await createPermissionsEnricher({
      simulator: fake.simulator,
      policies: read,
      cache: { port: cache.port, ttlSeconds: DAY },
    }).enrich(aPermissionsInventory());
    const perScan = fake.calls.length;

    // Act
    await createPermissionsEnricher({
      simulator: fake.simulator,
      policies: read,
      cache: { port: cache.port, ttlSeconds: DAY, refresh: true },
    }).enrich(aPermissionsInventory());

    // Assess
    expect(fake.calls).toHaveLength(2 * perScan);
    expect(cache.log).toMatchObject({ gets: 1, puts: 2 });
  });

  it('caches nothing for a policy reader that cannot tell the boundary apart', async () => {
    const fake = fakeSimulator();
    const cache = fakeCache();
    const enricher = createPermissionsEnricher({
      simulator: fake.simulator,
      policies: { documents: async () => [POLICY] },
      cache: { port: cache.port, ttlSeconds: DAY },
    });

    await enricher.enrich(aPermissionsInventory());

    expect(fake.calls.length).toBeGreaterThan(0);
    expect(cache.log).toMatchObject({ gets: 0, puts: 0 });
  });

  it('simulates as without a cache when the cache cannot be read or written, and says so', async () => {
    // Prepare
    const fake = fakeSimulator();
    const cache = fakeCache({ failing: true });
    const errors: unknown[] = [];
    const enricher = createPermissionsEnricher({
      simulator: fake.simulator,
      policies: policies(() => ({ identity: [POLICY] })),
      cache: { port: cache.port, ttlSeconds: DAY, onError: (error) => errors.push(error) },
    });

    // Act
    const inventory = await enricher.enrich(aPermissionsInventory());

    // Assess
    expect(fake.calls.length).toBeGreaterThan(0);
    expect(errors).toHaveLength(2);
    const outcomes = inventory.permissions.get(nodeClassKey('demo', 'default'))?.simulations ?? [];
    expect(outcomes.length).toBeGreaterThan(0);
    expect(outcomes.every((outcome) => outcome.results.status === 'ok')).toBe(true);
  });
});
