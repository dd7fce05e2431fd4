import type { SQSEvent } from 'aws-lambda';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambda/handlers/scan-cluster.js';
import { aNodeClassObject } from '../support/builders.js';
import { type FakeTable, fakeDynamoDb } from '../support/fake-dynamodb.js';
import {
  capturingSns,
  exampleEvent,
  objectsPlan,
  SERVICE_ENV,
} from '../support/handler-fixtures.js';
import { lambdaContext } from './lambda-context.js';

const CHECK = 'instance-profile-is-name';
const brokenProfile = aNodeClassObject({
  name: 'default',
  spec: {
    role: undefined,
    instanceProfile: 'arn:aws:iam::111122223333:instance-profile/KarpenterNodeProfile',
  },
});
const batch = exampleEvent<SQSEvent>('sqs-scan-cluster-batch.json');
const [prodRecord, stagingRecord] = batch.Records;

let table: FakeTable;
let sns: ReturnType<typeof capturingSns>;

beforeEach(() => {
  table = fakeDynamoDb();
  sns = capturingSns();
});

function handlerWith(failing: string[] = []) {
  return createHandler({
    env: SERVICE_ENV,
    planFor: objectsPlan(
      new Map([
        ['prod', [brokenProfile]],
        ['staging', [brokenProfile]],
      ]),
      new Set(failing)
    ),
    clock: () => new Date('2026-11-01T10:15:05Z'),
  });
}

describe('scan-cluster handler', () => {
  it('scans each cluster of the batch, publishes the findings and stores their state', async () => {
    // Act
    const response = await handlerWith()(batch, lambdaContext());
    // Assess: a first scan of each cluster is one summary naming account, region and cluster
    expect(response).toEqual({ batchItemFailures: [] });
    const summaries = sns.published().filter((m) => m.attributes.change === 'summary');
    const where = { account: '111122223333', region: 'eu-west-1' };
    expect(summaries.map((m) => m.attributes)).toEqual([
      { change: 'summary', severity: 'critical', cluster: 'prod', ...where },
      { change: 'summary', severity: 'critical', cluster: 'staging', ...where },
    ]);
    const body = JSON.parse(summaries[0]?.bodies.default ?? '{}');
    expect(body).toMatchObject({
      version: 1,
      change: 'summary',
      cluster: 'prod',
      ...where,
      firstScan: true,
    });
    expect(body.changes).toContainEqual(
      expect.objectContaining({
        change: 'new',
        checkId: CHECK,
        status: 'fail',
        resource: { cluster: 'prod', kind: 'EC2NodeClass', name: 'default' },
      })
    );
    expect(body.text).toContain(
      'NEW CRITICAL instance-profile-is-name on prod/EC2NodeClass/default'
    );
    expect(body.text).toContain('Where: cluster prod, account 111122223333, region eu-west-1');
    expect(JSON.parse(summaries[0]?.bodies.https ?? '{}')).toMatchObject({
      version: '1.0',
      source: 'custom',
    });
    expect(summaries[0]?.bodies.email).toBe(body.text);
    const stored = table.findings().filter((item) => item.checkId === CHECK);
    expect(stored.map((item) => [item.pk, item.status, item.revision])).toEqual([
      ['CLUSTER#111122223333/eu-west-1/prod', 'open', 1],
      ['CLUSTER#111122223333/eu-west-1/staging', 'open', 1],
    ]);
    expect(table.items.get('NODECLASS|111122223333/eu-west-1/prod#default')).toMatchObject({
      cluster: 'prod',
      account: '111122223333',
      region: 'eu-west-1',
      name: 'default',
    });
    expect(sns.published().filter((m) => m.attributes.change === 'digest')).toHaveLength(2);
  });

  it('publishes nothing new when the same batch is delivered again', async () => {
    const handler = handlerWith();
    await handler(batch, lambdaContext());
    const before = sns.published().length;
    await handler(batch, lambdaContext());
    expect(sns.published().length).toBe(before);
  });

  it('reports only the failed cluster’s message for retry; the other is still published', async () => {
    const response = await handlerWith(['staging'])(batch, lambdaContext());
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: stagingRecord?.messageId }] });
    expect(
      sns
        .published()
        .filter((m) => m.attributes.change === 'summary')
        .map((m) => m.attributes.cluster)
    ).toEqual(['prod']);
  });

  it('reports every message for retry when every scan of the batch failed, without throwing', async () => {
    const response = await handlerWith(['prod', 'staging'])(batch, lambdaContext());
    expect(response).toEqual({
      batchItemFailures: [
        { itemIdentifier: prodRecord?.messageId },
        { itemIdentifier: stagingRecord?.messageId },
      ],
    });
  });

  it('drops a malformed message without failing the batch', async () => {
    const bad = { ...prodRecord, messageId: 'bad-1', body: '{"version":1,"cluster":"<!channel>"}' };
    const notJson = { ...prodRecord, messageId: 'bad-2', body: 'not json' };
    const response = await handlerWith()({ Records: [bad, notJson] } as SQSEvent, lambdaContext());
    expect(response).toEqual({ batchItemFailures: [] });
    expect(sns.published()).toEqual([]);
  });
});
