import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createSimulationCacheStore,
  simulationCachePk,
} from '../../../lambda/adapters/aws/simulation-cache-store.js';
import type { SimulationResult } from '../../../lambda/core/facts/permissions.js';
import { cacheKeyId } from '../../../lambda/core/iam/simulation-cache.js';

const TABLE = 'state';
const NOW = new Date('2026-03-01T00:00:00Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const documents = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const mock = mockClient(documents);

type Item = Record<string, unknown>;
const itemKey = (item: Item) => `${item.pk}|${item.sk}`;

const VERDICTS: SimulationResult[] = [
  {
    action: 'ec2:RunInstances',
    resource: '*',
    decision: 'allowed',
    allowedByOrganizations: true,
    matchedStatements: [{ sourcePolicyId: 'inline', sourcePolicyType: 'IAM Policy' }],
    missingContextValues: [],
  },
];

/** A table behind the mock; `unprocessedOnce` leaves each request's last key for a retry. */
function table(options: { unprocessedOnce?: boolean } = {}) {
  const items = new Map<string, Item>();
  const batchSizes: number[] = [];
  let deferred = options.unprocessedOnce === true;
  mock.reset();
  mock.on(BatchWriteCommand).callsFake((input) => {
    for (const request of input.RequestItems[TABLE]) {
      items.set(itemKey(request.PutRequest.Item), request.PutRequest.Item);
    }
    return { UnprocessedItems: {} };
  });
  mock.on(BatchGetCommand).callsFake((input) => {
    const keys: Item[] = input.RequestItems[TABLE].Keys;
    batchSizes.push(keys.length);
    const answered = deferred ? keys.slice(0, -1) : keys;
    const unprocessed = deferred ? keys.slice(-1) : [];
    deferred = false;
    return {
      Responses: {
        [TABLE]: answered.flatMap((key) => {
          const item = items.get(itemKey(key));
          return item ? [item] : [];
        }),
      },
      UnprocessedKeys: unprocessed.length > 0 ? { [TABLE]: { Keys: unprocessed } } : {},
    };
  });
  return { items, batchSizes };
}

const store = () => createSimulationCacheStore(documents, { tableName: TABLE, now: () => NOW });
const key = (fingerprint: string) => ({ principal: 'p1', fingerprint });

describe('simulation cache store (DynamoDB)', () => {
  beforeEach(() => mock.reset());

  it('writes verdicts under the principal partition with the TTL attribute and reads them back', async () => {
    // Prepare
    const { items } = table();

    // Act
    await store().put([{ key: key('f1'), results: VERDICTS }], 3600);
    const found = await store().get([key('f1'), key('missing')]);

    // Assess
    const item = items.get(`${simulationCachePk('p1')}|f1`);
    expect(item).toMatchObject({ pk: 'SIMCACHE#p1', sk: 'f1', expiresAt: NOW_SECONDS + 3600 });
    expect(found.get(cacheKeyId(key('f1')))).toEqual(VERDICTS);
    expect(found.has(cacheKeyId(key('missing')))).toBe(false);
  });

  it('skips expired items DynamoDB has not deleted yet, and items it cannot read', async () => {
    // Prepare
    const { items } = table();
    await store().put([{ key: key('old'), results: VERDICTS }], 60);
    const later = createSimulationCacheStore(documents, {
      tableName: TABLE,
      now: () => new Date(NOW.getTime() + 61_000),
    });
    items.set(`${simulationCachePk('p1')}|bad`, {
      pk: simulationCachePk('p1'),
      sk: 'bad',
      verdicts: new Uint8Array([1, 2, 3]),
      expiresAt: NOW_SECONDS + 3600,
    });

    // Act
    const found = await later.get([key('old'), key('bad')]);

    // Assess
    expect(found.size).toBe(0);
  });

  it('reads in batches of 100 keys and retries unprocessed keys', async () => {
    // Prepare
    const { batchSizes } = table({ unprocessedOnce: true });
    const keys = Array.from({ length: 150 }, (_, index) => key(`f${index}`));
    await store().put(
      keys.map((entry) => ({ key: entry, results: VERDICTS })),
      3600
    );

    // Act
    const found = await store().get(keys);

    // Assess
    expect(found.size).toBe(150);
    expect(batchSizes).toEqual([100, 1, 50]);
  });

  it('writes nothing with a time to live of 0', async () => {
    const { items } = table();
    await store().put([{ key: key('f1'), results: VERDICTS }], 0);
    expect(items.size).toBe(0);
    expect(mock.commandCalls(BatchWriteCommand)).toHaveLength(0);
  });

  it('leaves out an entry DynamoDB would refuse (over 400 KB gzipped) and caches the others', async () => {
    // Prepare: verdicts on resources named by incompressible text
    const { items } = table();
    let seed = 1;
    const noise = (length: number) =>
      Array.from({ length }, () => {
        // xorshift32: deterministic, and nothing gzip can compress much.
        seed ^= seed << 13;
        seed ^= seed >>> 17;
        seed ^= seed << 5;
        return 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charAt(
          (seed >>> 0) % 64
        );
      }).join('');
    const huge = Array.from({ length: 6 }, () => ({ ...VERDICTS[0], resource: noise(100_000) }));

    // Act
    await store().put(
      [
        { key: key('huge'), results: huge as SimulationResult[] },
        { key: key('f1'), results: VERDICTS },
      ],
      3600
    );

    // Assess
    expect([...items.keys()]).toEqual([`${simulationCachePk('p1')}|f1`]);
  });
});
