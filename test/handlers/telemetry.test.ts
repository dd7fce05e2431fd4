// What the handlers write to stdout around an invocation: Powertools log lines with the Lambda
// context, and EMF documents flushed by the metrics middleware whether the handler returned or threw.
import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
import type { SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler as createAmiEventHandler } from '../../lambda/handlers/ami-event.js';
import { createHandler as createDispatchHandler } from '../../lambda/handlers/dispatch.js';
import { createHandler as createScanClusterHandler } from '../../lambda/handlers/scan-cluster.js';
import { aNodeClassObject } from '../support/builders.js';
import { fakeDynamoDb } from '../support/fake-dynamodb.js';
import {
  capturingSns,
  exampleEvent,
  objectsPlan,
  SERVICE_ENV,
} from '../support/handler-fixtures.js';
import { captureJsonLines, lambdaContext } from './lambda-context.js';

// The test setup silences both; the shared Logger reads its level once, at import.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

const IMAGE_ID = 'ami-0123456789abcdef0';
const batch = exampleEvent<SQSEvent>('sqs-scan-cluster-batch.json');
const [prodRecord, stagingRecord] = batch.Records;
const world = new Map([
  ['prod', [aNodeClassObject({ name: 'default', spec: { amiSelectorTerms: [{ id: IMAGE_ID }] } })]],
  ['staging', [aNodeClassObject({ name: 'default' })]],
]);

const ec2 = mockClient(EC2Client);
let lines: Record<string, unknown>[];

beforeEach(() => {
  ec2.reset();
  ec2.on(DescribeImagesCommand).resolves({ Images: [] });
  fakeDynamoDb();
  capturingSns();
  lines = captureJsonLines();
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A scan worker writing per-cluster series (`metricsDetail` `cluster`). */
function scanCluster(failing: string[] = []) {
  return createScanClusterHandler({
    env: { ...SERVICE_ENV, METRICS_DETAIL: 'cluster' },
    planFor: objectsPlan(world, new Set(failing)),
    clock: () => new Date('2026-11-01T10:15:05Z'),
  });
}

const emf = (name: string) => lines.filter((line) => name in line);

describe('handler telemetry', () => {
  it('writes the Lambda context and the message id on the log lines of a record', async () => {
    // Act
    await scanCluster(['staging'])(batch, lambdaContext('NodeClassScanner-ScanCluster'));
    // Assess
    const failed = lines.find((line) => line.message === 'Cluster scan failed');
    expect(failed).toMatchObject({
      level: 'ERROR',
      service: 'nodeclass-scanner',
      function_name: 'NodeClassScanner-ScanCluster',
      function_request_id: 'c6af9ac6-7b61-11e6-9a41-93e812345678',
      function_arn: 'arn:aws:lambda:eu-west-1:111122223333:function:NodeClassScanner-ScanCluster',
      function_memory_size: '512',
      correlation_id: stagingRecord?.messageId,
    });
    expect(typeof failed?.cold_start).toBe('boolean');
  });

  it('counts and logs each dropped malformed message', async () => {
    // Prepare
    const bad = { ...prodRecord, messageId: 'bad-1', body: '{"version":1,"cluster":"<!channel>"}' };
    const notJson = { ...prodRecord, messageId: 'bad-2', body: 'not json' };
    // Act
    const response = await scanCluster()({ Records: [bad, notJson] } as SQSEvent, lambdaContext());
    // Assess
    expect(response).toEqual({ batchItemFailures: [] });
    expect(emf('EventsIgnored').map((line) => [line.Reason, line.EventsIgnored])).toEqual([
      ['malformed-scan-request', 1],
      ['malformed-scan-request', 1],
    ]);
    expect(
      lines
        .filter((line) => line.message === 'Scan request ignored')
        .map((line) => [line.level, line.correlation_id])
    ).toEqual([
      ['WARN', 'bad-1'],
      ['WARN', 'bad-2'],
    ]);
  });

  it('writes the invocation-wide metrics as one EMF document after the batch', async () => {
    // Act
    await scanCluster(['staging'])(batch, lambdaContext());
    // Assess: one document for the invocation, and each cluster's calls with its own dimension.
    const totals = emf('AwsApiCalls').filter((line) => !('Cluster' in line));
    expect(totals).toHaveLength(1);
    expect(
      emf('AwsApiCalls')
        .filter((line) => 'Cluster' in line)
        .map((line) => line.Cluster)
    ).toEqual(['prod', 'staging']);
    expect(totals[0]).toMatchObject({ ClustersScanned: 1, service: 'nodeclass-scanner' });
    expect(totals[0]?._aws).toMatchObject({
      CloudWatchMetrics: [{ Namespace: 'NodeClassScanner' }],
    });
    expect(emf('SourceErrors')).toMatchObject([
      { Cluster: 'prod', SourceErrors: 0 },
      { Cluster: 'staging', SourceErrors: 1 },
    ]);
  });

  it('flushes the stored metrics as EMF when the invocation throws', async () => {
    // Prepare: the AMI event matches prod's NodeClass, whose scan fails, so the event is retried.
    const handler = createAmiEventHandler({
      env: SERVICE_ENV,
      planFor: objectsPlan(world, new Set(['prod'])),
      clock: () => new Date('2026-11-01T10:00:05Z'),
    });
    const table = fakeDynamoDb();
    table.items.set(`NODECLASS|prod#default`, {
      pk: 'NODECLASS',
      sk: 'prod#default',
      type: 'nodeclass',
      cluster: 'prod',
      name: 'default',
      amiSelectorTerms: [{ id: IMAGE_ID }],
      resolvedAmiIds: [],
    });
    // Act
    const invocation = handler(
      exampleEvent('ami-state-change-deregistered.json'),
      lambdaContext('NodeClassScanner-AmiEvent')
    );
    // Assess
    await expect(invocation).rejects.toThrow(/prod/);
    const totals = emf('AwsApiCalls').filter((line) => !('Cluster' in line));
    expect(totals).toHaveLength(1);
    expect(totals[0]?._aws).toMatchObject({
      CloudWatchMetrics: [{ Namespace: 'NodeClassScanner' }],
    });
  });

  it('resets the correlation id and context keys between invocations', async () => {
    // Prepare
    const handler = scanCluster();
    await handler(
      { Records: [{ ...prodRecord, messageId: 'bad-1', body: 'not json' }] } as SQSEvent,
      lambdaContext()
    );
    lines.length = 0;
    // Act
    await createDispatchHandler({ env: { AWS_REGION: 'eu-west-1' } })(
      exampleEvent('scheduled-event.json'),
      lambdaContext('NodeClassScanner-Dispatch')
    ).catch(() => undefined);
    await handler({ Records: [] } as unknown as SQSEvent, lambdaContext());
    // Assess
    expect(lines.some((line) => line.correlation_id === 'bad-1')).toBe(false);
  });
});
