// A first scan of a very large cluster alerts once, with every item the store writes bounded, and
// any other summary is stored once, its claims naming it: the scan and the DynamoDB store end to
// end, on a real DynamoDB implementation (dynalite).
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BATCH_CHUNK_BYTES,
  batchChunkItems,
  createFindingStore,
  summaryChunkItems,
} from '../../../lambda/adapters/aws/finding-store.js';
import { itemBytes, MAX_ITEM_BYTES } from '../../../lambda/adapters/aws/item-size.js';
import { scanAndPublish } from '../../../lambda/app/scan-and-publish.js';
import {
  adoptablePending,
  type FindingState,
  type ScanStamp,
} from '../../../lambda/core/lifecycle.js';
import type { OutgoingMessage } from '../../../lambda/core/notify/message.js';
import { summaryMessageId } from '../../../lambda/core/notify/summary.js';
import type { NotificationPublisher } from '../../../lambda/core/ports/service.js';
import { useDynaliteTable } from '../../support/dynalite-table.js';
import { aFinding, aStoredState } from '../../support/findings.js';
import {
  brokenNodeClass,
  firstScanOf,
  prodSchedule,
  type ScanWorld,
  scanDepsOf,
} from '../../support/scan-world.js';

/** Through the whole scan: evaluating NodeClasses costs about 1 ms each, so fewer here. */
const SCANNED_CHANGES = 520;
/**
 * Through the store on dynalite: enough for the states to take many chunks (about 7 at ~400
 * bytes a state), so chunking, loading and takeover are proven at scale; the 20,000 changes the
 * issue measured are sized without dynalite below (each written item costs dynalite ~1 ms).
 */
const CHANGES = 5_000;
/** The size the issue measured: every item of such a first scan is sized, none written. */
const ISSUE_CHANGES = 20_000;
/** What each claim item of such a scan held before summaries were stored once (measured). */
const BYTES_PER_CLAIM_BEFORE = 332 * 1024;

const dynamo = useDynaliteTable();

/**
 * The items written: key, whether a claim, DynamoDB's size (item-size.ts) and, measured apart
 * from it, the item's JSON (quotes and names included: more than DynamoDB counts for items of
 * strings and small numbers).
 */
let written: { sk: string; claim: boolean; bytes: number; jsonBytes: number }[];

function measure(item: Record<string, unknown> | undefined) {
  if (item === undefined) return;
  written.push({
    sk: String(item.sk),
    claim: item.pendingKind !== undefined,
    bytes: itemBytes(item),
    jsonBytes: Buffer.byteLength(JSON.stringify(item)),
  });
}

/** Fails the `failClaimAt`-th claim Put (1-based) as a dropped connection would; 0: none. */
let failClaimAt = 0;
/** Requests sent and not answered yet: a failed scan returns while its other claims still land. */
const inFlight = new Set<Promise<unknown>>();
const settled = () => Promise.allSettled([...inFlight]);

function measuringClient(documents: DynamoDBDocumentClient): Pick<DynamoDBDocumentClient, 'send'> {
  let claims = 0;
  return {
    send: ((command: unknown) => {
      if (command instanceof PutCommand) {
        if (command.input.Item?.pendingKind !== undefined && ++claims === failClaimAt) {
          return Promise.reject(new Error('socket hang up'));
        }
        measure(command.input.Item);
      }
      if (command instanceof BatchWriteCommand) {
        for (const request of Object.values(command.input.RequestItems ?? {}).flat())
          measure(request.PutRequest?.Item);
      }
      const sent = documents.send(command as never);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent)).catch(() => undefined);
      return sent;
    }) as DynamoDBDocumentClient['send'],
  };
}

/** Every item of the table's partition of prod (what a later load reads). */
async function partitionItems(): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.documents.send(
      new QueryCommand({
        TableName: dynamo.name,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'CLUSTER#111122223333/eu-west-1/prod' },
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      })
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

const summaryItemsOf = (items: readonly Record<string, unknown>[]) =>
  items.filter((item) => String(item.sk).startsWith('SUMMARY#'));

