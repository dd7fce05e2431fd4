import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  BatchWriteCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createFindingStore } from '../../../lambda/adapters/aws/finding-store.js';
import type { NodeClassIndexEntry } from '../../../lambda/core/event-index.js';
import { diffFindings } from '../../../lambda/core/lifecycle.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';
import { aFinding, aStoredState } from '../../support/findings.js';

const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const dynamo = mockClient(documentClient);
const NOW = new Date('2026-11-01T00:00:00Z');
const store = createFindingStore(documentClient, {
  tableName: 'state',
  resolvedTtlDays: 30,
  now: () => NOW,
});

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

const entry: NodeClassIndexEntry = {
  cluster: 'prod',
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
    const claimed = await store.claim(change);
    // Assess
    expect(claimed).toBe(true);
    expect(dynamo.commandCalls(PutCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      ConditionExpression: 'attribute_not_exists(pk)',
      Item: {
        pk: 'CLUSTER#prod',
        sk: `FINDING#${change.next.id}`,
        type: 'finding',
        id: change.next.id,
        checkId: 'instance-profile-is-name',
        cluster: 'prod',
        resourceKind: 'EC2NodeClass',
        resourceName: 'default',
        status: 'open',
        findingStatus: 'fail',
        severity: 'critical',
        message: 'spec.instanceProfile is an ARN.',
        firstSeen: NOW.toISOString(),
        lastSeen: NOW.toISOString(),
        lastNotified: NOW.toISOString(),
        revision: 1,
      },
    });
  });

  it('claims a transition conditionally on the previous revision and sets the TTL on resolved', async () => {
    dynamo.on(PutCommand).resolves({});
    const change = firstChange('resolved');
    await store.claim(change);
    const input = dynamo.commandCalls(PutCommand)[0]?.args[0].input;
    expect(input?.ConditionExpression).toBe('revision = :revision');
    expect(input?.ExpressionAttributeValues).toEqual({ ':revision': 4 });
    expect(input?.Item).toMatchObject({
      status: 'resolved',
      revision: 5,
      resolvedAt: NOW.toISOString(),
      expiresAt: NOW.getTime() / 1000 + 30 * 86_400,
    });
  });

  it('returns false when another delivery already claimed the change', async () => {
    dynamo.on(PutCommand).rejects(conditionFailed);
    expect(await store.claim(firstChange('new'))).toBe(false);
  });

  it('classifies other write errors as SourceUnavailableError', async () => {
    dynamo
      .on(PutCommand)
      .rejects(
        Object.assign(new Error('slow down'), { name: 'ProvisionedThroughputExceededException' })
      );
    await expect(store.claim(firstChange('new'))).rejects.toMatchObject({
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
    await store.release(created);
    await store.release(resolved);
    expect(dynamo.commandCalls(DeleteCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: 'CLUSTER#prod', sk: `FINDING#${created.next.id}` },
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': 1 },
    });
    expect(dynamo.commandCalls(PutCommand)[0]?.args[0].input).toMatchObject({
      ConditionExpression: 'revision = :revision',
      ExpressionAttributeValues: { ':revision': 5 },
      Item: { status: 'open', revision: 4 },
    });
  });

  it('loads a cluster with a consistent, paginated query and maps items back to states', async () => {
    const state = aStoredState(aFinding(), '2026-10-01T00:00:00.000Z');
    const item = {
      pk: 'CLUSTER#prod',
      sk: `FINDING#${state.id}`,
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
      .resolvesOnce({ Items: [item], LastEvaluatedKey: { pk: 'CLUSTER#prod', sk: item.sk } })
      .resolvesOnce({ Items: [] });
    const states = await store.loadFindings('prod');
    expect(states).toEqual([state]);
    const calls = dynamo.commandCalls(QueryCommand);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.args[0].input).toEqual({
      TableName: 'state',
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'CLUSTER#prod', ':prefix': 'FINDING#' },
      ConsistentRead: true,
    });
    expect(calls[1]?.args[0].input.ExclusiveStartKey).toEqual({ pk: 'CLUSTER#prod', sk: item.sk });
  });

  it('rejects a malformed stored item with a clear error', async () => {
    dynamo
      .on(QueryCommand)
      .resolves({ Items: [{ pk: 'CLUSTER#prod', sk: 'FINDING#x', severity: 'extreme' }] });
    await expect(store.loadFindings('prod')).rejects.toBeInstanceOf(SourceUnavailableError);
  });

  it('touches lastSeen without bumping the revision, ignoring lost races', async () => {
    dynamo.on(UpdateCommand).rejectsOnce(conditionFailed).resolves({});
    const state = {
      ...aStoredState(aFinding(), '2026-10-01T00:00:00.000Z'),
      lastSeen: NOW.toISOString(),
    };
    await store.touch([state, { ...state, id: 'other' }]);
    expect(dynamo.commandCalls(UpdateCommand)[0]?.args[0].input).toEqual({
      TableName: 'state',
      Key: { pk: 'CLUSTER#prod', sk: `FINDING#${state.id}` },
      UpdateExpression: 'SET lastSeen = :lastSeen',
      ConditionExpression: 'revision = :revision AND #status = :open',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':lastSeen': NOW.toISOString(),
        ':revision': 1,
        ':open': 'open',
      },
    });
    expect(dynamo.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('replaces a cluster index: puts current NodeClasses and deletes the ones gone', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [
        {
          pk: 'NODECLASS',
          sk: 'prod#default',
          cluster: 'prod',
          name: 'default',
          amiSelectorTerms: [],
          resolvedAmiIds: [],
        },
        {
          pk: 'NODECLASS',
          sk: 'prod#old',
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
          state: [{ DeleteRequest: { Key: { pk: 'NODECLASS', sk: 'prod#old' } } }],
        },
      })
      .resolves({});
    await store.replaceClusterIndex('prod', [entry]);
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': 'NODECLASS', ':prefix': 'prod#' },
    });
    const writes = dynamo.commandCalls(BatchWriteCommand);
    expect(writes[0]?.args[0].input.RequestItems?.state).toEqual([
      {
        PutRequest: {
          Item: {
            pk: 'NODECLASS',
            sk: 'prod#default',
            type: 'nodeclass',
            cluster: 'prod',
            name: 'default',
            amiSelectorTerms: [{ name: 'eks-node-*', owner: 'self' }],
            resolvedAmiIds: ['ami-0123456789abcdef0'],
            nodeRole: 'KarpenterNodeRole-prod',
            updatedAt: NOW.toISOString(),
          },
        },
      },
      { DeleteRequest: { Key: { pk: 'NODECLASS', sk: 'prod#old' } } },
    ]);
    // The unprocessed delete is retried.
    expect(writes[1]?.args[0].input.RequestItems?.state).toEqual([
      { DeleteRequest: { Key: { pk: 'NODECLASS', sk: 'prod#old' } } },
    ]);
  });

  it('loads the whole index', async () => {
    dynamo.on(QueryCommand).resolves({
      Items: [{ pk: 'NODECLASS', sk: 'prod#default', type: 'nodeclass', updatedAt: 'x', ...entry }],
    });
    expect(await store.loadIndex()).toEqual([entry]);
    expect(dynamo.commandCalls(QueryCommand)[0]?.args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': 'NODECLASS' },
    });
  });
});
