// Phase: finding state and cached simulation verdicts in the state table (DynamoDB).
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { clientDefaults, instrumentClient } from '../../adapters/aws/client-defaults.js';
import { createFindingStore } from '../../adapters/aws/finding-store.js';
import { createSimulationCacheStore } from '../../adapters/aws/simulation-cache-store.js';
import { TableRateBudget } from '../../adapters/aws/table-rate-budget.js';
import type { Config } from '../../shared/config.js';
import { appLogger, logger } from '../../shared/logger.js';
import { SETTINGS } from '../../shared/settings.js';

/**
 * The deployment's IAM budget, shared by every environment of the scanning functions (IAM's rate
 * is the account's), in bursts of at most one second's worth; with the table failing, this
 * environment's share of it.
 */
function iamBudget(
  config: Config,
  documents: DynamoDBDocumentClient,
  counter: ApiCallCounter
): TableRateBudget {
  const shared = sharedBudgetTable(config.settings.iamBudgetTableArn);
  const ratePerSecond = config.settings.iamCallsPerSecond ?? SETTINGS.iamCallsPerSecond.default;
  const concurrency = config.settings.scanConcurrency ?? SETTINGS.scanConcurrency.default;
  const fallback = { ratePerSecond: ratePerSecond / concurrency, burst: 1 };
  const client =
    shared === undefined || shared.region === config.region
      ? documents
      : documentClient(shared.region, counter);
  return new TableRateBudget(client, {
    tableName: shared?.tableName ?? config.stateTableName,
    name: 'iam',
    ratePerSecond,
    burst: ratePerSecond,
    now: () => Date.now(),
    sleep: (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)),
    fallback,
    onFallback: (error) =>
      logger.warn(
        'IAM budget table unavailable; pacing IAM calls locally at iamCallsPerSecond / scanConcurrency',
        { error, iamCallsPerSecond: ratePerSecond, localCallsPerSecond: fallback.ratePerSecond }
      ),
  });
}

/** The table and region of `iamBudgetTableArn` (validated when deployed), when it is set. */
export function sharedBudgetTable(
  arn: string | undefined
): { readonly region: string; readonly tableName: string } | undefined {
  const match =
    arn === undefined ? null : /^arn:[^:]+:dynamodb:([^:]+):\d{12}:table\/(.+)$/.exec(arn);
  const [, region, tableName] = match ?? [];
  return region === undefined || tableName === undefined ? undefined : { region, tableName };
}

function documentClient(region: string, counter: ApiCallCounter): DynamoDBDocumentClient {
  const client = instrumentClient(
    new DynamoDBClient({ region, ...clientDefaults() }),
    'dynamodb',
    counter
  );
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

export function createStateStores(config: Config, counter: ApiCallCounter, clock: () => Date) {
  const documents = documentClient(config.region, counter);
  return {
    store: createFindingStore(documents, {
      tableName: config.stateTableName,
      resolvedTtlDays: config.resolvedTtlDays,
      homeRegion: config.region,
      now: clock,
      logger: appLogger(),
    }),
    simulationCache: createSimulationCacheStore(documents, {
      tableName: config.stateTableName,
      now: clock,
    }),
    iamBudget: iamBudget(config, documents, counter),
  };
}

export type StateStores = ReturnType<typeof createStateStores>;
