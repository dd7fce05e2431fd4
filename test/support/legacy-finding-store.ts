// The finding store as it was before cluster identities, verbatim but for its imports and its
// name: state keyed by the cluster name alone (`CLUSTER#<name>`, index `<name>#<nodeclass>`).
// Tests run an earlier version's scans with it (`legacyPort`) to leave the state such a version
// left in a table, then run the current store on that table. Not used by the service.
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { toSourceUnavailable } from '../../lambda/adapters/aws/aws-errors.js';
import { batchWriteItems, type DocumentSender } from '../../lambda/adapters/aws/dynamodb-batch.js';
import {
  assertItemFits,
  attributeSizes,
  itemBytes,
  MAX_ITEM_BYTES,
} from '../../lambda/adapters/aws/item-size.js';
import { collectPages } from '../../lambda/adapters/aws/paginate.js';
import type { ClusterIdentity } from '../../lambda/core/cluster-identity.js';
import type { NodeClassIndexEntry } from '../../lambda/core/event-index.js';
import {
  CHANGE_KINDS,
  type FindingState,
  type LifecycleChange,
  type PendingPublish,
} from '../../lambda/core/lifecycle.js';
import { type Finding, SEVERITIES } from '../../lambda/core/model.js';
import { MAX_MESSAGE_BYTES, type OutgoingMessage } from '../../lambda/core/notify/message.js';
import type { FindingStore } from '../../lambda/core/ports/service.js';
import type { OversizedItem } from '../../lambda/core/storage-limits.js';
import { utf8Length } from '../../lambda/core/text-budget.js';
import { ItemTooLargeError, SourceUnavailableError } from '../../lambda/shared/errors.js';

const INDEX_PK = 'NODECLASS';
const TTL_ATTRIBUTE = 'expiresAt';
const WRITE_CONCURRENCY = 10;

const findingPk = (cluster: string) => `CLUSTER#${cluster}`;
const findingSk = (id: string) => `FINDING#${id}`;
const indexSk = (cluster: string, name: string) => `${cluster}#${name}`;
/** The per-cluster scan counter shares the findings' partition, outside the `FINDING#` range. */
const SCAN_SEQ_SK = 'SCAN#SEQ';
const PENDING_ATTRIBUTES = [
  'pendingKind',
  'pendingMessage',
  'pendingScanId',
  'pendingSeq',
  'pendingSince',
] as const;

/**
 * Room the pending notification of a claim may take: the renderer bounds a message's bodies to
 * `MAX_MESSAGE_BYTES` (a summary to less); its subject, attributes and the changes a summary
 * covers take the rest.
 */
const PENDING_MESSAGE_RESERVE = MAX_MESSAGE_BYTES + 16 * 1024;
/** Stand-ins of the longest values a stored state takes on over its life. */
const LONGEST_TIME = '2000-01-01T00:00:00.000Z';
const LONGEST_SCAN_ID = 'x'.repeat(256);

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
  // Absent on items written before material hashes existed.
  materialHash: z.string().optional(),
  firstSeen: z.string(),
  lastSeen: z.string(),
  lastNotified: z.string().optional(),
  resolvedAt: z.string().optional(),
  revision: z.number().int(),
  scanSeq: z.number().int().optional(),
  pendingKind: z.enum(CHANGE_KINDS).optional(),
  pendingMessage: z.string().optional(),
  pendingScanId: z.string().optional(),
  pendingSeq: z.number().int().optional(),
  pendingSince: z.string().optional(),
});

const OutgoingMessageSchema = z.object({
  id: z.string(),
  subject: z.string(),
  attributes: z.record(z.string(), z.string()),
  bodies: z.object({ default: z.string(), email: z.string(), https: z.string() }),
  covers: z.array(z.string()).optional(),
});