class Publisher implements NotificationPublisher {
  public readonly sent: OutgoingMessage[] = [];
  /** Throws on the next publish: the scan stops between its claim and its publish. */
  public crashNext = false;

  public async publish(messages: readonly OutgoingMessage[]) {
    if (this.crashNext) {
      this.crashNext = false;
      throw new Error('Lambda timed out');
    }
    this.sent.push(...messages);
    return { failed: [] };
  }
}

let publisher: Publisher;
const brokenClasses = (count: number) =>
  Array.from({ length: count }, (_, i) => brokenNodeClass(`class-${i}`));
let world: ScanWorld;

const NOW = new Date('2026-11-01T00:00:00Z');
const PROD = { account: '111122223333', region: 'eu-west-1', name: 'prod' };

/** A new store instance, as a new Lambda invocation has (its clock at `at`). */
function store(at: Date = NOW) {
  return createFindingStore(measuringClient(dynamo.documents), {
    tableName: dynamo.name,
    resolvedTtlDays: 30,
    homeRegion: 'eu-west-1',
    now: () => at,
  });
}

const deps = (at: Date = NOW) => scanDepsOf(world, store(at), publisher, at);
const request = prodSchedule;

afterEach(async () => {
  await settled();
});

beforeEach(() => {
  written = [];
  failClaimAt = 0;
  publisher = new Publisher();
  world = new Map([['prod', brokenClasses(SCANNED_CHANGES)]]);
});

describe('a first scan of a large cluster', () => {
  it(`alerts ${SCANNED_CHANGES} changes in one summary, every item written bounded`, async () => {
    // Act
    const result = await scanAndPublish(deps(), request('first'));
    await scanAndPublish(deps(), request('second'));
    // Assess
    expect(result.failedClusters).toEqual([]);
    expect(publisher.sent).toHaveLength(1);
    const [summary] = publisher.sent;
    expect(summary?.attributes.change).toBe('summary');
    expect(summary?.covers).toHaveLength(SCANNED_CHANGES);
    expect(summary?.subject).toContain(String(SCANNED_CHANGES));
    const largest = Math.max(...written.map((item) => Math.max(item.bytes, item.jsonBytes)));
    expect(largest).toBeLessThan(MAX_ITEM_BYTES);
    const total = written.reduce((sum, item) => sum + item.bytes, 0);
    // One copy of the summary and one of each state, not a summary per claim.
    expect(total).toBeLessThan((SCANNED_CHANGES * BYTES_PER_CLAIM_BEFORE) / 100);
  });

  it('publishes once when the first attempt stops between its claim and its publish', async () => {
    // Prepare
    publisher.crashNext = true;
    const crashed = await scanAndPublish(deps(), request('first'));
    expect(crashed.failedClusters).toEqual(['prod']);
    expect(publisher.sent).toEqual([]);
    // Act: the redelivery of the same scan, then a later scan
    const redelivered = await scanAndPublish(deps(), request('first'));
    await scanAndPublish(deps(), request('later'));
    // Assess
    expect(redelivered.failedClusters).toEqual([]);
    expect(publisher.sent).toHaveLength(1);
    expect(publisher.sent[0]?.covers).toHaveLength(SCANNED_CHANGES);
  });
});

const stampOf = (scanId: string, scanSeq: number): ScanStamp => ({
  cluster: PROD,
  scanId,
  scanSeq,
  at: NOW.toISOString(),
});

