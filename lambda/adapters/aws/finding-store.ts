// DynamoDB (single table, `pk`/`sk`) implementation of the FindingStore port.
//   Finding state:   pk = CLUSTER#<cluster>  sk = FINDING#<finding id>
//   NodeClass index: pk = NODECLASS          sk = <cluster>#<name>   (EKS names cannot contain '#')
// Every notifying transition is a conditional Put on `revision`, so two deliveries of the same
// event (or two workers racing) cannot both win and both alert. Resolved findings carry
// `expiresAt` (epoch seconds), the table's TTL attribute.
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { NodeClassIndexEntry } from '../../core/event-index.js';
import type { FindingState, LifecycleChange } from '../../core/lifecycle.js';
import { SEVERITIES } from '../../core/model.js';
import type { FindingStore } from '../../core/service-ports.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';

export const findingStoreActions = [
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;

export type DocumentSender = Pick<DynamoDBDocumentClient, 'send'>;

export const INDEX_PK = 'NODECLASS';
export const TTL_ATTRIBUTE = 'expiresAt';
const BATCH_WRITE_LIMIT = 25;
const MAX_UNPROCESSED_RETRIES = 5;
const WRITE_CONCURRENCY = 10;

export const findingPk = (cluster: string) => `CLUSTER#${cluster}`;
export const findingSk = (id: string) => `FINDING#${id}`;
export const indexSk = (cluster: string, name: string) => `${cluster}#${name}`;

const FindingItemSchema = z.object({
  id: z.string(),
  checkId: z.string(),
  cluster: z.string(),
  resourceKind: z.enum(['EC2NodeClass', 'NodePool', 'Cluster']),
  resourceName: z.string(),
  status: z.enum(['open', 'resolved']),
  findingStatus: z.enum(['fail', 'error']),
  severity: z.enum(SEVERITIES),
  message: z.string(),
  firstSeen: z.string(),
  lastSeen: z.string(),
  lastNotified: z.string().optional(),
  resolvedAt: z.string().optional(),
  revision: z.number().int(),
});

const IndexItemSchema = z.object({
  cluster: z.string(),
  region: z.string().optional(),
  name: z.string(),
  amiSelectorTerms: z.array(z.record(z.string(), z.unknown())),
  resolvedAmiIds: z.array(z.string()),
  nodeRole: z.string().optional(),
  instanceProfile: z.string().optional(),
  controllerRoleArn: z.string().optional(),
});

function withoutUndefined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}

function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  run: (batch: T[]) => Promise<void>
): Promise<void> {
  for (let start = 0; start < items.length; start += size) {
    await run(items.slice(start, start + size));
  }
}

export interface FindingStoreOptions {
  readonly tableName: string;
  /** Days a resolved finding is kept. */
  readonly resolvedTtlDays: number;
  /** Index entries are stamped with this (ISO); defaults to the finding times. */
  readonly now?: () => Date;
}

