// Phase: finding state and cached simulation verdicts in the state table (DynamoDB).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { instrumentClient, STANDARD_RETRIES } from '../../adapters/aws/client-defaults.js';
import { createFindingStore } from '../../adapters/aws/finding-store.js';
import { createSimulationCacheStore } from '../../adapters/aws/simulation-cache-store.js';
import type { Config } from '../../shared/config.js';

export function createStateStores(config: Config, counter: ApiCallCounter, clock: () => Date) {
  const client = instrumentClient(
    new DynamoDBClient({ region: config.region, ...STANDARD_RETRIES }),
    'dynamodb',
    counter
  );
  const documents = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return {
    store: createFindingStore(documents, {
      tableName: config.stateTableName,
      resolvedTtlDays: config.resolvedTtlDays,
      homeRegion: config.region,
      now: clock,
    }),
    simulationCache: createSimulationCacheStore(documents, {
      tableName: config.stateTableName,
      now: clock,
    }),
  };
}

export type StateStores = ReturnType<typeof createStateStores>;
