// DynamoDB (single table, `pk`/`sk`) implementation of the FindingStore port. A cluster is keyed
// by its identity, `<account>/<region>/<name>` (`clusterKey`): EKS names are unique only within
// one account and region.
//   Finding state:   pk = CLUSTER#<account>/<region>/<name>  sk = FINDING#<finding id>
//   Scan counter:    pk = CLUSTER#<account>/<region>/<name>  sk = SCAN#SEQ   (attribute `seq`)
//   NodeClass index: pk = NODECLASS  sk = <account>/<region>/<name>#<nodeclass>
//                    (EKS names cannot contain '#' or '/'); a full scan writes only the rows
//                    whose content changed, so `updatedAt` is when a row last changed
// Every notifying transition is a conditional Put on `revision` and on `scanSeq` (the sequence of
// the scan that last wrote the item), so two deliveries of the same event, or a scan holding an
// older view than the last writer, cannot both win and both alert. A claim carries its rendered
// notification (`pending*` attributes) until the publish is confirmed: a scan that dies in
// between leaves it for the next attempt instead of losing it. A silent close (the finding is now
// suppressed, or a follow-on of another) is the same conditional Put without a pending publish.
// Resolved findings carry `expiresAt` (epoch seconds), the table's TTL attribute.
//   First-scan batch: pk = CLUSTER#<account>/<region>/<name>  sk = BATCH#<scan seq>#<chunk>
// A first scan's summary is claimed as one unit (`claimBatch`), so its size never multiplies: the
// message and the claimed states are written ONCE, in chunk items of at most BATCH_CHUNK_BYTES;
// then one conditional update of the scan counter takes the claim (`batch*` attributes: no newer
// scan started, no other batch pending); then the finding items are batch-written without pending
// attributes. The counter's marker is the pending publish of every change of the batch: a later
// load turns it into one PendingPublish per change, an adopter takes the marker over and writes
// the finding items still missing (never over one that exists), and the publish removes the
// marker, then the chunks. A release deletes the first sightings still as claimed (same
// revision, nothing pending on them), then removes the marker, and the chunks only if it did (a
// scan that took the batch over publishes it instead); one stopped in between leaves the marker,
// so the batch is taken over and published: never stored without an alert. Chunks are deleted
// only once no marker names them, so a marker never names chunks that are gone. Chunks no marker
// names and older than BATCH_ORPHAN_AGE_MS (a scan that lost the claim or died before it) are
// deleted by the next load.
//   Summary:         pk = CLUSTER#<account>/<region>/<name>  sk = SUMMARY#<scan seq>#<message id>#<chunk>
// Any other summary (more changes than the batch threshold) is claimed change by change, each
// claim conditional as above, but its message and the changes it covers are written ONCE, in
// chunk items of at most BATCH_CHUNK_BYTES, before the first claim that carries it; each claim
// holds only the reference (`pendingSummarySeq` + `pendingMessageId`), so no claim item grows with
// the summary. The scan that published a summary deletes its chunks when it held and cleared
// every claim naming it; chunks no pending claim names and older than BATCH_ORPHAN_AGE_MS (every
// claim lost, released, or taken over elsewhere) are deleted by a load.
// Ambiguous writes: the SDK retries a write whose answer was lost, and the retry of one that was
// applied fails its condition. Each claim, takeover and settle therefore asks for the item as the
// failed condition found it (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`, read back when the
// answer has none) and counts its own earlier write (same owner sequence, key, revision) as won.
// Loads never get stuck: a load is no snapshot (a claim or a settle may run between its pages),
// so a reference it cannot resolve is read again once. Still missing (left by a defect or a lost
// write), it is healed and logged as a warning: a batch marker whose chunks are gone is dropped
// (its states are then handled as not claimed: those never stored alert again as new), and a
// claim whose summary is gone is published as its own one-change message (sent twice at worst,
// never lost). Either way the cluster keeps being scanned.
// No item is sent that DynamoDB would refuse for its size (`item-size.ts`): `oversizedItems` tells
// the scan beforehand which of its items would be, and every Put checks again (`ItemTooLargeError`).
//
// State of earlier versions, keyed by the cluster name alone (`CLUSTER#<name>`, index
// `<name>#<nodeclass>`), is adopted by the first load of each cluster identity (`adoptLegacy`):
// the identity's counter item records that it looked (`legacyChecked`), so later loads cost
// nothing more. Adoption copies each legacy finding item under the identity with a conditional
// Put that never overwrites (idempotent, and safe beside a concurrent scan that already moved
// on), then deletes the legacy items. Two identities of one name (two regions) cannot both take
// it: the legacy counter item records the adopter (`adoptedBy`, set conditionally) and stays as a
// tombstone until its TTL. The legacy index names each NodeClass's region: its entries move to
// the identity of that region, and legacy state is not adopted by an identity of a region the
// legacy index does not name (it belonged to the same-named cluster of another region).
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { findCheck } from '../../core/checks/index.js';
import { type ClusterIdentity, clusterKey } from '../../core/cluster-identity.js';
import type { NodeClassIndexEntry } from '../../core/event-index.js';
import {
  CHANGE_KINDS,
  type ChangeKind,
  type FindingState,
  type LifecycleChange,
  type PendingPublish,
  type ScanStamp,
} from '../../core/lifecycle.js';
import { type Finding, SEVERITIES } from '../../core/model.js';
import {
  MAX_MESSAGE_BYTES,
  type OutgoingMessage,
  renderChangeMessage,
} from '../../core/notify/message.js';
import type { AppLogger, FindingStore } from '../../core/ports/service.js';
import type { OversizedItem } from '../../core/storage-limits.js';
import { utf8Length } from '../../core/text-budget.js';
import { ItemTooLargeError, SourceUnavailableError } from '../../shared/errors.js';
import { sortedKeysJson } from '../../shared/sorted-keys-json.js';
import { toSourceUnavailable } from './aws-errors.js';
import { batchWriteItems, type DocumentSender } from './dynamodb-batch.js';
import { assertItemFits, attributeSizes, itemBytes, MAX_ITEM_BYTES } from './item-size.js';
import { collectPages } from './paginate.js';

export type { DocumentSender } from './dynamodb-batch.js';

export const findingStoreActions = [
  'dynamodb:Query',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
] as const;

const INDEX_PK = 'NODECLASS';
const TTL_ATTRIBUTE = 'expiresAt';
const WRITE_CONCURRENCY = 10;
/**
 * BatchWriteItem requests in flight: a large first scan writes thousands of items, and one
 * request after the other waits out each round trip (800 for 20,000 states).
 */
const BATCH_WRITE_CONCURRENCY = 4;