describe(`a first scan of ${CHANGES} changes, in the store`, () => {
  it('is claimed and published once, each item under 400 KB, a first attempt that stopped taken over', async () => {
    // Prepare: the first attempt claims the batch and stops before its publish.
    const { changes, message } = firstScanOf(CHANGES, NOW);
    expect(message.covers).toHaveLength(CHANGES);
    const first = store();
    await first.nextScanSeq(PROD);
    await first.loadFindings(PROD);
    expect(await first.claimBatch?.(changes, { stamp: stampOf('scan-1', 1), message })).toBe(true);
    // Act: the redelivery loads the batch pending, takes it over, publishes and settles it.
    const redelivery = store();
    const seq = await redelivery.nextScanSeq(PROD);
    const stamp = stampOf('scan-1', seq);
    const loaded = await redelivery.loadFindings(PROD);
    const adoptable = adoptablePending(loaded.pending, stamp);
    const adopted = await Promise.all(adoptable.map((item) => redelivery.adopt(item, stamp)));
    const messages = new Set(adoptable.map((item) => item.message.id));
    await redelivery.clearPending(
      adoptable.map((item) => item.state),
      stamp
    );
    const after = await store().loadFindings(PROD);
    // Assess
    expect(loaded.states).toHaveLength(CHANGES);
    expect(adoptable).toHaveLength(CHANGES);
    expect(adopted.every(Boolean)).toBe(true);
    expect([...messages]).toEqual([message.id]);
    expect(adoptable[0]?.message.covers).toEqual(message.covers);
    expect(after.pending).toEqual([]);
    expect(after.states).toHaveLength(CHANGES);
    expect(after.states.every((state) => state.status === 'open')).toBe(true);
    const largest = Math.max(...written.map((item) => Math.max(item.bytes, item.jsonBytes)));
    expect(largest).toBeLessThan(MAX_ITEM_BYTES);
    const total = written.reduce((sum, item) => sum + item.bytes, 0);
    // Before: every claim held the summary (about 332 KB each), 6.6 GB in all.
    expect(total).toBeLessThan((CHANGES * BYTES_PER_CLAIM_BEFORE) / 100);
  });

  it('is taken over without writing again the states its first attempt wrote', async () => {
    const { changes, message } = firstScanOf(50, NOW);
    const first = store();
    await first.nextScanSeq(PROD);
    await first.claimBatch?.(changes, { stamp: stampOf('scan-1', 1), message });
    written = [];
    const redelivery = store();
    const stamp = stampOf('scan-1', await redelivery.nextScanSeq(PROD));
    const loaded = await redelivery.loadFindings(PROD);
    const adopted = await Promise.all(loaded.pending.map((item) => redelivery.adopt(item, stamp)));
    expect(adopted.every(Boolean)).toBe(true);
    expect(written.filter((item) => item.sk.startsWith('FINDING#'))).toEqual([]);
  });

  it('a second claim of the batch by an older scan loses and leaves no chunk behind', async () => {
    const { changes, message } = firstScanOf(50, NOW);
    const older = store();
    await older.nextScanSeq(PROD);
    const newer = store();
    await newer.nextScanSeq(PROD);
    expect(await newer.claimBatch?.(changes, { stamp: stampOf('scan-2', 2), message })).toBe(true);
    expect(await older.claimBatch?.(changes, { stamp: stampOf('scan-1', 1), message })).toBe(false);
    const loaded = await store().loadFindings(PROD);
    expect(new Set(loaded.pending.map((item) => item.scanSeq))).toEqual(new Set([2]));
    // The older scan's chunks are gone; the winner's stay while its marker names them.
    const chunkKeys = (await partitionItems())
      .filter((item) => String(item.sk).startsWith('BATCH#'))
      .map((item) => item.batchKey);
    expect(chunkKeys.length).toBeGreaterThan(0);
    expect(new Set(chunkKeys)).toEqual(new Set([2]));
  });
});

describe(`the items of a first scan of ${ISSUE_CHANGES} changes, sized without a table`, () => {
  /** The longest partition key a cluster can have. */
  const LONGEST_PK = `CLUSTER#${'0'.repeat(12)}/${'x'.repeat(32)}/${'n'.repeat(100)}`;

  it('are each under 400 KB, with each state and the summary stored once', () => {
    const { changes, message } = firstScanOf(ISSUE_CHANGES, NOW);
    const members = changes.map((change) => ({ kind: change.kind, state: change.next }));
    // As a first scan's batch, and as the summary of a cluster with stored state.
    const batch = batchChunkItems(
      LONGEST_PK,
      Number.MAX_SAFE_INTEGER,
      members,
      message,
      NOW.toISOString()
    );
    const summary = summaryChunkItems(
      LONGEST_PK,
      Number.MAX_SAFE_INTEGER,
      message,
      NOW.toISOString()
    );
    for (const items of [batch, summary]) {
      expect(Math.max(...items.map((item) => itemBytes(item)))).toBeLessThan(
        BATCH_CHUNK_BYTES + 1024
      );
    }
    const total = (items: Record<string, unknown>[]) =>
      items.reduce((sum, item) => sum + itemBytes(item), 0);
    const messageBytes = Buffer.byteLength(JSON.stringify(message));
    // Once: the summary and each state (about 400 bytes), not the summary per claim.
    expect(total(batch)).toBeLessThan(messageBytes + ISSUE_CHANGES * 1024);
    expect(total(summary)).toBeLessThan(2 * messageBytes);
    expect(summary.length).toBeGreaterThan(1);
  });
});

