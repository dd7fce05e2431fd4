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

let table: FakeTable;

beforeEach(() => {
  table = fakeDynamoDb();
  capturingSns();
});

function handlerWith(env: Record<string, string>) {
  return createHandler({
    env: { ...SERVICE_ENV, ...env },
    planFor: objectsPlan(
      new Map([
        ['prod', [brokenProfile]],
        ['staging', [brokenProfile]],
      ])
    ),
    clock: () => new Date('2026-11-01T10:15:05Z'),
  });
}

function openClusters(): string[] {
  return table
    .findings()
    .filter((item) => item.checkId === CHECK && item.status === 'open')
    .map((item) => String(item.pk));
}

describe('scan-cluster handler with IGNORE_RULES', () => {
  it('keeps a finding an ignore rule accepts from opening; other clusters alert as before', async () => {
    // Prepare
    const rule = { check: CHECK, resource: 'prod/EC2NodeClass/*', reason: 'old chart' };
    // Act
    const response = await handlerWith({ IGNORE_RULES: JSON.stringify([rule]) })(
      batch,
      lambdaContext()
    );
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(openClusters()).toEqual(['CLUSTER#111122223333/eu-west-1/staging']);
  });

  it('opens both once the rule has expired', async () => {
    const rule = { check: CHECK, resource: '*/*/*', reason: 'old chart', expires: '2026-10-31' };
    await handlerWith({ IGNORE_RULES: JSON.stringify([rule]) })(batch, lambdaContext());
    expect(openClusters().sort()).toEqual([
      'CLUSTER#111122223333/eu-west-1/prod',
      'CLUSTER#111122223333/eu-west-1/staging',
    ]);
  });

  it('fails every record when a rule names no check (a configuration error, not a clean scan)', async () => {
    const rule = { check: 'instance-profile', resource: '*/*/*', reason: 'typo' };
    const handler = handlerWith({ IGNORE_RULES: JSON.stringify([rule]) });
    await expect(handler(batch, lambdaContext())).rejects.toThrow(
      /IGNORE_RULES\[0\]\.check: unknown check id "instance-profile"/
    );
  });
});

describe('scan-cluster handler with ANNOTATION_SUPPRESSION', () => {
  const annotated = aNodeClassObject({
    name: 'default',
    metadata: { annotations: { [`ignore-check.nodeclass-scanner/${CHECK}`]: 'old chart' } },
    spec: {
      role: undefined,
      instanceProfile: 'arn:aws:iam::111122223333:instance-profile/KarpenterNodeProfile',
    },
  });
  const handlerOver = (env: Record<string, string>) =>
    createHandler({
      env: { ...SERVICE_ENV, ...env },
      planFor: objectsPlan(
        new Map([
          ['prod', [annotated]],
          ['staging', [annotated]],
        ])
      ),
      clock: () => new Date('2026-11-01T10:15:05Z'),
    });

  it('lets the annotation suppress by default', async () => {
    await handlerOver({})(batch, lambdaContext());
    expect(openClusters()).toEqual([]);
  });

  it('deny: the annotated finding opens in every cluster, its message saying the setting refused the annotation', async () => {
    // Act
    const response = await handlerOver({ ANNOTATION_SUPPRESSION: 'deny' })(batch, lambdaContext());
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(openClusters().sort()).toEqual([
      'CLUSTER#111122223333/eu-west-1/prod',
      'CLUSTER#111122223333/eu-west-1/staging',
    ]);
    const stored = table.findings().find((item) => item.checkId === CHECK);
    expect(String(stored?.message)).toContain(
      "refused: the deployment's annotationSuppression setting does not let annotations suppress instance-profile-is-name"
    );
  });

  it('fails every record when the list names no check (a configuration error)', async () => {
    const handler = handlerOver({ ANNOTATION_SUPPRESSION: 'instance-profile' });
    await expect(handler(batch, lambdaContext())).rejects.toThrow(
      /ANNOTATION_SUPPRESSION\[0\]: unknown check id "instance-profile"/
    );
  });
});