const findingPk = (cluster: ClusterIdentity) => `CLUSTER#${clusterKey(cluster)}`;
const findingSk = (id: string) => `FINDING#${id}`;
const FINDING_PREFIX = 'FINDING#';
/** The identity of an index entry's cluster (empty parts only on entries of earlier versions). */
const entryCluster = (entry: NodeClassIndexEntry): ClusterIdentity => ({
  account: entry.account ?? '',
  region: entry.region ?? '',
  name: entry.cluster,
});
const indexPrefix = (cluster: ClusterIdentity) => `${clusterKey(cluster)}#`;
const indexSk = (entry: NodeClassIndexEntry) => `${indexPrefix(entryCluster(entry))}${entry.name}`;
/** Keys of state stored before cluster identities: the cluster name alone. */
const legacyPk = (name: string) => `CLUSTER#${name}`;
const legacyIndexPrefix = (name: string) => `${name}#`;
/** The per-cluster scan counter shares the findings' partition, outside the `FINDING#` range. */
const SCAN_SEQ_SK = 'SCAN#SEQ';
/** On an identity's counter item: legacy state was looked for (and adopted, when it was ours). */
const LEGACY_CHECKED = 'legacyChecked';
/** On a legacy counter item: the identity (`clusterKey`) that adopted the legacy state. */
const ADOPTED_BY = 'adoptedBy';
/** Attributes of the counter item naming the first-scan batch pending publish (see the header). */
const BATCH_MARKER_ATTRIBUTES = [
  'batchKey',
  'batchChunks',
  'batchMessageId',
  'batchOwnerSeq',
  'batchScanId',
  'batchSince',
] as const;
const BATCH_PREFIX = 'BATCH#';
const batchSk = (key: number, chunk: number) =>
  `${BATCH_PREFIX}${String(key).padStart(16, '0')}#${String(chunk).padStart(6, '0')}`;
/**
 * The most a chunk's members (and, on the first chunk, the message) may take: a chunk that holds
 * one member only may take more, as much as that state (itself bounded by the finding item's
 * limit); keys and stamps take little. Every chunk stays under DynamoDB's 400 KB.
 */
export const BATCH_CHUNK_BYTES = 300 * 1024;
/** Older than any Lambda invocation: a chunk no marker names is then no scan's any more. */
const BATCH_ORPHAN_AGE_MS = 60 * 60 * 1000;
const SUMMARY_PREFIX = 'SUMMARY#';
/** Message ids are `[A-Za-z0-9_-]{1,80}` (`OutgoingMessage`): safe inside a sort key. */
const summarySk = (seq: number, messageId: string, chunk: number) =>
  `${SUMMARY_PREFIX}${String(seq).padStart(16, '0')}#${messageId}#${String(chunk).padStart(6, '0')}`;
const PENDING_ATTRIBUTES = [
  'pendingKind',
  'pendingMessage',
  'pendingMessageId',
  'pendingScanId',
  'pendingSeq',
  'pendingSince',
  'pendingSummarySeq',
] as const;

/**
 * Room the pending notification of a claim may take: the renderer bounds a message's bodies to
 * `MAX_MESSAGE_BYTES`; its subject, attributes and its one covered change take the rest (a
 * summary is stored apart, the claim holds its reference).
 */
const PENDING_MESSAGE_RESERVE = MAX_MESSAGE_BYTES + 16 * 1024;
/** Stand-ins of the longest values a stored state takes on over its life. */
const LONGEST_TIME = '2000-01-01T00:00:00.000Z';
const LONGEST_SCAN_ID = 'x'.repeat(256);
/** An account and a region longer than any, for the key of a state measured before it is written. */
const LONGEST_ACCOUNT = '0'.repeat(12);
const LONGEST_REGION = 'x'.repeat(32);

const FindingItemSchema = z.object({
  id: z.string(),
  checkId: z.string(),
  cluster: z.string(),
  // The cluster's account and region (absent on items of earlier versions; the key has them).
  account: z.string().optional(),
  region: z.string().optional(),
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
  // The message inline (one change), or a reference to a stored summary (sequence and id).
  pendingMessage: z.string().optional(),
  pendingSummarySeq: z.number().int().optional(),
  pendingMessageId: z.string().optional(),
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

const BatchMarkerSchema = z.object({
  batchKey: z.number().int(),
  batchChunks: z.number().int().min(1),
  batchMessageId: z.string(),
  batchOwnerSeq: z.number().int(),
  batchScanId: z.string(),
  batchSince: z.string(),
});
type BatchMarker = z.infer<typeof BatchMarkerSchema>;

const BatchChunkSchema = z.object({
  batchKey: z.number().int(),
  chunk: z.number().int().min(0),
  createdAt: z.string(),
  members: z.string(),
  message: z.string().optional(),
});

const SummaryChunkSchema = z.object({
  summarySeq: z.number().int(),
  messageId: z.string(),
  chunk: z.number().int().min(0),
  chunks: z.number().int().min(1),
  createdAt: z.string(),
  covers: z.string(),
  message: z.string().optional(),
});

/** One change of a batch as its chunk stores it: the change kind and the claimed state. */
const BatchMemberSchema = z.tuple([
  z.enum(CHANGE_KINDS),
  z
    .object({
      id: z.string(),
      checkId: z.string(),
      resource: z.object({
        cluster: z.string(),
        kind: z.enum(['EC2NodeClass', 'NodePool', 'Cluster']),
        name: z.string(),
      }),
      status: z.enum(['open', 'resolved']),
      findingStatus: z.enum(['fail', 'error']),
      severity: z.enum(SEVERITIES),
      message: z.string(),
      firstSeen: z.string(),
      lastSeen: z.string(),
      revision: z.number().int(),
    })
    .loose(),
]);

/** A batch this store claimed, adopted or loaded: what settling or releasing it touches. */
interface BatchRecord {
  readonly key: number;
  readonly chunks: number;
  readonly messageId: string;
  readonly ownerSeq: number;
  readonly states: readonly FindingState[];
  /** Of a loaded batch: the states whose finding item its claimer had not written yet. */
  readonly unwritten?: readonly FindingState[];
}

/** A summary stored apart from its claims, as one store instance knows it (by message id). */
interface SummaryRecord {
  /** The sequence it is stored under (the scan that wrote it). */
  readonly seq: number;
  readonly chunks: number;
  /** Findings whose pending claim named it when the cluster was last loaded. */
  readonly loadedClaims: ReadonlySet<string>;
  /** Written by this instance: until one of its claims is written, no other scan can name it. */
  readonly written: boolean;
  /** Findings whose claim naming it this instance holds (claimed or taken over). */
  readonly held: Set<string>;
}

/**
 * JSON values in order, in chunks of at most `BATCH_CHUNK_BYTES`; the first chunk also holds
 * `headBytes` (the message). One value alone always fits a later chunk (each is bounded itself).
 */
function packChunks(jsons: readonly string[], headBytes: number): string[][] {
  const chunks: string[][] = [[]];
  let used = headBytes;
  for (const json of jsons) {
    const bytes = utf8Length(json) + 1;
    const current = chunks[chunks.length - 1] ?? [];
    const startsNew =
      (current.length > 0 || chunks.length === 1) && used + bytes > BATCH_CHUNK_BYTES;
    if (startsNew) {
      chunks.push([json]);
      used = bytes;
    } else {
      current.push(json);
      used += bytes;
    }
  }
  return chunks;
}

/** A message as a chunk stores it: without its covers (the chunks list them). */
function storedMessageJson(message: OutgoingMessage): string {
  const { covers: _covers, ...stored } = message;
  return JSON.stringify(stored);
}

/**
 * The chunk items of a batch: members packed in order, each chunk's members at most
 * `BATCH_CHUNK_BYTES`; the first chunk carries the message (its `covers` are the members).
 */
export function batchChunkItems(
  pk: string,
  key: number,
  members: readonly { readonly kind: string; readonly state: FindingState }[],
  message: OutgoingMessage,
  createdAt: string
): Record<string, unknown>[] {
  const messageJson = storedMessageJson(message);
  const chunks = packChunks(
    members.map((member) => JSON.stringify([member.kind, member.state])),
    utf8Length(messageJson)
  );
  return chunks.map((jsons, chunk) =>
    withoutUndefined({
      pk,
      sk: batchSk(key, chunk),
      type: 'batch',
      batchKey: key,
      chunk,
      createdAt,
      members: `[${jsons.join(',')}]`,
      message: chunk === 0 ? messageJson : undefined,
    })
  );
}

/**
 * The chunk items of a summary stored once for all its claims: its covers packed in order, each
 * chunk at most `BATCH_CHUNK_BYTES`; the first chunk carries the message.
 */
export function summaryChunkItems(
  pk: string,
  seq: number,
  message: OutgoingMessage,
  createdAt: string
): Record<string, unknown>[] {
  const messageJson = storedMessageJson(message);
  const chunks = packChunks(
    (message.covers ?? []).map((cover) => JSON.stringify(cover)),
    utf8Length(messageJson)
  );
  return chunks.map((jsons, chunk) =>
    withoutUndefined({
      pk,
      sk: summarySk(seq, message.id, chunk),
      type: 'summary',
      summarySeq: seq,
      messageId: message.id,
      chunk,
      chunks: chunks.length,
      createdAt,
      covers: `[${jsons.join(',')}]`,
      message: chunk === 0 ? messageJson : undefined,
    })
  );
}

/** Whether a claim stores `message` apart and holds a reference: it lists more than one change. */
const storedApart = (message: OutgoingMessage) => (message.covers?.length ?? 0) > 1;

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
  account: z.string().optional(),
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

/** Whether a stored index item already holds what `next` would write (its stamp aside). */
function sameIndexItem(
  stored: Record<string, unknown> | undefined,
  next: Record<string, unknown>
): boolean {
  if (stored === undefined) return false;
  const { updatedAt: _storedAt, ...storedFields } = stored;
  const { updatedAt: _nextAt, ...nextFields } = next;
  return sortedKeysJson(storedFields) === sortedKeysJson(nextFields);
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

/** The scalar attributes of an item as they stood when a write's condition failed. */
type StoredScalars = Readonly<Record<string, string | number | boolean | undefined>>;

/**
 * The item a failed condition returns (`ReturnValuesOnConditionCheckFailure`): the document
 * client leaves it in DynamoDB's wire form (`{ N: '7' }`). Only scalars are compared.
 */
function failedConditionItem(error: unknown): StoredScalars | undefined {
  const item = (error as { Item?: unknown } | undefined)?.Item;
  if (item === null || typeof item !== 'object') return undefined;
  return Object.fromEntries(
    Object.entries(item as Record<string, unknown>).map(([name, value]) => {
      const wire = (value ?? {}) as { S?: unknown; N?: unknown; BOOL?: unknown };
      if (typeof wire.S === 'string') return [name, wire.S];
      if (typeof wire.N === 'string') return [name, Number(wire.N)];
      if (typeof wire.BOOL === 'boolean') return [name, wire.BOOL];
      return [name, undefined];
    })
  );
}

/** The scalar attributes of an item the document client read. */
function scalarsOf(item: Record<string, unknown> | undefined): StoredScalars | undefined {
  if (item === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(item).map(([name, value]) => [
      name,
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
        ? value
        : undefined,
    ])
  );
}

/**
 * Scans whose batch state one store instance keeps (a warm Lambda runs scan after scan): far
 * more than run at once in one instance, so only finished scans' entries are dropped.
 */
const REMEMBERED_SCANS = 256;

/** Sets `key`, dropping the oldest entries past `limit` (a Map iterates in insertion order). */
function remember<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= limit) break;
    map.delete(oldest);
  }
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
  /**
   * The deployment's home region: the region of a legacy index entry that names none (earlier
   * versions stored home-region clusters' entries without it).
   */
  readonly homeRegion: string;
  /** Index entries are stamped with this (ISO); defaults to the finding times. */
  readonly now?: () => Date;
  /** Told what a load healed (a reference to stored items that are gone). */
  readonly logger?: Pick<AppLogger, 'warn'>;
}

