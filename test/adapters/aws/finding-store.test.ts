import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { batchChunkItems, createFindingStore } from '../../../lambda/adapters/aws/finding-store.js';
import type { NodeClassIndexEntry } from '../../../lambda/core/event-index.js';
import { diffFindings, type ScanStamp } from '../../../lambda/core/lifecycle.js';
import { renderChangeMessage } from '../../../lambda/core/notify/message.js';
import { ItemTooLargeError, SourceUnavailableError } from '../../../lambda/shared/errors.js';
import { aFinding, aStoredState } from '../../support/findings.js';

const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const dynamo = mockClient(documentClient);
const NOW = new Date('2026-11-01T00:00:00Z');
const store = createFindingStore(documentClient, {
  tableName: 'state',
  resolvedTtlDays: 30,
  homeRegion: 'eu-west-1',
  now: () => NOW,
});
/** The cluster the tests write, and the partition it is kept in. */
const PROD = { account: '111122223333', region: 'eu-west-1', name: 'prod' };
const PK = 'CLUSTER#111122223333/eu-west-1/prod';
/** Its counter item, recording that state of earlier versions was looked for already. */
const COUNTER = { pk: PK, sk: 'SCAN#SEQ', type: 'scan-seq', seq: 7, legacyChecked: true };

const conditionFailed = Object.assign(new Error('The conditional request failed'), {
  name: 'ConditionalCheckFailedException',
  $metadata: { httpStatusCode: 400 },
});

function firstChange(kind: 'new' | 'resolved') {
  const finding = aFinding();
  const stored =
    kind === 'new' ? [] : [aStoredState(finding, '2026-10-01T00:00:00.000Z', { revision: 4 })];
  const diff = diffFindings({
    stored,
    findings: kind === 'new' ? [finding] : [],
    scope: { clusters: ['prod'] },
    now: NOW,
  });
  const change = diff.changes[0];
  if (!change) throw new Error('expected a change');
  return change;
}

const stamp: ScanStamp = { cluster: PROD, scanId: 'msg-1', scanSeq: 7, at: NOW.toISOString() };

function claimInput(change: ReturnType<typeof firstChange>) {
  return { stamp, message: renderChangeMessage(change) };
}

const entry: NodeClassIndexEntry = {
  cluster: 'prod',
  account: '111122223333',
  region: 'eu-west-1',
  name: 'default',
  amiSelectorTerms: [{ name: 'eks-node-*', owner: 'self' }],
  resolvedAmiIds: ['ami-0123456789abcdef0'],
  nodeRole: 'KarpenterNodeRole-prod',
};

beforeEach(() => {
  dynamo.reset();
});