describe('a summary of a cluster with stored state', () => {
  /** More than the batch threshold (5): one summary, though not a first scan. */
  const SUMMARISED = 40;

  /** prod scanned once with one failing NodeClass, then SUMMARISED more failing ones. */
  async function withStoredState() {
    world.set('prod', brokenClasses(1));
    await scanAndPublish(deps(), request('first'));
    world.set('prod', brokenClasses(1 + SUMMARISED));
    publisher = new Publisher();
    written = [];
  }

  const pendingItems = (items: readonly Record<string, unknown>[]) =>
    items.filter((item) => item.pendingSeq !== undefined);

  it('is stored once, each claim naming it, and deleted once published', async () => {
    // Prepare
    await withStoredState();
    // Act
    const result = await scanAndPublish(deps(), request('second'));
    // Assess
    expect(result.failedClusters).toEqual([]);
    expect(publisher.sent).toHaveLength(1);
    const [summary] = publisher.sent;
    expect(summary?.attributes.change).toBe('summary');
    expect(summary?.covers).toHaveLength(SUMMARISED);
    const summaryBytes = Buffer.byteLength(JSON.stringify(summary));
    const claims = written.filter((item) => item.claim);
    expect(claims).toHaveLength(SUMMARISED);
    // A claim holds its state and the summary's key, not the summary.
    expect(Math.max(...claims.map((item) => item.bytes))).toBeLessThan(summaryBytes / 10);
    expect(written.filter((item) => item.sk.startsWith('SUMMARY#'))).toHaveLength(1);
    const items = await partitionItems();
    expect(summaryItemsOf(items)).toEqual([]);
    expect(pendingItems(items)).toEqual([]);
  });

  it('is sent once when the first attempt stopped after claiming part of its changes', async () => {
    // Prepare: the 15th claim's connection drops; the claims in flight still land.
    await withStoredState();
    failClaimAt = 15;
    const crashed = await scanAndPublish(deps(), request('second'));
    await settled();
    expect(crashed.failedClusters).toEqual(['prod']);
    expect(publisher.sent).toEqual([]);
    const claimed = pendingItems(await partitionItems()).length;
    expect(claimed).toBeGreaterThan(0);
    expect(claimed).toBeLessThan(SUMMARISED);
    failClaimAt = 0;
    // Act: the redelivery takes the claims over and claims the rest with the same summary.
    const redelivered = await scanAndPublish(deps(), request('second'));
    await scanAndPublish(deps(), request('later'));
    // Assess
    expect(redelivered.failedClusters).toEqual([]);
    expect(publisher.sent.map((message) => message.id)).toEqual([summaryMessageId('prod', 2)]);
    expect(publisher.sent[0]?.covers).toHaveLength(SUMMARISED);
    const items = await partitionItems();
    expect(summaryItemsOf(items)).toEqual([]);
    expect(pendingItems(items)).toEqual([]);
  });

  it('is sent once by another scan when its lease ran out', async () => {
    // Prepare
    await withStoredState();
    failClaimAt = 15;
    await scanAndPublish(deps(), request('second'));
    await settled();
    failClaimAt = 0;
    // Act: a scan of another message, after the lease (15 minutes).
    const later = new Date(NOW.getTime() + 16 * 60_000);
    const result = await scanAndPublish(deps(later), request('other'));
    // Assess
    expect(result.failedClusters).toEqual([]);
    expect(publisher.sent.map((message) => message.id)).toEqual([summaryMessageId('prod', 2)]);
    expect(publisher.sent[0]?.covers).toHaveLength(SUMMARISED);
    expect(summaryItemsOf(await partitionItems())).toEqual([]);
  });
});