function parseMessage(json: string): OutgoingMessage | undefined {
  try {
    const parsed = OutgoingMessageSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

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

function malformed(sk: unknown, detail: string): SourceUnavailableError {
  return new SourceUnavailableError(
    'dynamodb:Query',
    'invalid-response',
    `Malformed finding item ${String(sk)}: ${detail}`
  );
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

interface FindingStoreOptions {
  readonly tableName: string;
  /** Days a resolved finding is kept. */
  readonly resolvedTtlDays: number;
  /** Index entries are stamped with this (ISO); defaults to the finding times. */
  readonly now?: () => Date;
}

/** The port as it was: clusters by name. */
type LegacyFindingStore = {
  [K in keyof FindingStore]: K extends
    | 'nextScanSeq'
    | 'latestScanSeq'
    | 'loadFindings'
    | 'replaceClusterIndex'
    ? FindingStore[K] extends (cluster: ClusterIdentity, ...rest: infer A) => infer R
      ? (cluster: string, ...rest: A) => R
      : never
    : FindingStore[K];
};

/**
 * An earlier version's store behind today's port: a cluster is its name (a scan stamp's
 * cluster is not read: the earlier stamps had none).
 */
export function legacyPort(legacy: LegacyFindingStore): FindingStore {
  return {
    ...legacy,
    nextScanSeq: (cluster) => legacy.nextScanSeq(cluster.name),
    latestScanSeq: (cluster) => legacy.latestScanSeq(cluster.name),
    loadFindings: (cluster) => legacy.loadFindings(cluster.name),
    replaceClusterIndex: (cluster, entries) => legacy.replaceClusterIndex(cluster.name, entries),
  };
}

export function createLegacyFindingStore(
  client: DocumentSender,
  options: FindingStoreOptions
): LegacyFindingStore {
  const { tableName } = options;

  function findingItem(state: FindingState, scanSeq?: number): Record<string, unknown> {
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
      materialHash: state.materialHash,
      firstSeen: state.firstSeen,
      lastSeen: state.lastSeen,
      lastNotified: state.lastNotified,
      resolvedAt: state.resolvedAt,
      revision: state.revision,
      scanSeq,
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
        operation,
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
    await batchWriteItems(client, tableName, requests);
  }

  /** The largest the item of `finding`'s state can get: resolved, with a claim pending. */
  function largestFindingItemBytes(finding: Finding): number {
    const item = findingItem(
      {
        id: finding.id,
        checkId: finding.checkId,
        resource: finding.resource,
        status: 'resolved',
        findingStatus: finding.status === 'error' ? 'error' : 'fail',
        severity: finding.severity,
        message: finding.message,
        materialHash: finding.materialHash,
        firstSeen: LONGEST_TIME,
        lastSeen: LONGEST_TIME,
        lastNotified: LONGEST_TIME,
        resolvedAt: LONGEST_TIME,
        revision: Number.MAX_SAFE_INTEGER,
      },
      Number.MAX_SAFE_INTEGER
    );
    const pending = {
      pendingKind: 'reminder',
      pendingScanId: LONGEST_SCAN_ID,
      pendingSeq: Number.MAX_SAFE_INTEGER,
      pendingSince: LONGEST_TIME,
    };
    return (
      itemBytes({ ...item, ...pending }) + utf8Length('pendingMessage') + PENDING_MESSAGE_RESERVE
    );
  }

  function oversizedIndexEntry(entry: NodeClassIndexEntry): OversizedItem | undefined {
    const item = indexItem(entry);
    const bytes = itemBytes(item);
    if (bytes <= MAX_ITEM_BYTES) return undefined;
    const fields = new Set<string>(Object.keys(entry));
    const largest = attributeSizes(item).find(([name]) => fields.has(name))?.[0];
    return {
      item: 'nodeclass-index',
      entry: { cluster: entry.cluster, name: entry.name },
      bytes,
      maxBytes: MAX_ITEM_BYTES,
      ...(largest === undefined ? {} : { largestField: largest as keyof NodeClassIndexEntry }),
    };
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

  const findingKey = (state: FindingState) => ({
    pk: findingPk(state.resource.cluster),
    sk: findingSk(state.id),
  });
  const seqKey = (cluster: string) => ({ pk: findingPk(cluster), sk: SCAN_SEQ_SK });
  // A stored `scanSeq` lower than the writer's (or none: items written before it existed).
  const NEWER_SCAN = '(attribute_not_exists(scanSeq) OR scanSeq < :scanSeq)';
  /** The claim's condition on an item that exists: same revision, no publish pending, newer scan. */
  const transitionCondition = (previous: FindingState, stamp: { scanSeq: number }) => ({
    ConditionExpression: `revision = :revision AND attribute_not_exists(pendingSeq) AND ${NEWER_SCAN}`,
    ExpressionAttributeValues: { ':revision': previous.revision, ':scanSeq': stamp.scanSeq },
  });

  async function send<T>(operation: string, run: () => Promise<T>): Promise<T | undefined> {
    try {
      return await run();
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw toSourceUnavailable(operation, error);
    }
  }

  /** Conditional updates of many items, `WRITE_CONCURRENCY` at a time; lost conditions ignored. */
  async function updateEach<T>(
    items: readonly T[],
    input: (item: T) => Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>
  ): Promise<void> {
    await inBatches(items, WRITE_CONCURRENCY, async (batch) => {
      await Promise.all(
        batch.map((item) =>
          send('dynamodb:UpdateItem', () =>
            client.send(new UpdateCommand({ TableName: tableName, ...input(item) }))
          )
        )
      );
    });
  }

  return {
    async nextScanSeq(cluster) {
      const response = await send('dynamodb:UpdateItem', () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: seqKey(cluster),
            UpdateExpression: 'ADD #seq :one SET #type = :type',
            ExpressionAttributeNames: { '#seq': 'seq', '#type': 'type' },
            ExpressionAttributeValues: { ':one': 1, ':type': 'scan-seq' },
            ReturnValues: 'UPDATED_NEW',
          })
        )
      );
      const seq = response?.Attributes?.seq;
      if (typeof seq !== 'number') {
        throw new SourceUnavailableError(
          'dynamodb:UpdateItem',
          'invalid-response',
          `Scan counter of ${cluster} returned no number`
        );
      }
      return seq;
    },

    async latestScanSeq(cluster) {
      const response = await send('dynamodb:GetItem', () =>
        client.send(
          new GetCommand({ TableName: tableName, Key: seqKey(cluster), ConsistentRead: true })
        )
      );
      const seq = response?.Item?.seq;
      return typeof seq === 'number' ? seq : 0;
    },

    async loadFindings(cluster) {
      const items = await query('dynamodb:Query', {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': findingPk(cluster), ':prefix': 'FINDING#' },
        // The diff must see the previous delivery's writes.
        ConsistentRead: true,
      });
      const states: FindingState[] = [];
      const pending: PendingPublish[] = [];
      for (const item of items) {
        const parsed = FindingItemSchema.safeParse(item);
        if (!parsed.success) throw malformed(item.sk, parsed.error.issues[0]?.message ?? '');
        const {
          cluster: itemCluster,
          resourceKind,
          resourceName,
          scanSeq: _scanSeq,
          pendingKind,
          pendingMessage,
          pendingScanId,
          pendingSeq,
          pendingSince,
          ...rest
        } = parsed.data;
        const state = withoutUndefined({
          ...rest,
          resource: { cluster: itemCluster, kind: resourceKind, name: resourceName },
        }) as FindingState;
        states.push(state);
        if (pendingSeq === undefined) continue;
        const message = pendingMessage === undefined ? undefined : parseMessage(pendingMessage);
        if (!message || !pendingKind || pendingScanId === undefined || !pendingSince) {
          throw malformed(item.sk, 'incomplete pending publish');
        }
        pending.push({
          kind: pendingKind,
          state,
          message,
          scanId: pendingScanId,
          scanSeq: pendingSeq,
          since: pendingSince,
        });
      }
      return { states, pending };
    },

    async claim(change: LifecycleChange, { stamp, message }) {
      const previous = change.previous;
      const item = {
        ...findingItem(change.next, stamp.scanSeq),
        pendingKind: change.kind,
        pendingMessage: JSON.stringify(message),
        pendingScanId: stamp.scanId,
        pendingSeq: stamp.scanSeq,
        pendingSince: stamp.at,
      };
      assertItemFits(item);
      const written = await send('dynamodb:PutItem', () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ...(previous === undefined
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : transitionCondition(previous, stamp)),
          })
        )
      );
      return written !== undefined;
    },

    async close({ previous, next }, stamp) {
      const item = findingItem(next, stamp.scanSeq);
      assertItemFits(item);
      const written = await send('dynamodb:PutItem', () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ...transitionCondition(previous, stamp),
          })
        )
      );
      return written !== undefined;
    },

    async adopt(pending, stamp) {
      const written = await send('dynamodb:UpdateItem', () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: findingKey(pending.state),
            UpdateExpression:
              'SET pendingScanId = :scanId, pendingSeq = :scanSeq, pendingSince = :since',
            ConditionExpression: 'revision = :revision AND pendingSeq = :owner',
            ExpressionAttributeValues: {
              ':scanId': stamp.scanId,
              ':scanSeq': stamp.scanSeq,
              ':since': stamp.at,
              ':revision': pending.state.revision,
              ':owner': pending.scanSeq,
            },
          })
        )
      );
      return written !== undefined;
    },

    async clearPending(states, stamp) {
      await updateEach(states, (state) => ({
        Key: findingKey(state),
        UpdateExpression: `REMOVE ${PENDING_ATTRIBUTES.join(', ')}`,
        ConditionExpression: 'revision = :revision AND pendingSeq = :scanSeq',
        ExpressionAttributeValues: { ':revision': state.revision, ':scanSeq': stamp.scanSeq },
      }));
    },

    async release(change: LifecycleChange, stamp) {
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
          // The releasing scan's sequence stays: an older view still may not overwrite it.
          const item = findingItem(change.previous, stamp.scanSeq);
          assertItemFits(item);
          await client.send(new PutCommand({ TableName: tableName, Item: item, ...condition }));
        }
      } catch (error) {
        // Someone moved the item on since: their state stands.
        if (isConditionFailure(error)) return;
        if (error instanceof ItemTooLargeError) throw error;
        throw toSourceUnavailable(
          change.previous === undefined ? 'dynamodb:DeleteItem' : 'dynamodb:PutItem',
          error
        );
      }
    },

    async touch(states, stamp) {
      await updateEach(states, (state) => ({
        Key: findingKey(state),
        UpdateExpression:
          state.materialHash === undefined
            ? 'SET lastSeen = :lastSeen, scanSeq = :scanSeq'
            : 'SET lastSeen = :lastSeen, materialHash = :materialHash, scanSeq = :scanSeq',
        ConditionExpression: `revision = :revision AND #status = :open AND ${NEWER_SCAN}`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':lastSeen': state.lastSeen,
          ':revision': state.revision,
          ':open': 'open',
          ':scanSeq': stamp.scanSeq,
          ...(state.materialHash === undefined ? {} : { ':materialHash': state.materialHash }),
        },
      }));
    },

    async oversizedItems({ findings, index }) {
      const oversized: OversizedItem[] = [];
      for (const finding of findings) {
        if (finding.status !== 'fail' && finding.status !== 'error') continue;
        const bytes = largestFindingItemBytes(finding);
        if (bytes > MAX_ITEM_BYTES)
          oversized.push({ item: 'finding-state', finding, bytes, maxBytes: MAX_ITEM_BYTES });
      }
      for (const entry of index) {
        const item = oversizedIndexEntry(entry);
        if (item !== undefined) oversized.push(item);
      }
      return oversized;
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
