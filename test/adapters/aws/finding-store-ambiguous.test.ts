// A write whose answer is lost is sent again by the SDK, and the retry of a write that was applied
// fails its condition: the store must tell its own earlier write from a lost race, never delete
// what a surviving reference names, and a load must heal what such a defect left behind. On a
// real DynamoDB implementation (dynalite), through the SDK's own retry.
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFindingStore } from '../../../lambda/adapters/aws/finding-store.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../../../lambda/app/scan-and-publish.js';
import {
  adoptablePending,
  type LifecycleChange,
  type ScanStamp,
} from '../../../lambda/core/lifecycle.js';
import type { OutgoingMessage } from '../../../lambda/core/notify/message.js';
import type { NotificationPublisher } from '../../../lambda/core/ports/service.js';
import { useDynaliteTable } from '../../support/dynalite-table.js';
import {
  brokenNodeClass,
  firstScanOf,
  prodSchedule,
  type ScanWorld,
  scanDepsOf,
} from '../../support/scan-world.js';

const dynamo = useDynaliteTable();
const NOW = new Date('2026-11-01T00:00:00Z');
const PROD = { account: '111122223333', region: 'eu-west-1', name: 'prod' };
const PK = 'CLUSTER#111122223333/eu-west-1/prod';

/** Decides, from the command and its input as sent, whether the answer of a write is lost. */
type AnswerLost = (command: string, input: Record<string, unknown>) => boolean;
/** The next write it matches is applied, then answered with a timeout (once). */
let loseAnswerOf: AnswerLost | undefined;
/** Writes whose answer was lost: each proves the SDK's retry met an applied write. */
let answersLost = 0;
const ANSWER_LOST = 'test-answer-lost';

beforeEach(() => {
  loseAnswerOf = undefined;
  answersLost = 0;
  // Inside the SDK's retry: the write reached the table, its answer did not come back, and the
  // SDK sends it again, as after a timeout or a dropped connection.
  dynamo.client.middlewareStack.add(
    (next, context) => async (args) => {
      const output = await next(args);
      const input = (args as unknown as { input?: Record<string, unknown> }).input ?? {};
      if (loseAnswerOf?.(context.commandName ?? '', input)) {
        loseAnswerOf = undefined;
        answersLost += 1;
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      }
      return output;
    },
    { step: 'deserialize', name: ANSWER_LOST, override: true }
  );
});

afterEach(() => {
  dynamo.client.middlewareStack.remove(ANSWER_LOST);
});

class Publisher implements NotificationPublisher {
  public readonly sent: OutgoingMessage[] = [];

  public async publish(messages: readonly OutgoingMessage[]) {
    this.sent.push(...messages);
    return { failed: [] };
  }
}

let publisher: Publisher;
let world: ScanWorld;
let warnings: string[];

beforeEach(() => {
  publisher = new Publisher();
  warnings = [];
  world = new Map();
});

/** A new store instance, as a new Lambda invocation has (its clock at `at`). */
function store(at: Date = NOW) {
  return createFindingStore(dynamo.documents, {
    tableName: dynamo.name,
    resolvedTtlDays: 30,
    homeRegion: 'eu-west-1',
    now: () => at,
    logger: { warn: (message) => warnings.push(message) },
  });
}

const deps = (at: Date = NOW) => scanDepsOf(world, store(at), publisher, at);
const request = prodSchedule;
const brokenClasses = (count: number) =>
  Array.from({ length: count }, (_, i) => brokenNodeClass(`class-${i}`));

async function partitionItems(): Promise<Record<string, unknown>[]> {
  const page = await dynamo.documents.send(
    new QueryCommand({
      TableName: dynamo.name,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': PK },
    })
  );
  return page.Items ?? [];
}

const startingWith = (items: readonly Record<string, unknown>[], prefix: string) =>
  items.filter((item) => String(item.sk).startsWith(prefix));
const counterOf = (items: readonly Record<string, unknown>[]) =>
  items.find((item) => item.sk === 'SCAN#SEQ');
const pendingItems = (items: readonly Record<string, unknown>[]) =>
  items.filter((item) => item.pendingSeq !== undefined);

async function deleteAll(items: readonly Record<string, unknown>[]) {
  for (const item of items) {
    await dynamo.documents.send(
      new DeleteCommand({ TableName: dynamo.name, Key: { pk: item.pk, sk: item.sk } })
    );
  }
}

