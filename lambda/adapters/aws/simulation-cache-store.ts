// DynamoDB implementation of the SimulationCachePort, in the state table:
//   pk = SIMCACHE#<principal hash>  sk = <fingerprint>  verdicts (gzipped JSON)  expiresAt (TTL)
// DynamoDB deletes expired items only eventually (typically within days), so reads also skip them.

import { gunzipSync, gzipSync } from 'node:zlib';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { SimulationResult } from '../../core/facts/permissions.js';
import {
  cacheKeyId,
  type SimulationCacheEntry,
  type SimulationCacheKey,
  type SimulationCachePort,
} from '../../core/iam/simulation-cache.js';
import { chunks } from '../../shared/chunks.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { TABLE_SCHEMA } from '../../shared/telemetry.js';
import { toSourceUnavailable } from './aws-errors.js';
import { batchWriteItems, type DocumentSender, MAX_UNPROCESSED_RETRIES } from './dynamodb-batch.js';
import { itemBytes, MAX_ITEM_BYTES } from './item-size.js';

export const simulationCacheActions = ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'] as const;

export const simulationCachePk = (principalHash: string) => `SIMCACHE#${principalHash}`;

const BATCH_GET_LIMIT = 100;

const DECISIONS = new Set(['allowed', 'implicitDeny', 'explicitDeny']);
const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string');

/** Results as stored, or undefined when the item is not what this adapter writes. */
function verdictsOf(bytes: unknown): SimulationResult[] | undefined {
  if (!(bytes instanceof Uint8Array)) return undefined;
  try {
    const parsed: unknown = JSON.parse(gunzipSync(bytes).toString('utf8'));
    if (!Array.isArray(parsed)) return undefined;
    const valid = parsed.every((result: Record<string, unknown> | null) => {
      if (typeof result !== 'object' || result === null) return false;
      return (
        typeof result.action === 'string' &&
        typeof result.resource === 'string' &&
        DECISIONS.has(result.decision as string) &&
        Array.isArray(result.matchedStatements) &&
        isStringArray(result.missingContextValues) &&
        ['boolean', 'undefined'].includes(typeof result.allowedByOrganizations) &&
        ['boolean', 'undefined'].includes(typeof result.allowedByPermissionsBoundary)
      );
    });
    return valid ? (parsed as SimulationResult[]) : undefined;
  } catch {
    return undefined;
  }
}

export function createSimulationCacheStore(
  client: DocumentSender,
  options: { readonly tableName: string; readonly now: () => Date }
): SimulationCachePort {
  const { tableName } = options;
  const { partitionKey: pk, sortKey: sk, ttlAttribute } = TABLE_SCHEMA;
  const epochSeconds = () => Math.floor(options.now().getTime() / 1000);
  return {
    async get(keys: readonly SimulationCacheKey[]) {
      const found = new Map<string, readonly SimulationResult[]>();
      const now = epochSeconds();
      const unique = [...new Map(keys.map((key) => [cacheKeyId(key), key])).values()];
      for (const batch of chunks(unique, BATCH_GET_LIMIT)) {
        let pending: Record<string, unknown>[] = batch.map((key) => ({
          [pk]: simulationCachePk(key.principal),
          [sk]: key.fingerprint,
        }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > MAX_UNPROCESSED_RETRIES) {
            throw new SourceUnavailableError(
              'dynamodb:BatchGetItem',
              'throttled',
              `dynamodb:BatchGetItem left ${pending.length} keys unprocessed after ${MAX_UNPROCESSED_RETRIES} retries`
            );
          }
          let response: Awaited<ReturnType<typeof sendGet>>;
          try {
            response = await sendGet(pending);
          } catch (error) {
            throw toSourceUnavailable('dynamodb:BatchGetItem', error);
          }
          for (const item of response?.Responses?.[tableName] ?? []) {
            const expiresAt = item[ttlAttribute];
            if (typeof expiresAt !== 'number' || expiresAt <= now) continue;
            const verdicts = verdictsOf(item.verdicts);
            const partition = String(item[pk]).slice('SIMCACHE#'.length);
            if (verdicts !== undefined)
              found.set(
                cacheKeyId({ principal: partition, fingerprint: String(item[sk]) }),
                verdicts
              );
          }
          pending = (response?.UnprocessedKeys?.[tableName]?.Keys ?? []) as Record<
            string,
            unknown
          >[];
        }
      }
      return found;

      function sendGet(requestKeys: Record<string, unknown>[]) {
        return client.send(
          new BatchGetCommand({
            RequestItems: {
              [tableName]: {
                Keys: requestKeys,
                ProjectionExpression: '#pk, #sk, verdicts, #ttl',
                ExpressionAttributeNames: { '#pk': pk, '#sk': sk, '#ttl': ttlAttribute },
              },
            },
          })
        );
      }
    },
    async put(entries: readonly SimulationCacheEntry[], ttlSeconds: number) {
      if (ttlSeconds <= 0) return;
      const expiresAt = epochSeconds() + Math.ceil(ttlSeconds);
      const items = entries.flatMap((entry) => {
        const item = {
          [pk]: simulationCachePk(entry.key.principal),
          [sk]: entry.key.fingerprint,
          type: 'simulation',
          verdicts: new Uint8Array(gzipSync(JSON.stringify(entry.results))),
          [ttlAttribute]: expiresAt,
        };
        // A cache entry DynamoDB would refuse (400 KB per item) is simply not cached: the next
        // scan simulates again.
        return itemBytes(item) > MAX_ITEM_BYTES ? [] : [{ PutRequest: { Item: item } }];
      });
      await batchWriteItems(client, tableName, items);
    },
  };
}