describe('createFindingStore', () => {
  it('claims a first sighting with attribute_not_exists and stores every state field', async () => {
    // Prepare
    dynamo.on(PutCommand).resolves({});
    const change = firstChange('new');
    // Act
    const claimed = await store.claim(change, claimInput(change));
    // Assess
    expect(claimed).toBe(true);
    expect(dynamo.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: {
        pk: PK,
        sk: `FINDING#${change.next.id}`,
        type: 'finding',
        id: change.next.id,
        checkId: 'instance-profile-is-name',
        cluster: 'prod',
        account: '111122223333',
        region: 'eu-west-1',
        resourceKind: 'EC2NodeClass',
        resourceName: 'default',
        status: 'open',
        findingStatus: 'fail',
        severity: 'critical',
        message: 'spec.instanceProfile is an ARN.',
        materialHash: 'material-of-instance-profile-is-name',
        firstSeen: NOW.toISOString(),
        lastSeen: NOW.toISOString(),
        lastNotified: NOW.toISOString(),
        revision: 1,
        scanSeq: 7,
        pendingKind: 'new',
        pendingMessage: JSON.stringify(renderChangeMessage(change)),
        pendingScanId: 'msg-1',
        pendingSeq: 7,
        pendingSince: NOW.toISOString(),
      },
      // A retry of a claim that was written finds it, and counts it as won.
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('claims a transition conditionally on the previous revision and sets the TTL on resolved', async () => {
    dynamo.on(PutCommand).resolves({});
    const change = firstChange('resolved');
    await store.claim(change, claimInput(change));
    const input = dynamo.commandCalls(PutCommand)[0]?.args[0].input;
    expect(input?.ConditionExpression).toBe(
      'revision = :revision AND attribute_not_exists(pendingSeq) AND (attribute_not_exists(scanSeq) OR scanSeq < :scanSeq)'
    );
    expect(input?.ExpressionAttributeValues).toEqual({ ':revision': 4, ':scanSeq': 7 });
    expect(input?.Item).toMatchObject({
      status: 'resolved',
      revision: 5,
      resolvedAt: NOW.toISOString(),
      expiresAt: NOW.getTime() / 1000 + 30 * 86_400,
    });
  });

  it('returns false when another delivery already claimed the change', async () => {
    dynamo.on(PutCommand).rejects(conditionFailed);
    const change = firstChange('new');
    expect(await store.claim(change, claimInput(change))).toBe(false);
  });

  it('classifies other write errors as SourceUnavailableError', async () => {
    dynamo
      .on(PutCommand)
      .rejects(
        Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' })
      );
    const change = firstChange('new');
    await expect(store.claim(change, claimInput(change))).rejects.toMatchObject({
      name: 'SourceUnavailableError',
      reason: 'throttled',
      source: 'dynamodb:PutItem',
    });
  });

  it('releases a first-sighting claim by a conditional delete, and a transition by restoring the previous item', async () => {
    dynamo.on(DeleteCommand).resolves({});
    dynamo.on(PutCommand).resolves({});
    const created = firstChange('new');
    const resolved = firstChange('resolved');
    await store.release(created, stamp);
    await store.release(resolved, stamp);
    expect(dynamo.commandCalls(DeleteCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: `FINDING#${created.next.id}` },
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': 1 },
    });
    expect(dynamo.commandCalls(PutCommand)[0]?.args[0].input).toMatchObject({
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': 5 },
      Item: { status: 'open', revision: 4, scanSeq: 7 },
    });
  });

  it('loads a cluster with a consistent, paginated query and maps items back to states', async () => {
    const state = aStoredState(aFinding(), '2026-10-01T00:00:00.000Z');
    const item = {
      pk: PK,
      sk: `FINDING#${state.id}`,
      account: '111122223333',
      region: 'eu-west-1',
      id: state.id,
      checkId: state.checkId,
      cluster: 'prod',
      resourceKind: 'EC2NodeClass',
      resourceName: 'default',
      status: 'open',
      findingStatus: 'fail',
      severity: 'critical',
      message: state.message,
      firstSeen: state.firstSeen,
      lastSeen: state.lastSeen,
      lastNotified: state.lastNotified,
      revision: 1,
    };
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [item], LastEvaluatedKey: { pk: PK, sk: item.sk } })
      .resolvesOnce({ Items: [COUNTER] });
    const { states, pending } = await store.loadFindings(PROD);
    expect(states).toEqual([state]);
    expect(pending).toEqual([]);
    const calls = dynamo.commandCalls(QueryCommand);
    expect(calls).toHaveLength(2);
    // The whole partition: the findings and the counter (state of earlier versions looked for).
    expect(calls[0]?.args[0].input).toEqual({
      TableName: 'state',
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': PK },
      ConsistentRead: true,
    });
    expect(calls[1]?.args[0].input.ExclusiveStartKey).toEqual({ pk: PK, sk: item.sk });
  });

  it('rejects a malformed stored item with a clear error', async () => {
    dynamo
      .on(QueryCommand)
      .resolves({ Items: [{ pk: PK, sk: 'FINDING#x', severity: 'extreme' }, COUNTER] });
    await expect(store.loadFindings(PROD)).rejects.toBeInstanceOf(SourceUnavailableError);
  });

  it('touches lastSeen without bumping the revision, ignoring lost races', async () => {
    dynamo.on(UpdateCommand).rejectsOnce(conditionFailed).resolves({});
    const state = {
      ...aStoredState(aFinding(), '2026-10-01T00:00:00.000Z'),
      lastSeen: NOW.toISOString(),
    };
    await store.touch([state, { ...state, id: 'other' }], stamp);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: `FINDING#${state.id}` },
      UpdateExpression: 'SET lastSeen = :lastSeen, scanSeq = :scanSeq',
      ConditionExpression:
        'revision = :revision AND #status = :open AND (attribute_not_exists(scanSeq) OR scanSeq < :scanSeq)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':lastSeen': NOW.toISOString(),
        ':revision': 1,
        ':open': 'open',
        ':scanSeq': 7,
      },
    });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('records the material hash of a state stored before hashes when touching it', async () => {
    dynamo.on(UpdateCommand).resolves({});
    const state = {
      ...aStoredState(aFinding(), '2026-10-01T00:00:00.000Z'),
      lastSeen: NOW.toISOString(),
      materialHash: 'abc',
    };
    await store.touch([state], stamp);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toMatchObject({
      UpdateExpression:
        'SET lastSeen = :lastSeen, materialHash = :materialHash, scanSeq = :scanSeq',
      ExpressionAttributeValues: { ':materialHash': 'abc' },
    });
  });

  it('closes a finding silently: the claim condition, resolved, no pending publish', async () => {
    // Prepare
    dynamo.on(PutCommand).rejectsOnce(conditionFailed).resolves({});
    const previous = aStoredState(aFinding(), '2026-10-01T00:00:00.000Z', { revision: 4 });
    const next = {
      ...previous,
      status: 'resolved' as const,
      resolvedAt: NOW.toISOString(),
      lastSeen: NOW.toISOString(),
      revision: 5,
    };
    const close = { previous, next, finding: aFinding({ status: 'suppressed' }) };
    // Act
    const lost = await store.close(close, stamp);
    const written = await store.close(close, stamp);
    // Assess
    expect([lost, written]).toEqual([false, true]);
    const input = dynamo.commandCalls(PutCommand)[1]?.args[0].input;
    expect(input?.ConditionExpression).toBe(
      'revision = :revision AND attribute_not_exists(pendingSeq) AND (attribute_not_exists(scanSeq) OR scanSeq < :scanSeq)'
    );
    expect(input?.ExpressionAttributeValues).toEqual({ ':revision': 4, ':scanSeq': 7 });
    expect(input?.Item).toMatchObject({
      status: 'resolved',
      revision: 5,
      lastNotified: previous.lastNotified,
      scanSeq: 7,
      expiresAt: NOW.getTime() / 1000 + 30 * 86_400,
    });
    expect(Object.keys(input?.Item ?? {}).filter((key) => key.startsWith('pending'))).toEqual([]);
  });

  it('counts a claim its retry finds written as won, by the item the failed condition returns', async () => {
    // Prepare: the retry of an applied claim, and a claim another scan holds.
    const change = firstChange('new');
    const failedWith = (seq: number) =>
      Object.assign(new Error('The conditional request failed'), {
        name: 'ConditionalCheckFailedException',
        // As the document client leaves it: DynamoDB's wire form.
        Item: {
          pendingSeq: { N: String(seq) },
          revision: { N: '1' },
          pendingKind: { S: 'new' },
        },
      });
    dynamo.on(PutCommand).rejectsOnce(failedWith(7)).rejectsOnce(failedWith(8));
    // Act
    const retried = await store.claim(change, claimInput(change));
    const lost = await store.claim(change, claimInput(change));
    // Assess
    expect([retried, lost]).toEqual([true, false]);
    expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
  });

  it('reads the item back when a failed condition returns none', async () => {
    const change = firstChange('new');
    dynamo.on(PutCommand).rejects(conditionFailed);
    dynamo
      .on(GetCommand)
      .resolvesOnce({ Item: { pk: PK, sk: 'x', pendingSeq: 7, revision: 1, pendingKind: 'new' } })
      .resolves({});
    expect(await store.claim(change, claimInput(change))).toBe(true);
    expect(await store.claim(change, claimInput(change))).toBe(false);
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: `FINDING#${change.next.id}` },
      ConsistentRead: true,
    });
  });

  it('reads again when a settle ran between the pages of a load, and then finds nothing pending', async () => {
    // Prepare: the first read sees a claim, then (later page) not its summary: settled meanwhile.
    const change = firstChange('new');
    const message = {
      ...renderChangeMessage(change),
      id: 'summary-7-prod',
      covers: [`new:${change.next.id}`, 'new:other'],
    };
    dynamo.on(PutCommand).resolves({});
    dynamo.on(BatchWriteCommand).resolves({});
    await store.claim(change, { stamp, message });
    const claimItem = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    const settledItem = Object.fromEntries(
      Object.entries(claimItem).filter(([name]) => !name.startsWith('pending'))
    );
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [claimItem, COUNTER] })
      .resolves({ Items: [settledItem, COUNTER] });
    // Act
    const { states, pending } = await store.loadFindings(PROD);
    // Assess
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(2);
    expect(states.map((state) => state.id)).toEqual([change.next.id]);
    expect(pending).toEqual([]);
  });

  it('reads again when a batch was claimed between the pages of a load, and finds it whole', async () => {
    // Prepare: the first read misses the chunks (read first), then finds the marker.
    const change = firstChange('new');
    const message = { ...renderChangeMessage(change), id: 'summary-7-prod' };
    const chunks = batchChunkItems(
      PK,
      7,
      [{ kind: 'new', state: change.next }],
      message,
      NOW.toISOString()
    );
    const marked = {
      ...COUNTER,
      batchKey: 7,
      batchChunks: chunks.length,
      batchMessageId: message.id,
      batchOwnerSeq: 7,
      batchScanId: 'msg-1',
      batchSince: NOW.toISOString(),
    };
    dynamo
      .on(QueryCommand)
      .resolvesOnce({ Items: [marked] })
      .resolves({ Items: [...chunks, marked] });
    dynamo.on(BatchWriteCommand).resolves({});
    // Act
    const { states, pending } = await store.loadFindings(PROD);
    // Assess
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(2);
    expect(states).toEqual([change.next]);
    expect(pending).toEqual([
      expect.objectContaining({
        kind: 'new',
        scanSeq: 7,
        message: { ...message, covers: [`new:${change.next.id}`] },
      }),
    ]);
    // Nothing was dropped: the marker stands.
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('keeps which changes a pending summary covers across a reload', async () => {
    const change = firstChange('new');
    const message = {
      ...renderChangeMessage(change),
      id: 'summary-7-prod',
      covers: [`new:${change.next.id}`, 'new:other'],
    };
    dynamo.on(PutCommand).resolves({});
    dynamo.on(BatchWriteCommand).resolves({});
    await store.claim(change, { stamp, message });
    const claimItem = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    const summaryItems = dynamo
      .commandCalls(BatchWriteCommand)
      .flatMap((call) => Object.values(call.args[0].input.RequestItems ?? {}).flat())
      .map((request) => request.PutRequest?.Item ?? {});
    dynamo.on(QueryCommand).resolves({ Items: [claimItem, ...summaryItems, COUNTER] });
    const { pending } = await store.loadFindings(PROD);
    // The claim names the summary; the summary is written apart, once.
    expect(claimItem).toMatchObject({ pendingSummarySeq: 7, pendingMessageId: 'summary-7-prod' });
    expect(claimItem).not.toHaveProperty('pendingMessage');
    expect(summaryItems.map((item) => item.sk)).toEqual([
      'SUMMARY#0000000000000007#summary-7-prod#000000',
    ]);
    expect(pending[0]?.message).toEqual(message);
  });

  it('reads again, then publishes the change alone, when a pending claim names a summary that is not stored', async () => {
    // Prepare
    const change = firstChange('new');
    const message = {
      ...renderChangeMessage(change),
      id: 'summary-7-prod',
      covers: [`new:${change.next.id}`, 'new:other'],
    };
    dynamo.on(PutCommand).resolves({});
    dynamo.on(BatchWriteCommand).resolves({});
    await store.claim(change, { stamp, message });
    const claimItem = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item ?? {};
    dynamo.on(QueryCommand).resolves({ Items: [claimItem, COUNTER] });
    const warnings: [string, Record<string, unknown> | undefined][] = [];
    const logged = createFindingStore(documentClient, {
      tableName: 'state',
      resolvedTtlDays: 30,
      homeRegion: 'eu-west-1',
      now: () => NOW,
      logger: { warn: (text, attributes) => warnings.push([text, attributes]) },
    });
    // Act
    const { states, pending } = await logged.loadFindings(PROD);
    // Assess: read twice (a settle may run between the pages of a read), then healed.
    expect(dynamo.commandCalls(QueryCommand)).toHaveLength(2);
    expect(states.map((state) => state.id)).toEqual([change.next.id]);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ kind: 'new', scanId: 'msg-1', scanSeq: 7 });
    // The change's own message (its fix text the catalog's: the finding's is not stored).
    const own = renderChangeMessage(change, {
      location: { account: PROD.account, region: PROD.region, homeRegion: 'eu-west-1' },
    });
    expect(pending[0]?.message).toMatchObject({
      id: own.id,
      subject: own.subject,
      attributes: own.attributes,
      covers: [`new:${change.next.id}`],
    });
    expect(pending[0]?.message.bodies.email).toContain(change.next.message);
    expect(warnings).toEqual([
      [
        expect.stringContaining('names a summary that is not stored'),
        expect.objectContaining({ finding: change.next.id, summary: 'summary-7-prod' }),
      ],
    ]);
  });

  it('replaces a cluster index: puts current NodeClasses and deletes the ones gone', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [
        {
          pk: 'NODECLASS',
          sk: '111122223333/eu-west-1/prod#default',
          cluster: 'prod',
          name: 'default',
          amiSelectorTerms: [],
          resolvedAmiIds: [],
        },
        {
          pk: 'NODECLASS',
          sk: '111122223333/eu-west-1/prod#old',
          cluster: 'prod',
          name: 'old',
          amiSelectorTerms: [],
          resolvedAmiIds: [],
        },
      ],
    });
    dynamo
      .on(BatchWriteCommand)
      .resolvesOnce({
        UnprocessedItems: {
          state: [
            { DeleteRequest: { Key: { pk: 'NODECLASS', sk: '111122223333/eu-west-1/prod#old' } } },
          ],
        },
      })
      .resolves({});
    await store.replaceClusterIndex(PROD, [entry]);
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'NODECLASS', ':prefix': '111122223333/eu-west-1/prod#' },
    });
    const writes = dynamo.commandCalls(BatchWriteCommand);
    expect(writes[0]?.args[0].input.RequestItems?.state).toEqual([
      {
        PutRequest: {
          Item: {
            pk: 'NODECLASS',
            sk: '111122223333/eu-west-1/prod#default',
            type: 'nodeclass',
            cluster: 'prod',
            account: '111122223333',
            region: 'eu-west-1',
            name: 'default',
            amiSelectorTerms: [{ name: 'eks-node-*', owner: 'self' }],
            resolvedAmiIds: ['ami-0123456789abcdef0'],
            nodeRole: 'KarpenterNodeRole-prod',
            updatedAt: NOW.toISOString(),
          },
        },
      },
      { DeleteRequest: { Key: { pk: 'NODECLASS', sk: '111122223333/eu-west-1/prod#old' } } },
    ]);
    // The unprocessed delete is retried.
    expect(writes[1]?.args[0].input.RequestItems?.state).toEqual([
      { DeleteRequest: { Key: { pk: 'NODECLASS', sk: '111122223333/eu-west-1/prod#old' } } },
    ]);
  });

  it('loads the whole index', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [
        {
          pk: 'NODECLASS',
          sk: '111122223333/eu-west-1/prod#default',
          type: 'nodeclass',
          updatedAt: 'x',
          ...entry,
        },
      ],
    });
    expect(await store.loadIndex()).toEqual([entry]);
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'NODECLASS' },
    });
  });
  it('takes the next scan sequence with an atomic ADD on the cluster counter item', async () => {
    // Prepare
    dynamo.on(UpdateCommand).resolves({ Attributes: { seq: 12 } });
    // Act
    const seq = await store.nextScanSeq(PROD);
    // Assess
    expect(seq).toBe(12);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: 'SCAN#SEQ' },
      UpdateExpression: 'ADD #seq :one SET #type = :type',
      ExpressionAttributeNames: { '#seq': 'seq', '#type': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': 'scan-seq' },
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it('fails the scan when the counter returns no number, or cannot be written', async () => {
    dynamo.on(UpdateCommand).resolvesOnce({}).rejects(new Error('socket hang up'));
    await expect(store.nextScanSeq(PROD)).rejects.toMatchObject({
      name: 'SourceUnavailableError',
      reason: 'invalid-response',
    });
    await expect(store.nextScanSeq(PROD)).rejects.toBeInstanceOf(SourceUnavailableError);
  });

  it('reads the latest scan sequence consistently, 0 when no scan ran yet', async () => {
    dynamo
      .on(GetCommand)
      .resolvesOnce({ Item: { seq: 5 } })
      .resolvesOnce({});
    expect(await store.latestScanSeq(PROD)).toBe(5);
    expect(await store.latestScanSeq(PROD)).toBe(0);
    expect(dynamo.commandCalls(GetCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: 'SCAN#SEQ' },
      ConsistentRead: true,
    });
  });

  it('returns the claims pending publish with their message, and the states without the marks', async () => {
    // Prepare
    const change = firstChange('new');
    const message = renderChangeMessage(change);
    dynamo.on(PutCommand).resolves({});
    await store.claim(change, { stamp, message });
    const written = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item;
    dynamo.on(QueryCommand).resolves({ Items: [written ?? {}, COUNTER] });
    // Act
    const { states, pending } = await store.loadFindings(PROD);
    // Assess
    expect(states).toEqual([change.next]);
    expect(pending).toEqual([
      {
        kind: 'new',
        state: change.next,
        message,
        scanId: 'msg-1',
        scanSeq: 7,
        since: NOW.toISOString(),
      },
    ]);
  });

  it('rejects a pending mark without a readable message', async () => {
    const change = firstChange('new');
    dynamo.on(PutCommand).resolves({});
    await store.claim(change, claimInput(change));
    const written = dynamo.commandCalls(PutCommand)[0]?.args[0].input.Item;
    dynamo
      .on(QueryCommand)
      .resolves({ Items: [{ ...written, pendingMessage: '{"id":' }, COUNTER] });
    await expect(store.loadFindings(PROD)).rejects.toMatchObject({
      name: 'SourceUnavailableError',
      reason: 'invalid-response',
    });
  });

  it('takes over a pending publish conditionally on its revision and owner', async () => {
    // Prepare
    const change = firstChange('new');
    const pending = {
      kind: 'new' as const,
      state: change.next,
      message: renderChangeMessage(change),
      scanId: 'msg-1',
      scanSeq: 3,
      since: '2026-10-31T00:00:00.000Z',
    };
    dynamo.on(UpdateCommand).resolvesOnce({}).rejects(conditionFailed);
    // Act
    const first = await store.adopt(pending, stamp);
    const second = await store.adopt(pending, stamp);
    // Assess
    expect([first, second]).toEqual([true, false]);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: `FINDING#${change.next.id}` },
      UpdateExpression: 'SET pendingScanId = :scanId, pendingSeq = :scanSeq, pendingSince = :since',
      ConditionExpression: 'revision = :revision AND pendingSeq = :owner',
      ExpressionAttributeValues: {
        ':scanId': 'msg-1',
        ':scanSeq': 7,
        ':since': NOW.toISOString(),
        ':revision': 1,
        ':owner': 3,
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('clears the pending marks this scan owns, ignoring items moved on since', async () => {
    // Prepare
    dynamo.on(UpdateCommand).rejectsOnce(conditionFailed).resolves({});
    const state = aStoredState(aFinding(), '2026-10-01T00:00:00.000Z', { revision: 2 });
    // Act
    await store.clearPending([state, { ...state, id: 'other' }], stamp);
    // Assess
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: PK, sk: `FINDING#${state.id}` },
      UpdateExpression:
        'REMOVE pendingKind, pendingMessage, pendingMessageId, pendingScanId, pendingSeq, pendingSince, pendingSummarySeq',
      ConditionExpression: 'revision = :revision AND pendingSeq = :scanSeq',
      ExpressionAttributeValues: { ':revision': 2, ':scanSeq': 7 },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('throws when a pending mark cannot be cleared for another reason than a lost condition', async () => {
    dynamo.on(UpdateCommand).rejects(new Error('socket hang up'));
    const state = aStoredState(aFinding(), '2026-10-01T00:00:00.000Z');
    await expect(store.clearPending([state], stamp)).rejects.toMatchObject({
      name: 'SourceUnavailableError',
      source: 'dynamodb:UpdateItem',
    });
  });

  describe('item size', () => {
    /** The index entry of the issue: one AMI name term of 420,000 characters. */
    const poison: NodeClassIndexEntry = {
      ...entry,
      name: 'poison',
      amiSelectorTerms: [{ name: `${'a'.repeat(419_999)}*` }],
    };

    it('reports the items DynamoDB would refuse before anything is written, and only those', async () => {
      // Act
      const oversized = await store.oversizedItems({
        findings: [aFinding(), aFinding({ checkId: 'ami-selector-pinned' })],
        index: [entry, poison],
      });

      // Assess: the poison entry alone, with the field that makes it too big
      expect(oversized).toEqual([
        {
          item: 'nodeclass-index',
          entry: { cluster: 'prod', name: 'poison' },
          bytes: expect.any(Number),
          maxBytes: 409_600,
          largestField: 'amiSelectorTerms',
        },
      ]);
      expect(oversized[0]?.bytes).toBeGreaterThan(420_000);
      expect(dynamo.calls()).toEqual([]);
    });

    it('counts room for the pending notification in a finding state', async () => {
      // A message the budgets would have cut (made here without them) leaves no room for it.
      const unbounded = aFinding({ message: 'm'.repeat(200_000) });
      const oversized = await store.oversizedItems({ findings: [unbounded], index: [] });
      expect(oversized).toEqual([
        {
          item: 'finding-state',
          finding: unbounded,
          bytes: expect.any(Number),
          maxBytes: 409_600,
        },
      ]);
    });

    it('refuses to send an index write or a claim DynamoDB would refuse, naming the item', async () => {
      // Prepare
      dynamo.on(QueryCommand).resolves({ Items: [] });
      dynamo.on(BatchWriteCommand).resolves({});
      dynamo.on(PutCommand).resolves({});
      const change = firstChange('new');
      const huge = { ...change, next: { ...change.next, message: 'm'.repeat(410_000) } };

      // Act & assess
      await expect(store.replaceClusterIndex(PROD, [entry, poison])).rejects.toThrow(
        /^item NODECLASS \/ 111122223333\/eu-west-1\/prod#poison is 42\d{4} bytes, over the 409600-byte item limit/
      );
      await expect(store.putIndexEntries([poison])).rejects.toBeInstanceOf(ItemTooLargeError);
      await expect(store.claim(huge, claimInput(change))).rejects.toBeInstanceOf(ItemTooLargeError);
      expect(dynamo.commandCalls(BatchWriteCommand)).toEqual([]);
      expect(dynamo.commandCalls(PutCommand)).toEqual([]);
    });
  });
});