describe('a write applied whose answer is lost', () => {
  it('of the batch claim: the first scan publishes its summary once, later scans load', async () => {
    // Prepare
    world.set('prod', brokenClasses(12));
    loseAnswerOf = (command, input) =>
      command === 'UpdateItemCommand' && String(input.UpdateExpression).startsWith('SET batchKey');
    // Act
    const first = await scanAndPublish(deps(), request('first'));
    const later = await scanAndPublish(deps(), request('later'));
    // Assess
    expect(answersLost).toBe(1);
    expect([first.failedClusters, later.failedClusters]).toEqual([[], []]);
    expect(publisher.sent).toHaveLength(1);
    expect(publisher.sent[0]?.covers).toHaveLength(12);
    const items = await partitionItems();
    expect(startingWith(items, 'BATCH#')).toEqual([]);
    expect(counterOf(items)).not.toHaveProperty('batchKey');
    expect(startingWith(items, 'FINDING#')).toHaveLength(12);
  });

  it('of a summary claim: the summary is sent once and kept until its claims are cleared', async () => {
    // Prepare: prod has stored state, then 8 new failures (more than the batch threshold).
    world.set('prod', brokenClasses(1));
    await scanAndPublish(deps(), request('first'));
    world.set('prod', brokenClasses(9));
    publisher = new Publisher();
    loseAnswerOf = (command, input) =>
      command === 'PutItemCommand' &&
      (input.Item as Record<string, unknown> | undefined)?.pendingMessageId !== undefined;
    // Act
    const second = await scanAndPublish(deps(), request('second'));
    const later = await scanAndPublish(deps(), request('later'));
    // Assess
    expect(answersLost).toBe(1);
    expect([second.failedClusters, later.failedClusters]).toEqual([[], []]);
    expect(publisher.sent).toHaveLength(1);
    expect(publisher.sent[0]?.attributes.change).toBe('summary');
    expect(publisher.sent[0]?.covers).toHaveLength(8);
    const items = await partitionItems();
    expect(startingWith(items, 'SUMMARY#')).toEqual([]);
    expect(pendingItems(items)).toEqual([]);
    expect(warnings).toEqual([]);
  });
});

const stampOf = (scanId: string, scanSeq: number, at: Date = NOW): ScanStamp => ({
  cluster: PROD,
  scanId,
  scanSeq,
  at: at.toISOString(),
});

describe('a batch taken over while its first attempt still settles it', () => {
  /** Scan 1 claims a batch of 6; its redelivery (scan 2) takes it over. */
  async function takenOver() {
    const { changes, message } = firstScanOf(6, NOW);
    const original = store();
    const originalStamp = stampOf('scan-1', await original.nextScanSeq(PROD));
    await original.loadFindings(PROD);
    expect(await original.claimBatch?.(changes, { stamp: originalStamp, message })).toBe(true);
    const adopter = store();
    const adopterStamp = stampOf('scan-1', await adopter.nextScanSeq(PROD));
    const loaded = await adopter.loadFindings(PROD);
    const adoptable = adoptablePending(loaded.pending, adopterStamp);
    const adopted = await Promise.all(adoptable.map((item) => adopter.adopt(item, adopterStamp)));
    expect(adopted.every(Boolean)).toBe(true);
    return { changes, original, originalStamp, adopter, adopterStamp };
  }

  it('keeps its chunks when the first attempt clears it: the adopter publishes and settles', async () => {
    // Prepare
    const { changes, original, originalStamp, adopter, adopterStamp } = await takenOver();
    // Act
    await original.clearPending(
      changes.map((change) => change.next),
      originalStamp
    );
    const meanwhile = await partitionItems();
    const reloaded = await store().loadFindings(PROD);
    await adopter.clearPending(
      changes.map((change) => change.next),
      adopterStamp
    );
    // Assess
    expect(startingWith(meanwhile, 'BATCH#')).not.toEqual([]);
    expect(counterOf(meanwhile)).toMatchObject({ batchKey: 1, batchOwnerSeq: 2 });
    expect(reloaded.pending).toHaveLength(6);
    const settled = await partitionItems();
    expect(startingWith(settled, 'BATCH#')).toEqual([]);
    expect(counterOf(settled)).not.toHaveProperty('batchKey');
    expect(startingWith(settled, 'FINDING#')).toHaveLength(6);
  });

  it('keeps its chunks and states when the first attempt releases it', async () => {
    // Prepare
    const { changes, original, originalStamp } = await takenOver();
    const before = await partitionItems();
    // Act
    await Promise.all(changes.map((change) => original.release(change, originalStamp)));
    // Assess
    const after = await partitionItems();
    expect(after).toEqual(before);
    expect(counterOf(after)).toMatchObject({ batchKey: 1, batchOwnerSeq: 2 });
  });
});