describe('a summary stored apart, in the store', () => {
  /** The first sightings of three findings and a summary of them, its id naming `scanSeq`. */
  function summaryOf(scanSeq: number) {
    const { changes, message } = firstScanOf(3, NOW);
    return { changes, message: { ...message, id: summaryMessageId('prod', scanSeq) } };
  }

  it('of a scan whose every claim lost to a newer scan is deleted at once', async () => {
    // Prepare
    const older = store();
    const olderSeq = await older.nextScanSeq(PROD);
    const newer = store();
    const newerSeq = await newer.nextScanSeq(PROD);
    const won = summaryOf(newerSeq);
    for (const change of won.changes) {
      expect(
        await newer.claim(change, { stamp: stampOf('scan-2', newerSeq), message: won.message })
      ).toBe(true);
    }
    // Act
    const lost = summaryOf(olderSeq);
    const olderStamp = stampOf('scan-1', olderSeq);
    for (const change of lost.changes) {
      expect(await older.claim(change, { stamp: olderStamp, message: lost.message })).toBe(false);
    }
    await older.clearPending([], olderStamp);
    // Assess: the newer scan's summary stays, its claims name it.
    const items = await partitionItems();
    expect(summaryItemsOf(items).map((item) => item.messageId)).toEqual([won.message.id]);
    const loaded = await store().loadFindings(PROD);
    expect(loaded.pending.map((item) => item.message)).toEqual(won.changes.map(() => won.message));
  });

  it('that no claim names is deleted by a load once older than any scan, not before', async () => {
    // Prepare: a summary written by a scan that died before its first claim.
    const { message } = summaryOf(1);
    for (const item of summaryChunkItems(
      'CLUSTER#111122223333/eu-west-1/prod',
      1,
      message,
      NOW.toISOString()
    )) {
      await dynamo.documents.send(new PutCommand({ TableName: dynamo.name, Item: item }));
    }
    // Act
    await store(new Date(NOW.getTime() + 30 * 60_000)).loadFindings(PROD);
    const kept = summaryItemsOf(await partitionItems());
    await store(new Date(NOW.getTime() + 61 * 60_000)).loadFindings(PROD);
    const left = summaryItemsOf(await partitionItems());
    // Assess
    expect(kept).toHaveLength(1);
    expect(left).toEqual([]);
  });
});

describe('batchChunkItems', () => {
  it('keeps every chunk under the item limit with a message of the SNS limit and the largest states', () => {
    // Prepare: states as large as a finding item may be, and a message as large as SNS takes.
    const huge = 'x'.repeat(140 * 1024);
    const state: FindingState = {
      ...aStoredState(aFinding(), '2026-10-01T00:00:00.000Z'),
      message: huge,
    };
    const message: OutgoingMessage = {
      id: 'summary-1-prod',
      subject: 's'.repeat(100),
      attributes: { change: 'summary', severity: 'critical', cluster: 'c'.repeat(256) },
      bodies: { default: 'd'.repeat(256 * 1024), email: '', https: '' },
      covers: [],
    };
    const members = Array.from({ length: 12 }, (_, i) => ({
      kind: 'new',
      state: { ...state, id: `finding-${i}` },
    }));
    // Act
    const items = batchChunkItems(
      `CLUSTER#000000000000/${'x'.repeat(32)}/${'n'.repeat(100)}`,
      Number.MAX_SAFE_INTEGER,
      members,
      message,
      '2026-11-01T00:00:00.000Z'
    );
    // Assess
    expect(items.length).toBeGreaterThan(1);
    for (const item of items) expect(itemBytes(item)).toBeLessThan(MAX_ITEM_BYTES);
    expect(Math.max(...items.map((item) => itemBytes(item)))).toBeLessThan(
      BATCH_CHUNK_BYTES + 1024
    );
  });
});