export function createFindingStore(
  client: DocumentSender,
  options: FindingStoreOptions
): FindingStore {
  const { tableName } = options;

  const now = () => options.now?.() ?? new Date();

  function findingItem(
    state: FindingState,
    cluster: ClusterIdentity,
    scanSeq?: number
  ): Record<string, unknown> {
    const expiresAt =
      state.status === 'resolved' && state.resolvedAt !== undefined
        ? Math.floor(Date.parse(state.resolvedAt) / 1000) + options.resolvedTtlDays * 86_400
        : undefined;
    return withoutUndefined({
      pk: findingPk(cluster),
      sk: findingSk(state.id),
      type: 'finding',
      id: state.id,
      checkId: state.checkId,
      cluster: state.resource.cluster,
      account: cluster.account,
      region: cluster.region,
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
      sk: indexSk(entry),
      type: 'nodeclass',
      cluster: entry.cluster,
      account: entry.account,
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
        (page) => (page.LastEvaluatedKey ? JSON.stringify(page.LastEvaluatedKey) : undefined),
        // The table's key: cheaper than the content of every item of a large cluster.
        {
          identityOf: ({ pk, sk }) =>
            typeof pk === 'string' && typeof sk === 'string' ? `${pk}\u0000${sk}` : undefined,
        }
      );
    } catch (error) {
      throw toSourceUnavailable(operation, error);
    }
  }

  async function batchWrite(requests: Record<string, unknown>[]): Promise<void> {
    await batchWriteItems(client, tableName, requests, BATCH_WRITE_CONCURRENCY);
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
      { account: LONGEST_ACCOUNT, region: LONGEST_REGION, name: finding.resource.cluster },
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

  /** Index items under `prefix` (all of them without one), with their keys and stored items. */
  async function indexRows(prefix?: string): Promise<
    {
      readonly sk: string;
      readonly entry: NodeClassIndexEntry;
      readonly item: Record<string, unknown>;
    }[]
  > {
    const items = await query('dynamodb:Query', {
      KeyConditionExpression:
        prefix === undefined ? 'pk = :pk' : 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': INDEX_PK,
        ...(prefix === undefined ? {} : { ':prefix': prefix }),
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
      return {
        sk: String(item.sk),
        entry: withoutUndefined(parsed.data) as NodeClassIndexEntry,
        item,
      };
    });
  }

  const findingKey = (state: FindingState, stamp: ScanStamp) => ({
    pk: findingPk(stamp.cluster),
    sk: findingSk(state.id),
  });
  const seqKey = (cluster: ClusterIdentity) => ({ pk: findingPk(cluster), sk: SCAN_SEQ_SK });
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

  /**
   * A conditional write sent with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`: written, or
   * the item as its condition found it, so a retry of a write that was applied (its answer lost)
   * can be told by what it finds. An answer without the item is read back (the item does not
   * exist, or a table emulator does not return it).
   */
  async function writeOrFind(
    operation: string,
    key: Record<string, unknown>,
    run: () => Promise<unknown>
  ): Promise<
    { readonly written: true } | { readonly written: false; readonly found?: StoredScalars }
  > {
    try {
      await run();
      return { written: true };
    } catch (error) {
      if (!isConditionFailure(error)) throw toSourceUnavailable(operation, error);
      const returned = failedConditionItem(error);
      if (returned !== undefined) return { written: false, found: returned };
      const read = await send('dynamodb:GetItem', () =>
        client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))
      );
      const found = scalarsOf(read?.Item);
      return found === undefined ? { written: false } : { written: false, found };
    }
  }

  /**
   * Conditional updates of many items, `WRITE_CONCURRENCY` at a time: whether each was written (a
   * lost condition is no error, only false).
   */
  async function updateEach<T>(
    items: readonly T[],
    input: (item: T) => Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>
  ): Promise<boolean[]> {
    const written: boolean[] = [];
    await inBatches(items, WRITE_CONCURRENCY, async (batch) => {
      const results = await Promise.all(
        batch.map((item) =>
          send('dynamodb:UpdateItem', () =>
            client.send(new UpdateCommand({ TableName: tableName, ...input(item) }))
          )
        )
      );
      written.push(...results.map((result) => result !== undefined));
    });
    return written;
  }

  /** A finding item of the table, parsed (a malformed one fails the load: never silently lost). */
  function parseFindingItem(item: Record<string, unknown>) {
    const parsed = FindingItemSchema.safeParse(item);
    if (!parsed.success) throw malformed(item.sk, parsed.error.issues[0]?.message ?? '');
    return parsed.data;
  }

  const isFindingItem = (item: Record<string, unknown>) =>
    typeof item.sk === 'string' && item.sk.startsWith(FINDING_PREFIX);

  /**
   * Claims the legacy state of `cluster`'s name for this identity: true when no other identity
   * took it first (a second attempt of the same identity claims it again).
   */
  async function claimLegacy(cluster: ClusterIdentity): Promise<boolean> {
    const written = await send('dynamodb:UpdateItem', () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: legacyPk(cluster.name), sk: SCAN_SEQ_SK },
          UpdateExpression: 'SET #adoptedBy = :me, #ttl = :expires',
          ConditionExpression: 'attribute_not_exists(#adoptedBy) OR #adoptedBy = :me',
          ExpressionAttributeNames: { '#adoptedBy': ADOPTED_BY, '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: {
            ':me': clusterKey(cluster),
            // The tombstone outlives any scan that read the legacy state before it was deleted.
            ':expires': Math.floor(now().getTime() / 1000) + options.resolvedTtlDays * 86_400,
          },
        })
      )
    );
    return written !== undefined;
  }

  /**
   * A legacy finding item as this identity's: the identity's key and attributes, no `scanSeq`
   * (the identity's counter starts again: any of its scans is newer), and a pending publish owned
   * by sequence 0 (older than any of its scans, so a redelivery of the same message takes it
   * over at once, and another scan after the usual lease).
   */
  function adoptedItem(item: Record<string, unknown>, cluster: ClusterIdentity) {
    const { scanSeq: _scanSeq, ...rest } = item;
    return {
      ...rest,
      pk: findingPk(cluster),
      account: cluster.account,
      region: cluster.region,
      ...(rest.pendingSeq === undefined ? {} : { pendingSeq: 0 }),
    };
  }

  /** Copies legacy finding items under `cluster`, never over an item that exists. */
  async function copyLegacyFindings(
    items: readonly Record<string, unknown>[],
    cluster: ClusterIdentity
  ): Promise<void> {
    await inBatches(items, WRITE_CONCURRENCY, async (batch) => {
      await Promise.all(
        batch.map(async (legacy) => {
          parseFindingItem(legacy);
          const item = adoptedItem(legacy, cluster);
          // One that cannot be held under the longer key is left: its finding alerts as new.
          if (itemBytes(item) > MAX_ITEM_BYTES) return;
          // A lost condition: a concurrent adoption, or a scan that moved on, wrote it first.
          await send('dynamodb:PutItem', () =>
            client.send(
              new PutCommand({
                TableName: tableName,
                Item: item,
                ConditionExpression: 'attribute_not_exists(pk)',
              })
            )
          );
        })
      );
    });
  }

  /**
   * Adopts what an earlier version stored under `cluster`'s name alone, once per identity (see the
   * header). Returns whether any legacy finding was adopted (the caller reloads then).
   */
  async function adoptLegacy(cluster: ClusterIdentity): Promise<boolean> {
    const legacyFindings = (
      await query('dynamodb:Query', {
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': legacyPk(cluster.name), ':prefix': FINDING_PREFIX },
        ConsistentRead: true,
      })
    ).filter(isFindingItem);
    const legacyIndex = await indexRows(legacyIndexPrefix(cluster.name));
    const ours = legacyIndex.filter(
      ({ entry }) => (entry.region ?? options.homeRegion) === cluster.region
    );
    // The legacy index places the name's NodeClasses in other regions only: not ours.
    const heir =
      legacyFindings.length > 0 &&
      (legacyIndex.length === 0 || ours.length > 0) &&
      (await claimLegacy(cluster));
    if (heir) await copyLegacyFindings(legacyFindings, cluster);
    // The legacy index entries of this region become the identity's (a fresher entry stands).
    await inBatches(ours, WRITE_CONCURRENCY, async (batch) => {
      await Promise.all(
        batch.map(({ entry }) =>
          send('dynamodb:PutItem', () =>
            client.send(
              new PutCommand({
                TableName: tableName,
                Item: indexItem({ ...entry, account: cluster.account, region: cluster.region }),
                ConditionExpression: 'attribute_not_exists(pk)',
              })
            )
          )
        )
      );
    });
    await batchWrite([
      ...(heir ? legacyFindings : []).map((item) => ({
        DeleteRequest: { Key: { pk: item.pk, sk: item.sk } },
      })),
      ...ours.map(({ sk }) => ({ DeleteRequest: { Key: { pk: INDEX_PK, sk } } })),
    ]);
    // Recorded last: an attempt that stops before this one is repeated by the next load.
    await send('dynamodb:UpdateItem', () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: seqKey(cluster),
          UpdateExpression: 'SET #checked = :true',
          ExpressionAttributeNames: { '#checked': LEGACY_CHECKED },
          ExpressionAttributeValues: { ':true': true },
        })
      )
    );
    return heir;
  }

  async function findingItemsOf(cluster: ClusterIdentity) {
    return query('dynamodb:Query', {
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': findingPk(cluster) },
      // The diff must see the previous delivery's writes.
      ConsistentRead: true,
    });
  }

  /** The batch each cluster's last load found pending (by partition key). */
  const loadedBatches = new Map<string, BatchRecord>();
  /** Batches a scan holds (claimed or adopted), by `<pk>|<scan seq>`; see REMEMBERED_SCANS. */
  const heldBatches = new Map<string, BatchRecord>();
  /** One takeover or release of a batch however many of its changes ask for it. */
  const batchOnce = new Map<string, Promise<boolean>>();
  const heldKey = (cluster: ClusterIdentity, scanSeq: number) => `${findingPk(cluster)}|${scanSeq}`;

  function once(key: string, run: () => Promise<boolean>): Promise<boolean> {
    const existing = batchOnce.get(key);
    if (existing !== undefined) return existing;
    const started = run().catch((error: unknown) => {
      // A failed attempt may be tried again.
      batchOnce.delete(key);
      throw error;
    });
    remember(batchOnce, key, started, 2 * REMEMBERED_SCANS);
    return started;
  }

  const batchChunkKeys = (cluster: ClusterIdentity, batch: Pick<BatchRecord, 'key' | 'chunks'>) =>
    Array.from({ length: batch.chunks }, (_, chunk) => ({
      DeleteRequest: { Key: { pk: findingPk(cluster), sk: batchSk(batch.key, chunk) } },
    }));

  /**
   * Removes the counter's marker of `batch` while `ownerSeq` holds it. True when no marker names
   * the batch any more (removed now, or by this owner's earlier attempt whose answer was lost);
   * false when another scan holds it (its takeover: the chunks are still its).
   */
  async function removeBatchMarker(
    cluster: ClusterIdentity,
    batch: Pick<BatchRecord, 'key'>,
    ownerSeq: number
  ): Promise<boolean> {
    const outcome = await writeOrFind('dynamodb:UpdateItem', seqKey(cluster), () =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: seqKey(cluster),
          UpdateExpression: `REMOVE ${BATCH_MARKER_ATTRIBUTES.join(', ')}`,
          ConditionExpression: 'batchKey = :key AND batchOwnerSeq = :owner',
          ExpressionAttributeValues: { ':key': batch.key, ':owner': ownerSeq },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        })
      )
    );
    return outcome.written || outcome.found?.batchKey !== batch.key;
  }

  /** Whether the cluster's batch marker is still this batch's, owned by `ownerSeq` (a consistent read). */
  async function holdsBatchMarker(
    cluster: ClusterIdentity,
    batch: Pick<BatchRecord, 'key'>,
    ownerSeq: number
  ): Promise<boolean> {
    const read = await send('dynamodb:GetItem', () =>
      client.send(
        new GetCommand({ TableName: tableName, Key: seqKey(cluster), ConsistentRead: true })
      )
    );
    return read?.Item?.batchKey === batch.key && read.Item.batchOwnerSeq === ownerSeq;
  }

  /** The finding items of a batch's claimed states, written by `scanSeq`, without pending marks. */
  async function writeBatchStates(
    cluster: ClusterIdentity,
    states: readonly FindingState[],
    scanSeq: number
  ) {
    await batchWrite(
      states.map((state) => ({ PutRequest: { Item: findingItem(state, cluster, scanSeq) } }))
    );
  }

  /**
   * The finding items a taken-over batch still misses, each only where none exists: the earlier
   * owner may write one meanwhile, and a newer scan may have moved one on since.
   */
  async function writeMissingBatchStates(
    cluster: ClusterIdentity,
    states: readonly FindingState[],
    scanSeq: number
  ) {
    await inBatches(states, WRITE_CONCURRENCY, async (batch) => {
      await Promise.all(
        batch.map((state) =>
          send('dynamodb:PutItem', () =>
            client.send(
              new PutCommand({
                TableName: tableName,
                Item: findingItem(state, cluster, scanSeq),
                ConditionExpression: 'attribute_not_exists(pk)',
              })
            )
          )
        )
      );
    });
  }

  /**
   * Deletes the first sightings of a released batch that are still as it claimed them (same
   * revision, no publish pending): one a newer scan claimed since is its.
   */
  async function deleteReleasedStates(cluster: ClusterIdentity, states: readonly FindingState[]) {
    await inBatches(states, WRITE_CONCURRENCY, async (batch) => {
      await Promise.all(
        batch.map((state) =>
          send('dynamodb:DeleteItem', () =>
            client.send(
              new DeleteCommand({
                TableName: tableName,
                Key: { pk: findingPk(cluster), sk: findingSk(state.id) },
                ConditionExpression: 'revision = :revision AND attribute_not_exists(pendingSeq)',
                ExpressionAttributeValues: { ':revision': state.revision },
              })
            )
          )
        )
      );
    });
  }

  /**
   * The batch the counter's marker names, as its claimed states and one pending publish per
   * change; chunks of no marker older than BATCH_ORPHAN_AGE_MS are returned for deletion. A
   * marker some of whose chunks are missing is returned as `incomplete`, with the chunks found.
   */
  function loadBatch(
    cluster: ClusterIdentity,
    items: readonly Record<string, unknown>[]
  ): {
    batch?: BatchRecord;
    pending: PendingPublish[];
    orphans: Record<string, unknown>[];
    incomplete?: { readonly marker: BatchMarker; readonly found: readonly string[] };
  } {
    const counter = items.find((item) => item.sk === SCAN_SEQ_SK);
    const marker: BatchMarker | undefined =
      counter?.batchKey === undefined ? undefined : parseBatchMarker(counter);
    const chunks = items
      .filter((item) => typeof item.sk === 'string' && item.sk.startsWith(BATCH_PREFIX))
      .map((item) => {
        const parsed = BatchChunkSchema.safeParse(item);
        if (!parsed.success) throw malformed(item.sk, parsed.error.issues[0]?.message ?? '');
        return { sk: String(item.sk), ...parsed.data };
      });
    const orphanBefore = now().getTime() - BATCH_ORPHAN_AGE_MS;
    const orphans = chunks
      .filter((chunk) => chunk.batchKey !== marker?.batchKey)
      .filter((chunk) => !(Date.parse(chunk.createdAt) > orphanBefore))
      .map((chunk) => ({ DeleteRequest: { Key: { pk: findingPk(cluster), sk: chunk.sk } } }));
    if (marker === undefined) return { pending: [], orphans };
    const own = chunks
      .filter((chunk) => chunk.batchKey === marker.batchKey)
      .sort((a, b) => a.chunk - b.chunk);
    if (own.length !== marker.batchChunks || own.some((chunk, index) => chunk.chunk !== index)) {
      return { pending: [], orphans, incomplete: { marker, found: own.map((chunk) => chunk.sk) } };
    }
    const members = own.flatMap((chunk) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(chunk.members);
      } catch {
        throw malformed(chunk.sk, 'members are not JSON');
      }
      const result = z.array(BatchMemberSchema).safeParse(parsed);
      if (!result.success) throw malformed(chunk.sk, result.error.issues[0]?.message ?? '');
      return result.data.map(([kind, state]) => ({ kind, state: state as FindingState }));
    });
    const head = own[0]?.message === undefined ? undefined : parseMessage(own[0].message);
    if (head === undefined) throw malformed(batchSk(marker.batchKey, 0), 'no readable message');
    const message: OutgoingMessage = {
      ...head,
      covers: members.map((member) => `${member.kind}:${member.state.id}`),
    };
    const batch: BatchRecord = {
      key: marker.batchKey,
      chunks: marker.batchChunks,
      messageId: marker.batchMessageId,
      ownerSeq: marker.batchOwnerSeq,
      states: members.map((member) => member.state),
    };
    return {
      batch,
      orphans,
      pending: members.map((member) => ({
        kind: member.kind,
        state: member.state,
        message,
        scanId: marker.batchScanId,
        scanSeq: marker.batchOwnerSeq,
        since: marker.batchSince,
      })),
    };
  }

  function parseBatchMarker(counter: Record<string, unknown>): BatchMarker {
    const parsed = BatchMarkerSchema.safeParse(counter);
    if (!parsed.success) throw malformed(counter.sk, parsed.error.issues[0]?.message ?? '');
    return parsed.data;
  }

  /** The batch `pending` belongs to, when it is the one the last load of its cluster found. */
  function batchOf(pending: PendingPublish, cluster: ClusterIdentity): BatchRecord | undefined {
    const batch = loadedBatches.get(findingPk(cluster));
    return batch !== undefined &&
      batch.messageId === pending.message.id &&
      batch.ownerSeq === pending.scanSeq
      ? batch
      : undefined;
  }

  /**
   * The summaries stored apart that this instance knows of each cluster (by partition key, then
   * message id) since the cluster's last load: those the load found and those it wrote since.
   */
  const knownSummaries = new Map<string, Map<string, Promise<SummaryRecord>>>();
  function summariesOf(cluster: ClusterIdentity): Map<string, Promise<SummaryRecord>> {
    const pk = findingPk(cluster);
    const known = knownSummaries.get(pk) ?? new Map<string, Promise<SummaryRecord>>();
    knownSummaries.set(pk, known);
    return known;
  }

  /**
   * The stored summary a claim with `message` names: the one the load found, else written now,
   * once however many claims carry it (concurrent claims wait for the same write).
   */
  function storedSummary(message: OutgoingMessage, stamp: ScanStamp): Promise<SummaryRecord> {
    const known = summariesOf(stamp.cluster);
    const existing = known.get(message.id);
    if (existing !== undefined) return existing;
    const written = (async (): Promise<SummaryRecord> => {
      const items = summaryChunkItems(
        findingPk(stamp.cluster),
        stamp.scanSeq,
        message,
        now().toISOString()
      );
      await batchWrite(items.map((item) => ({ PutRequest: { Item: item } })));
      return {
        seq: stamp.scanSeq,
        chunks: items.length,
        loadedClaims: new Set(),
        written: true,
        held: new Set(),
      };
    })().catch((error: unknown) => {
      // A failed write may be tried again by the next claim.
      known.delete(message.id);
      throw error;
    });
    known.set(message.id, written);
    return written;
  }

  const summaryChunkKeys = (cluster: ClusterIdentity, messageId: string, record: SummaryRecord) =>
    Array.from({ length: record.chunks }, (_, chunk) => ({
      DeleteRequest: {
        Key: { pk: findingPk(cluster), sk: summarySk(record.seq, messageId, chunk) },
      },
    }));

  /**
   * Deletes the summaries this instance is done with: every claim naming one (that the load saw
   * or this instance wrote) was held by this instance and is now cleared, or it wrote one and
   * every claim carrying it was lost. Any other is left to the orphan rule of a later load: a
   * claim this instance does not hold may still need it.
   */
  async function deleteSettledSummaries(cluster: ClusterIdentity, cleared: ReadonlySet<string>) {
    const known = summariesOf(cluster);
    for (const [messageId, pending] of [...known]) {
      const record = await pending;
      if (!record.written && record.held.size === 0) continue;
      const heldByOthers = [...record.loadedClaims].some((id) => !record.held.has(id));
      if (heldByOthers || [...record.held].some((id) => !cleared.has(id))) continue;
      await batchWrite(summaryChunkKeys(cluster, messageId, record));
      known.delete(messageId);
    }
  }

  /**
   * The stored summaries of a loaded partition: the one each pending claim names (`resolve`, a
   * summary parsed once however many claims name it), then `settle` with the claims found, which
   * records them for this instance and returns the chunks of summaries no claim names that are
   * older than BATCH_ORPHAN_AGE_MS, for deletion.
   */
  function loadSummaries(cluster: ClusterIdentity, items: readonly Record<string, unknown>[]) {
    const groups = new Map<string, { sk: string; data: z.infer<typeof SummaryChunkSchema> }[]>();
    for (const item of items) {
      if (typeof item.sk !== 'string' || !item.sk.startsWith(SUMMARY_PREFIX)) continue;
      const parsed = SummaryChunkSchema.safeParse(item);
      if (!parsed.success) throw malformed(item.sk, parsed.error.issues[0]?.message ?? '');
      const key = `${parsed.data.summarySeq}|${parsed.data.messageId}`;
      const group = groups.get(key) ?? [];
      group.push({ sk: item.sk, data: parsed.data });
      groups.set(key, group);
    }
    const messages = new Map<string, OutgoingMessage | undefined>();
    const claims = new Map<string, Set<string>>();
    /** The summary a claim names; undefined when some of its chunks are not stored. */
    function resolve(seq: number, messageId: string): OutgoingMessage | undefined {
      const key = `${seq}|${messageId}`;
      if (messages.has(key)) return messages.get(key);
      const found = parseSummary(groups.get(key), messageId);
      messages.set(key, found);
      return found;
    }
    function named(seq: number, messageId: string, findingId: string) {
      const key = `${seq}|${messageId}`;
      claims.set(key, (claims.get(key) ?? new Set()).add(findingId));
    }
    function settle(): Record<string, unknown>[] {
      const known = new Map<string, Promise<SummaryRecord>>();
      const orphanBefore = now().getTime() - BATCH_ORPHAN_AGE_MS;
      const orphans: Record<string, unknown>[] = [];
      for (const [key, chunks] of groups) {
        const [first] = chunks;
        if (first === undefined) continue;
        const loadedClaims = claims.get(key);
        if (loadedClaims !== undefined) {
          known.set(
            first.data.messageId,
            Promise.resolve({
              seq: first.data.summarySeq,
              chunks: first.data.chunks,
              loadedClaims,
              written: false,
              held: new Set<string>(),
            })
          );
        } else if (chunks.every((chunk) => !(Date.parse(chunk.data.createdAt) > orphanBefore))) {
          orphans.push(
            ...chunks.map((chunk) => ({
              DeleteRequest: { Key: { pk: findingPk(cluster), sk: chunk.sk } },
            }))
          );
        }
      }
      knownSummaries.set(findingPk(cluster), known);
      return orphans;
    }
    return { resolve, named, settle };
  }

  /**
   * A stored summary from its chunks, the message and its covers readable; undefined when not
   * every chunk is stored.
   */
  function parseSummary(
    chunks: readonly { sk: string; data: z.infer<typeof SummaryChunkSchema> }[] | undefined,
    messageId: string
  ): OutgoingMessage | undefined {
    const ordered = [...(chunks ?? [])].sort((a, b) => a.data.chunk - b.data.chunk);
    const expected = ordered[0]?.data.chunks ?? 1;
    if (
      ordered.length !== expected ||
      ordered.some((chunk, index) => chunk.data.chunk !== index || chunk.data.chunks !== expected)
    ) {
      return undefined;
    }
    const covers = ordered.flatMap((chunk) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(chunk.data.covers);
      } catch {
        throw malformed(chunk.sk, 'covers are not JSON');
      }
      const result = z.array(z.string()).safeParse(parsed);
      if (!result.success) throw malformed(chunk.sk, result.error.issues[0]?.message ?? '');
      return result.data;
    });
    const head = ordered[0]?.data.message;
    const message = head === undefined ? undefined : parseMessage(head);
    if (message === undefined || message.id !== messageId) {
      throw malformed(ordered[0]?.sk, `no readable message ${messageId}`);
    }
    return { ...message, covers };
  }

  /**
   * One read of a partition: its states, the pending publishes it resolves, and the claims
   * naming a summary not every chunk of which is stored (`unresolved`).
   */
  function readPartition(cluster: ClusterIdentity, items: readonly Record<string, unknown>[]) {
    const states: FindingState[] = [];
    const pending: PendingPublish[] = [];
    const unresolved: (Omit<PendingPublish, 'message'> & {
      readonly summaryId: string;
      readonly summarySeq: number;
    })[] = [];
    const batch = loadBatch(cluster, items);
    const summaries = loadSummaries(cluster, items);
    for (const item of items.filter(isFindingItem)) {
      const {
        cluster: itemCluster,
        account: _account,
        region: _region,
        resourceKind,
        resourceName,
        scanSeq: _scanSeq,
        pendingKind,
        pendingMessage,
        pendingSummarySeq,
        pendingMessageId,
        pendingScanId,
        pendingSeq,
        pendingSince,
        ...rest
      } = parseFindingItem(item);
      const state = withoutUndefined({
        ...rest,
        resource: { cluster: itemCluster, kind: resourceKind, name: resourceName },
      }) as FindingState;
      states.push(state);
      if (pendingSeq === undefined) continue;
      if (!pendingKind || pendingScanId === undefined || !pendingSince) {
        throw malformed(item.sk, 'incomplete pending publish');
      }
      const claim = {
        kind: pendingKind,
        state,
        scanId: pendingScanId,
        scanSeq: pendingSeq,
        since: pendingSince,
      };
      if (pendingMessage === undefined && pendingSummarySeq !== undefined && pendingMessageId) {
        const summary = summaries.resolve(pendingSummarySeq, pendingMessageId);
        if (summary === undefined) {
          unresolved.push({ ...claim, summaryId: pendingMessageId, summarySeq: pendingSummarySeq });
          continue;
        }
        summaries.named(pendingSummarySeq, pendingMessageId, state.id);
        pending.push({ ...claim, message: summary });
        continue;
      }
      const message = pendingMessage === undefined ? undefined : parseMessage(pendingMessage);
      if (message === undefined) throw malformed(item.sk, 'incomplete pending publish');
      pending.push({ ...claim, message });
    }
    return { states, pending, unresolved, batch, summaries };
  }

  /**
   * Drops a batch marker a load found without all its chunks twice: the changes it claimed
   * cannot be read any more (see the header). Returns the chunks left, to delete once dropped.
   */
  async function dropIncompleteBatch(
    cluster: ClusterIdentity,
    { marker, found }: { readonly marker: BatchMarker; readonly found: readonly string[] }
  ): Promise<Record<string, unknown>[]> {
    const dropped = await removeBatchMarker(
      cluster,
      { key: marker.batchKey },
      marker.batchOwnerSeq
    );
    options.logger?.warn(
      'Pending first-scan summary has lost stored chunks: its claim is dropped, its changes are not claimed',
      {
        cluster: clusterKey(cluster),
        batch: marker.batchKey,
        chunks: marker.batchChunks,
        chunksFound: found.length,
        dropped,
      }
    );
    if (!dropped) return [];
    return found.map((sk) => ({ DeleteRequest: { Key: { pk: findingPk(cluster), sk } } }));
  }

  /** The one-change message of a claim whose stored summary is gone. */
  function ownMessageOf(
    kind: ChangeKind,
    state: FindingState,
    cluster: ClusterIdentity
  ): OutgoingMessage {
    // A resolution is rendered from its state alone; any other change from a finding as stored.
    const finding: Finding | undefined =
      kind === 'resolved'
        ? undefined
        : {
            id: state.id,
            checkId: state.checkId,
            severity: state.severity,
            status: state.findingStatus,
            resource: state.resource,
            message: state.message,
            remediation: findCheck(state.checkId)?.remediation ?? '',
            evidence: {},
            materialHash: state.materialHash ?? '',
          };
    return renderChangeMessage(
      { kind, next: state, ...(finding === undefined ? {} : { finding }) },
      {
        location: {
          ...(cluster.account === '' ? {} : { account: cluster.account }),
          ...(cluster.region === '' ? {} : { region: cluster.region }),
          homeRegion: options.homeRegion,
        },
      }
    );
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
      // The whole partition: the findings, and the counter saying whether legacy state was
      // looked for.
      let items = await findingItemsOf(cluster);
      const counter = items.find((item) => item.sk === SCAN_SEQ_SK);
      if (counter?.[LEGACY_CHECKED] !== true && (await adoptLegacy(cluster))) {
        items = await findingItemsOf(cluster);
      }
      let read = readPartition(cluster, items);
      if (read.batch.incomplete !== undefined || read.unresolved.length > 0) {
        // A load is no snapshot: a claim or a settle may have run between its pages.
        read = readPartition(cluster, await findingItemsOf(cluster));
      }
      const { states, pending, batch, summaries } = read;
      const dropped =
        batch.incomplete === undefined ? [] : await dropIncompleteBatch(cluster, batch.incomplete);
      for (const claim of read.unresolved) {
        options.logger?.warn(
          'Pending claim names a summary that is not stored: its change is published alone',
          {
            cluster: clusterKey(cluster),
            finding: claim.state.id,
            summary: claim.summaryId,
            summarySeq: claim.summarySeq,
          }
        );
        const { summaryId: _id, summarySeq: _seq, ...publish } = claim;
        pending.push({ ...publish, message: ownMessageOf(claim.kind, claim.state, cluster) });
      }
      // A claimed state whose finding item the claimer did not write yet is stored all the same.
      const stored = new Set(states.map((state) => state.id));
      const unwritten = (batch.batch?.states ?? []).filter((state) => !stored.has(state.id));
      states.push(...unwritten);
      pending.push(...batch.pending);
      if (batch.batch === undefined) loadedBatches.delete(findingPk(cluster));
      else loadedBatches.set(findingPk(cluster), { ...batch.batch, unwritten });
      await batchWrite([...batch.orphans, ...dropped, ...summaries.settle()]);
      return { states, pending };
    },

    async claim(change: LifecycleChange, { stamp, message }) {
      const previous = change.previous;
      // A summary is stored once, before its first claim; each claim names it.
      const summary = storedApart(message) ? await storedSummary(message, stamp) : undefined;
      const item = {
        ...findingItem(change.next, stamp.cluster, stamp.scanSeq),
        pendingKind: change.kind,
        ...(summary === undefined
          ? { pendingMessage: JSON.stringify(message) }
          : { pendingSummarySeq: summary.seq, pendingMessageId: message.id }),
        pendingScanId: stamp.scanId,
        pendingSeq: stamp.scanSeq,
        pendingSince: stamp.at,
      };
      assertItemFits(item);
      const outcome = await writeOrFind('dynamodb:PutItem', findingKey(change.next, stamp), () =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: item,
            ...(previous === undefined
              ? { ConditionExpression: 'attribute_not_exists(pk)' }
              : transitionCondition(previous, stamp)),
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          })
        )
      );
      // A retry finding this very claim: its first attempt was written (answer lost).
      const won =
        outcome.written ||
        (outcome.found?.pendingSeq === stamp.scanSeq &&
          outcome.found.revision === change.next.revision &&
          outcome.found.pendingKind === change.kind);
      if (!won) return false;
      summary?.held.add(change.next.id);
      return true;
    },

    async claimBatch(changes, { stamp, message }) {
      if (changes.some((change) => change.previous !== undefined)) {
        throw new Error('claimBatch takes first sightings only');
      }
      const { cluster, scanSeq } = stamp;
      const chunks = batchChunkItems(
        findingPk(cluster),
        scanSeq,
        changes.map((change) => ({ kind: change.kind, state: change.next })),
        message,
        now().toISOString()
      );
      for (const chunk of chunks) assertItemFits(chunk);
      await batchWrite(chunks.map((item) => ({ PutRequest: { Item: item } })));
      const record: BatchRecord = {
        key: scanSeq,
        chunks: chunks.length,
        messageId: message.id,
        ownerSeq: scanSeq,
        states: changes.map((change) => change.next),
      };
      // The claim: no newer scan of the cluster started, and no other batch is pending.
      const outcome = await writeOrFind('dynamodb:UpdateItem', seqKey(cluster), () =>
        client.send(
          new UpdateCommand({
            TableName: tableName,
            Key: seqKey(cluster),
            UpdateExpression:
              'SET batchKey = :key, batchChunks = :chunks, batchMessageId = :messageId, batchOwnerSeq = :seq, batchScanId = :scanId, batchSince = :since',
            ConditionExpression: '#seq = :seq AND attribute_not_exists(batchKey)',
            ExpressionAttributeNames: { '#seq': 'seq' },
            ExpressionAttributeValues: {
              ':key': record.key,
              ':chunks': record.chunks,
              ':messageId': record.messageId,
              ':seq': scanSeq,
              ':scanId': stamp.scanId,
              ':since': stamp.at,
            },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          })
        )
      );
      const marker = outcome.written ? undefined : outcome.found;
      // A retry finding this very marker: its first attempt was written (answer lost).
      const won =
        outcome.written ||
        (marker?.batchKey === record.key &&
          marker.batchOwnerSeq === scanSeq &&
          marker.batchMessageId === record.messageId);
      if (!won) {
        // Chunks a marker names (a takeover of this very batch) are not this attempt's to delete.
        if (marker?.batchKey !== record.key) await batchWrite(batchChunkKeys(cluster, record));
        return false;
      }
      remember(heldBatches, heldKey(cluster, scanSeq), record, REMEMBERED_SCANS);
      await writeBatchStates(cluster, record.states, scanSeq);
      return true;
    },

    async close({ previous, next }, stamp) {
      const item = findingItem(next, stamp.cluster, stamp.scanSeq);
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
      const batch = batchOf(pending, stamp.cluster);
      if (batch !== undefined) {
        return once(`adopt|${heldKey(stamp.cluster, stamp.scanSeq)}|${batch.key}`, async () => {
          const outcome = await writeOrFind('dynamodb:UpdateItem', seqKey(stamp.cluster), () =>
            client.send(
              new UpdateCommand({
                TableName: tableName,
                Key: seqKey(stamp.cluster),
                UpdateExpression:
                  'SET batchOwnerSeq = :scanSeq, batchScanId = :scanId, batchSince = :since',
                ConditionExpression: 'batchKey = :key AND batchOwnerSeq = :owner',
                ExpressionAttributeValues: {
                  ':scanSeq': stamp.scanSeq,
                  ':scanId': stamp.scanId,
                  ':since': stamp.at,
                  ':key': batch.key,
                  ':owner': batch.ownerSeq,
                },
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              })
            )
          );
          // A retry finding the batch already this scan's: its first attempt took it.
          const taken =
            outcome.written ||
            (outcome.found?.batchKey === batch.key &&
              outcome.found.batchOwnerSeq === stamp.scanSeq);
          if (!taken) return false;
          const held = { ...batch, ownerSeq: stamp.scanSeq };
          remember(heldBatches, heldKey(stamp.cluster, stamp.scanSeq), held, REMEMBERED_SCANS);
          // The earlier owner may have stopped before writing them all: the rest are written now.
          await writeMissingBatchStates(
            stamp.cluster,
            batch.unwritten ?? batch.states,
            stamp.scanSeq
          );
          return true;
        });
      }
      const outcome = await writeOrFind(
        'dynamodb:UpdateItem',
        findingKey(pending.state, stamp),
        () =>
          client.send(
            new UpdateCommand({
              TableName: tableName,
              Key: findingKey(pending.state, stamp),
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
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            })
          )
      );
      const taken =
        outcome.written ||
        (outcome.found?.revision === pending.state.revision &&
          outcome.found.pendingSeq === stamp.scanSeq);
      if (!taken) return false;
      const summary = await summariesOf(stamp.cluster).get(pending.message.id);
      if (summary?.loadedClaims.has(pending.state.id)) summary.held.add(pending.state.id);
      return true;
    },

    async clearPending(states, stamp) {
      const scan = heldKey(stamp.cluster, stamp.scanSeq);
      const held = heldBatches.get(scan);
      const members = new Set(held?.states.map((state) => state.id));
      if (held !== undefined && states.some((state) => members.has(state.id))) {
        // The chunks go only once no marker names them: a scan that took the batch over keeps them.
        if (await removeBatchMarker(stamp.cluster, held, stamp.scanSeq)) {
          await batchWrite(batchChunkKeys(stamp.cluster, held));
        }
        heldBatches.delete(scan);
        batchOnce.delete(`adopt|${scan}|${held.key}`);
      }
      const claimed = states.filter((state) => !members.has(state.id));
      const cleared = new Set<string>();
      await inBatches(claimed, WRITE_CONCURRENCY, async (batch) => {
        await Promise.all(
          batch.map(async (state) => {
            const outcome = await writeOrFind('dynamodb:UpdateItem', findingKey(state, stamp), () =>
              client.send(
                new UpdateCommand({
                  TableName: tableName,
                  Key: findingKey(state, stamp),
                  UpdateExpression: `REMOVE ${PENDING_ATTRIBUTES.join(', ')}`,
                  ConditionExpression: 'revision = :revision AND pendingSeq = :scanSeq',
                  ExpressionAttributeValues: {
                    ':revision': state.revision,
                    ':scanSeq': stamp.scanSeq,
                  },
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                })
              )
            );
            // A retry finding it cleared: its first attempt was written (answer lost).
            const found = outcome.written ? undefined : outcome.found;
            if (
              outcome.written ||
              (found?.revision === state.revision && found.pendingSeq === undefined)
            ) {
              cleared.add(state.id);
            }
          })
        );
      });
      await deleteSettledSummaries(stamp.cluster, cleared);
    },

    async release(change: LifecycleChange, stamp) {
      const scan = heldKey(stamp.cluster, stamp.scanSeq);
      const held = heldBatches.get(scan);
      if (held?.states.some((state) => state.id === change.next.id)) {
        // The whole batch goes back, so a later scan claims its first sightings again. States
        // first (each only while unchanged), then the marker: a release cut short between the
        // two leaves the marker, so the batch is taken over and published, never stored unsent.
        // Chunks go only once the marker did (one that took it over publishes from them).
        await once(`release|${scan}|${held.key}`, async () => {
          if (!(await holdsBatchMarker(stamp.cluster, held, stamp.scanSeq))) return false;
          await deleteReleasedStates(stamp.cluster, held.states);
          if (!(await removeBatchMarker(stamp.cluster, held, stamp.scanSeq))) return false;
          await batchWrite(batchChunkKeys(stamp.cluster, held));
          return true;
        });
        return;
      }
      const condition = {
        ConditionExpression: 'revision = :revision',
        ExpressionAttributeValues: { ':revision': change.next.revision },
      };
      try {
        if (change.previous === undefined) {
          await client.send(
            new DeleteCommand({
              TableName: tableName,
              Key: findingKey(change.next, stamp),
              ...condition,
            })
          );
        } else {
          // The releasing scan's sequence stays: an older view still may not overwrite it.
          const item = findingItem(change.previous, stamp.cluster, stamp.scanSeq);
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
        Key: findingKey(state, stamp),
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

    loadIndex: async () => (await indexRows()).map((row) => row.entry),

    async replaceClusterIndex(cluster, entries) {
      const existing = await indexRows(indexPrefix(cluster));
      const current = entries.map((entry) => ({
        ...entry,
        cluster: cluster.name,
        account: cluster.account,
        region: cluster.region,
      }));
      const keep = new Set(current.map(indexSk));
      const stored = new Map(existing.map((row) => [row.sk, row.item]));
      // Unchanged rows are not written again: most scans change none, and each Put is a write unit.
      const changed = current
        .map(indexItem)
        .filter((item) => !sameIndexItem(stored.get(String(item.sk)), item));
      await batchWrite([
        ...changed.map((item) => ({ PutRequest: { Item: item } })),
        ...existing
          .filter((row) => !keep.has(row.sk))
          .map((row) => ({ DeleteRequest: { Key: { pk: INDEX_PK, sk: row.sk } } })),
      ]);
    },

    async putIndexEntries(entries) {
      await batchWrite(entries.map((entry) => ({ PutRequest: { Item: indexItem(entry) } })));
    },
  };
}