export function createFindingStore(
  client: DocumentSender,
  options: FindingStoreOptions
): FindingStore {
  const { tableName } = options;

  function findingItem(state: FindingState): Record<string, unknown> {
    const expiresAt =
      state.status === 'resolved' && state.resolvedAt !== undefined
        ? Math.floor(Date.parse(state.resolvedAt) / 1000) + options.resolvedTtlDays * 86_400
        : undefined;
    return withoutUndefined({
      pk: findingPk(state.resource.cluster),
      sk: findingSk(state.id),
      type: 'finding',
      id: state.id,
      checkId: state.checkId,
      cluster: state.resource.cluster,
      resourceKind: state.resource.kind,
      resourceName: state.resource.name,
      status: state.status,
      findingStatus: state.findingStatus,
      severity: state.severity,
      message: state.message,
      firstSeen: state.firstSeen,
      lastSeen: state.lastSeen,
      lastNotified: state.lastNotified,
      resolvedAt: state.resolvedAt,
      revision: state.revision,
      [TTL_ATTRIBUTE]: expiresAt,
    });
  }

  function indexItem(entry: NodeClassIndexEntry): Record<string, unknown> {
    return withoutUndefined({
      pk: INDEX_PK,
      sk: indexSk(entry.cluster, entry.name),
      type: 'nodeclass',
      cluster: entry.cluster,
      region: entry.region,
      name: entry.name,
      amiSelectorTerms: entry.amiSelectorTerms.map((term) => withoutUndefined({ ...term })),
      resolvedAmiIds: [...entry.resolvedAmiIds],
      nodeRole: entry.nodeRole,
      instanceProfile: entry.instanceProfile,
      controllerRoleArn: entry.controllerRoleArn,
      updatedAt: options.now?.().toISOString(),
    });
  }

  async function query(
    operation: string,
    input: Omit<ConstructorParameters<typeof QueryCommand>[0], 'TableName'>
  ) {
    try {
      return await collectPages(
        (token) =>
          client.send(
            new QueryCommand({
              TableName: tableName,
              ...input,
              ...(token ? { ExclusiveStartKey: JSON.parse(token) as Record<string, unknown> } : {}),
            })
          ),
        (page) => page.Items,
        (page) => (page.LastEvaluatedKey ? JSON.stringify(page.LastEvaluatedKey) : undefined)
      );
    } catch (error) {
      throw toSourceUnavailable(operation, error);
    }
  }

  async function batchWrite(requests: Record<string, unknown>[]): Promise<void> {
    await inBatches(requests, BATCH_WRITE_LIMIT, async (batch) => {
      let pending = batch;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > MAX_UNPROCESSED_RETRIES) {
          throw new SourceUnavailableError(
            'dynamodb:BatchWriteItem',
            'throttled',
            `dynamodb:BatchWriteItem left ${pending.length} items unprocessed after ${MAX_UNPROCESSED_RETRIES} retries`
          );
        }
        try {
          const response = await client.send(
            new BatchWriteCommand({ RequestItems: { [tableName]: pending } })
          );
          pending = (response.UnprocessedItems?.[tableName] ?? []) as Record<string, unknown>[];
        } catch (error) {
          throw toSourceUnavailable('dynamodb:BatchWriteItem', error);
        }
      }
    });
  }

  async function indexItemsOf(cluster?: string): Promise<NodeClassIndexEntry[]> {
    const items = await query('dynamodb:Query', {
      KeyConditionExpression:
        cluster === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': INDEX_PK,
        ...(cluster === undefined ? {} : { ':prefix': `${cluster}#` }),
      },
    });
    return items.map((item) => {
      const parsed = IndexItemSchema.safeParse(item);
      if (!parsed.success) {
        throw new SourceUnavailableError(
          'dynamodb:Query',
          'invalid-response',
          `Malformed index item ${String(item.sk)}: ${parsed.error.issues[0]?.message ?? ''}`
        );
      }
      return withoutUndefined(parsed.data) as NodeClassIndexEntry;
    });
  }

  return {
    async loadFindings(cluster) {
      const items = await query('dynamodb:Query', {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': findingPk(cluster), ':prefix': 'FINDING#' },
        // The diff must see the previous delivery's writes.
        ConsistentRead: true,
      });
      return items.map((item) => {
        const parsed = FindingItemSchema.safeParse(item);
        if (!parsed.success) {
          throw new SourceUnavailableError(
            'dynamodb:Query',
            'invalid-response',
            `Malformed finding item ${String(item.sk)}: ${parsed.error.issues[0]?.message ?? ''}`
          );
        }
        const { cluster: itemCluster, resourceKind, resourceName, ...rest } = parsed.data;
        return withoutUndefined({
          ...rest,
          resource: { cluster: itemCluster, kind: resourceKind, name: resourceName },
        }) as FindingState;
      });
    },

    async claim(change: LifecycleChange) {
      const previous = change.previous;
      try {
        await client.send(
          new PutCommand({
            TableName: tableName,
            Item: findingItem(change.next),
            ...(previous === undefined
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : {
                  ConditionExpression: 'revision = :revision',
                  ExpressionAttributeValues: { ':revision': previous.revision },
                }),
          })
        );
        return true;
      } catch (error) {
        if (isConditionFailure(error)) return false;
        throw toSourceUnavailable('dynamodb:PutItem', error);
      }
    },

    async release(change: LifecycleChange) {
      const condition = {
        ConditionExpression: 'revision = :revision',
        ExpressionAttributeValues: { ':revision': change.next.revision },
      };
      try {
        if (change.previous === undefined) {
          await client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: { pk: findingPk(change.next.resource.cluster), sk: findingSk(change.next.id) },
              ...condition,
            })
          );
        } else {
          await client.send(
            new PutCommand({
              TableName: tableName,
              Item: findingItem(change.previous),
              ...condition,
            })
          );
        }
      } catch (error) {
        // Someone moved the item on since: their state stands.
        if (isConditionFailure(error)) return;
        throw toSourceUnavailable(
          change.previous === undefined ? 'dynamodb:DeleteItem' : 'dynamodb:PutItem',
          error
        );
      }
    },

    async touch(states) {
      await inBatches(states, WRITE_CONCURRENCY, async (batch) => {
        await Promise.all(
          batch.map(async (state) => {
            try {
              await client.send(
                new UpdateCommand({
                  TableName: tableName,
                  Key: { pk: findingPk(state.resource.cluster), sk: findingSk(state.id) },
                  UpdateExpression: 'SET lastSeen = :lastSeen',
                  ConditionExpression: 'revision = :revision AND #status = :open',
                  ExpressionAttributeNames: { '#status': 'status' },
                  ExpressionAttributeValues: {
                    ':lastSeen': state.lastSeen,
                    ':revision': state.revision,
                    ':open': 'open',
                  },
                })
              );
            } catch (error) {
              if (!isConditionFailure(error))
                throw toSourceUnavailable('dynamodb:UpdateItem', error);
            }
          })
        );
      });
    },

    loadIndex: () => indexItemsOf(),

    async replaceClusterIndex(cluster, entries) {
      const existing = await indexItemsOf(cluster);
      const keep = new Set(entries.map((entry) => entry.name));
      await batchWrite([
        ...entries.map((entry) => ({ PutRequest: { Item: indexItem(entry) } })),
        ...existing
          .filter((entry) => !keep.has(entry.name))
          .map((entry) => ({
            DeleteRequest: { Key: { pk: INDEX_PK, sk: indexSk(cluster, entry.name) } },
          })),
      ]);
    },

    async putIndexEntries(entries) {
      await batchWrite(entries.map((entry) => ({ PutRequest: { Item: indexItem(entry) } })));
    },
  };
}