describe('a released batch', () => {
  it('cut short between its states and its marker: still pending, taken over and published', async () => {
    // Prepare: scan 1 claims the batch; its release loses the table while deleting the states.
    const { changes, message } = firstScanOf(3, NOW);
    const original = store();
    const originalStamp = stampOf('scan-1', await original.nextScanSeq(PROD));
    expect(await original.claimBatch?.(changes, { stamp: originalStamp, message })).toBe(true);
    const [first] = changes;
    if (first === undefined) throw new Error('expected a change');
    dynamo.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'DeleteItemCommand') {
          throw Object.assign(new Error('cut short'), { name: 'AccessDeniedException' });
        }
        return next(args);
      },
      { step: 'initialize', name: 'cut-short', override: true }
    );
    // Act
    const released = original.release(first, originalStamp).then(
      () => 'released',
      () => 'cut short'
    );
    expect(await released).toBe('cut short');
    dynamo.client.middlewareStack.remove('cut-short');
    const later = new Date(NOW.getTime() + 16 * 60_000);
    const adopter = store(later);
    const adopterStamp = stampOf('scan-2', await adopter.nextScanSeq(PROD), later);
    const loaded = await adopter.loadFindings(PROD);
    const adoptable = adoptablePending(loaded.pending, adopterStamp);
    // Assess: the marker survived, so every change is still owed an alert and can be taken over.
    expect(adoptable.map((item) => item.state.id).sort()).toEqual(
      changes.map((change) => change.next.id).sort()
    );
    expect(adoptable.every((item) => item.message.id === message.id)).toBe(true);
    expect(await Promise.all(adoptable.map((item) => adopter.adopt(item, adopterStamp)))).toEqual([
      true,
      true,
      true,
    ]);
    expect(startingWith(await partitionItems(), 'FINDING#')).toHaveLength(3);
  });

  it('gives back its first sightings, but not one a newer scan claimed since', async () => {
    // Prepare: scan 1 claims the batch; scan 2 claims a change of one of its states.
    const { changes, message } = firstScanOf(4, NOW);
    const original = store();
    const originalStamp = stampOf('scan-1', await original.nextScanSeq(PROD));
    expect(await original.claimBatch?.(changes, { stamp: originalStamp, message })).toBe(true);
    const newer = store();
    const newerStamp = stampOf('scan-2', await newer.nextScanSeq(PROD));
    const [moved] = changes;
    if (moved === undefined) throw new Error('expected a change');
    const resolved: LifecycleChange = {
      kind: 'resolved',
      previous: moved.next,
      next: { ...moved.next, status: 'resolved', resolvedAt: NOW.toISOString(), revision: 2 },
    };
    expect(await newer.claim(resolved, { stamp: newerStamp, message })).toBe(true);
    // Act: SNS refused the batch's summary.
    await original.release(changes[1] ?? moved, originalStamp);
    // Assess
    const items = await partitionItems();
    expect(startingWith(items, 'BATCH#')).toEqual([]);
    expect(counterOf(items)).not.toHaveProperty('batchKey');
    expect(startingWith(items, 'FINDING#')).toEqual([
      expect.objectContaining({ id: moved.next.id, revision: 2, pendingSeq: newerStamp.scanSeq }),
    ]);
  });
});

describe('a load of references a defect left dangling', () => {
  /** A scan that stops between its claims and its publish (the Lambda timed out). */
  const stoppingBeforePublish = (): ScanAndPublishDeps => ({
    ...deps(),
    publisher: { publish: () => Promise.reject(new Error('Lambda timed out')) },
  });

  it('drops a batch marker whose chunks are gone, and the cluster is scanned again', async () => {
    // Prepare: a first scan claimed its batch and stopped; its chunks were deleted under it.
    world.set('prod', brokenClasses(5));
    const stopped = await scanAndPublish(stoppingBeforePublish(), request('first'));
    expect(stopped.failedClusters).toEqual(['prod']);
    await deleteAll(startingWith(await partitionItems(), 'BATCH#'));
    // Act
    const loaded = await store().loadFindings(PROD);
    world.set('prod', brokenClasses(6));
    const later = await scanAndPublish(deps(), request('later'));
    // Assess: the states it stored stand (their claim is gone); the new one alerts.
    expect(loaded.pending).toEqual([]);
    expect(loaded.states).toHaveLength(5);
    expect(warnings).toEqual([expect.stringContaining('lost stored chunks')]);
    expect(counterOf(await partitionItems())).not.toHaveProperty('batchKey');
    expect(later.failedClusters).toEqual([]);
    expect(publisher.sent.flatMap((sent) => sent.covers)).toEqual([expect.stringMatching(/^new:/)]);
  });

  it('publishes a claim whose summary is gone as its own message, each change once', async () => {
    // Prepare: a scan claims its summary's changes, stops before its publish; the summary is
    // then deleted under its claims.
    world.set('prod', brokenClasses(1));
    await scanAndPublish(deps(), request('first'));
    world.set('prod', brokenClasses(9));
    await scanAndPublish(stoppingBeforePublish(), request('second'));
    publisher = new Publisher();
    const before = await partitionItems();
    expect(pendingItems(before)).toHaveLength(8);
    await deleteAll(startingWith(before, 'SUMMARY#'));
    // Act: another scan, once the claims' lease ran out.
    const later = await scanAndPublish(
      deps(new Date(NOW.getTime() + 16 * 60_000)),
      request('later')
    );
    // Assess
    expect(later.failedClusters).toEqual([]);
    expect(publisher.sent).toHaveLength(8);
    expect(publisher.sent.every((sent) => sent.attributes.change === 'new')).toBe(true);
    const covers = publisher.sent.flatMap((sent) => sent.covers ?? []);
    expect(new Set(covers).size).toBe(8);
    expect(warnings).toHaveLength(8);
    expect(pendingItems(await partitionItems())).toEqual([]);
  });
});
