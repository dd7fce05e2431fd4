// A first scan of a very large cluster alerts once, with every item the store writes bounded: the
// scan and the DynamoDB store end to end, on a real DynamoDB implementation (dynalite).
import { BatchWriteCommand, type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  BATCH_CHUNK_BYTES,
  batchChunkItems,
  createFindingStore,
} from '../../../lambda/adapters/aws/finding-store.js';
import { itemBytes, MAX_ITEM_BYTES } from '../../../lambda/adapters/aws/item-size.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../../../lambda/app/scan-and-publish.js';
import {
  adoptablePending,
  diffFindings,
  type FindingState,
  type ScanStamp,
} from '../../../lambda/core/lifecycle.js';
import type { OutgoingMessage } from '../../../lambda/core/notify/message.js';
import { renderSummary } from '../../../lambda/core/notify/summary.js';
import type { NotificationPublisher } from '../../../lambda/core/ports/service.js';
import { useDynaliteTable } from '../../support/dynalite-table.js';
import { aFinding, aStoredState } from '../../support/findings.js';
import { brokenNodeClass, planFactoryOf, type ScanWorld } from '../../support/scan-world.js';
import { RecordingMetrics, silentLogger } from '../../support/service-fakes.js';

/** Through the whole scan: evaluating NodeClasses costs about 1 ms each, so fewer here. */
const SCANNED_CHANGES = 600;
/** Through the store alone: the size the issue measured. */
const CHANGES = 20_000;
/** What each claim item of such a scan held before summaries were stored once (measured). */
const BYTES_PER_CLAIM_BEFORE = 332 * 1024;

const dynamo = useDynaliteTable();

/** Sizes of the items written: DynamoDB's count, and the marshalled JSON (an upper bound). */
let written: { bytes: number; marshalledBytes: number }[];

function measure(item: Record<string, unknown> | undefined) {
  if (item === undefined) return;
  written.push({
    bytes: itemBytes(item),
    marshalledBytes: Buffer.byteLength(
      JSON.stringify(marshall(item, { removeUndefinedValues: true }))
    ),
  });
}

function measuringClient(documents: DynamoDBDocumentClient): Pick<DynamoDBDocumentClient, 'send'> {
  return {
    send: ((command: unknown) => {
      if (command instanceof PutCommand) measure(command.input.Item);
      if (command instanceof BatchWriteCommand) {
        for (const request of Object.values(command.input.RequestItems ?? {}).flat())
          measure(request.PutRequest?.Item);
      }
      return documents.send(command as never);
    }) as DynamoDBDocumentClient['send'],
  };
}

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
const world: ScanWorld = new Map([
  ['prod', Array.from({ length: SCANNED_CHANGES }, (_, i) => brokenNodeClass(`class-${i}`))],
]);

const NOW = new Date('2026-11-01T00:00:00Z');
const PROD = { account: '111122223333', region: 'eu-west-1', name: 'prod' };

/** A new store instance, as a new Lambda invocation has. */
function store() {
  return createFindingStore(measuringClient(dynamo.documents), {
    tableName: dynamo.name,
    resolvedTtlDays: 30,
    homeRegion: 'eu-west-1',
    now: () => NOW,
  });
}

function deps(): ScanAndPublishDeps {
  return {
    planFor: planFactoryOf(world),
    store: store(),
    publisher,
    metrics: new RecordingMetrics(),
    logger: silentLogger,
    clock: () => new Date('2026-11-01T00:00:00Z'),
    settings: { reminderIntervalMs: 24 * 3_600_000, digest: 'never' },
  };
}

const request = (scanId: string) => ({
  scanId,
  trigger: 'schedule',
  clusters: [{ cluster: 'prod' }],
});

beforeEach(() => {
  written = [];
  publisher = new Publisher();
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
    const largest = Math.max(...written.map((item) => item.marshalledBytes));
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

/** The first scan's changes of `count` failing NodeClasses, and its one summary. */
function firstScanOf(count: number) {
  const findings = Array.from({ length: count }, (_, i) =>
    aFinding({ resource: { name: `class-${i}` } })
  );
  const { changes } = diffFindings({
    stored: [],
    findings,
    scope: { clusters: ['prod'] },
    now: NOW,
  });
  const message = renderSummary({
    cluster: 'prod',
    scanSeq: 1,
    location: { account: PROD.account, region: PROD.region },
    changes,
    firstScan: true,
  });
  return { changes, message };
}

const stampOf = (scanId: string, scanSeq: number): ScanStamp => ({
  cluster: PROD,
  scanId,
  scanSeq,
  at: NOW.toISOString(),
});

describe(`a first scan of ${CHANGES} changes, in the store`, () => {
  it('is claimed and published once, each item under 400 KB, a first attempt that stopped taken over', async () => {
    // Prepare: the first attempt claims the batch and stops before its publish.
    const { changes, message } = firstScanOf(CHANGES);
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
    const largest = Math.max(...written.map((item) => item.marshalledBytes));
    expect(largest).toBeLessThan(MAX_ITEM_BYTES);
    const total = written.reduce((sum, item) => sum + item.bytes, 0);
    // Before: every claim held the summary (about 332 KB each), 6.6 GB in all.
    expect(total).toBeLessThan((CHANGES * BYTES_PER_CLAIM_BEFORE) / 100);
  });

  it('a second claim of the batch by an older scan loses and leaves no chunk behind', async () => {
    const { changes, message } = firstScanOf(50);
    const older = store();
    await older.nextScanSeq(PROD);
    const newer = store();
    await newer.nextScanSeq(PROD);
    expect(await newer.claimBatch?.(changes, { stamp: stampOf('scan-2', 2), message })).toBe(true);
    expect(await older.claimBatch?.(changes, { stamp: stampOf('scan-1', 1), message })).toBe(false);
    const loaded = await store().loadFindings(PROD);
    expect(new Set(loaded.pending.map((item) => item.scanSeq))).toEqual(new Set([2]));
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
