// A real DynamoDB implementation (dynalite) on loopback with the state table's key schema, for
// adapter tests whose subject is what DynamoDB itself does (conditions, marshalling, atomicity).
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export interface DynaliteTables {
  readonly documents: DynamoDBDocumentClient;
  /** The plain client under `documents`: items with their attribute values as DynamoDB sends them. */
  readonly client: DynamoDBClient;
  /** A new, empty table (dynalite deletes tables asynchronously: one per test instead). */
  createTable(): Promise<string>;
  close(): Promise<void>;
}

async function startDynalite(region = 'eu-west-1'): Promise<DynaliteTables> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const raw = new DynamoDBClient({
    region,
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const documents = DynamoDBDocumentClient.from(raw, {
    marshallOptions: { removeUndefinedValues: true },
  });
  let tables = 0;
  return {
    documents,
    client: raw,
    async createTable() {
      tables += 1;
      const name = `state-${tables}`;
      await raw.send(
        new CreateTableCommand({
          TableName: name,
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'S' },
          ],
          BillingMode: 'PAY_PER_REQUEST',
        })
      );
      return name;
    },
    async close() {
      raw.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Dynalite for the calling test file (started before its tests, closed after) and its current table. */
export interface DynaliteTable {
  readonly documents: DynamoDBDocumentClient;
  readonly client: DynamoDBClient;
  /** The current test's table, new and empty for every test. */
  readonly name: string;
}

export function useDynaliteTable(region?: string): DynaliteTable {
  let dynamo: DynaliteTables | undefined;
  let name = '';
  const started = (): DynaliteTables => {
    if (dynamo === undefined) throw new Error('dynalite is not started: use it inside a test');
    return dynamo;
  };
  beforeAll(async () => {
    dynamo = await startDynalite(region);
  });
  afterAll(async () => {
    await dynamo?.close();
  });
  beforeEach(async () => {
    name = await started().createTable();
  });
  return {
    get documents() {
      return started().documents;
    },
    get client() {
      return started().client;
    },
    get name() {
      return name;
    },
  };
}
