import { DescribeClusterCommand, EKSClient, ListClustersCommand } from '@aws-sdk/client-eks';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambda/handlers/dispatch.js';
import { ConfigError } from '../../lambda/shared/errors.js';
import { exampleEvent } from '../support/handler-fixtures.js';
import { lambdaContext } from './lambda-context.js';

const context = lambdaContext('NodeClassScanner-Dispatch');

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/NodeClassScanner-ScanQueue';
const sqs = mockClient(SQSClient);
const eks = mockClient(EKSClient);

beforeEach(() => {
  sqs.reset();
  eks.reset();
  sqs.on(SendMessageBatchCommand).callsFake((input) => ({
    Successful: (input.Entries as { Id: string }[]).map((e) => ({
      Id: e.Id,
      MessageId: e.Id,
      MD5OfMessageBody: 'x',
    })),
  }));
});

describe('dispatch handler', () => {
  it('enqueues one scan request per configured cluster on the schedule', async () => {
    // Prepare
    const handler = createHandler({
      env: { AWS_REGION: 'eu-west-1', SCAN_QUEUE_URL: QUEUE, CLUSTERS: 'prod,staging@us-east-2' },
      clock: () => new Date('2026-11-01T10:15:00.412Z'),
    });
    // Act
    const result = await handler(exampleEvent('scheduled-event.json'), context);
    // Assess
    expect(result).toEqual({ enqueued: 2 });
    const input = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input;
    expect(input?.QueueUrl).toBe(QUEUE);
    expect(input?.Entries?.map((e) => JSON.parse(e.MessageBody ?? ''))).toEqual([
      { version: 1, cluster: 'prod', trigger: 'schedule', requestedAt: '2026-11-01T10:15:00.412Z' },
      {
        version: 1,
        cluster: 'staging',
        region: 'us-east-2',
        trigger: 'schedule',
        requestedAt: '2026-11-01T10:15:00.412Z',
      },
    ]);
  });

  it('fails with a ConfigError naming every missing variable', async () => {
    const handler = createHandler({ env: { AWS_REGION: 'eu-west-1' } });
    await expect(handler(exampleEvent('scheduled-event.json'), context)).rejects.toThrow(
      ConfigError
    );
    await expect(handler(exampleEvent('scheduled-event.json'), context)).rejects.toThrow(
      /SCAN_QUEUE_URL: missing; CLUSTERS: missing/
    );
  });

  it('discovers tagged clusters in each discovery region and enqueues them with the configured ones', async () => {
    // Prepare
    eks.on(ListClustersCommand).resolves({ clusters: ['prod', 'batch', 'untagged'] });
    eks.on(DescribeClusterCommand).callsFake((input: { name: string }) => ({
      cluster: {
        name: input.name,
        tags: input.name === 'untagged' ? {} : { 'karpenter.sh/discovery': input.name },
      },
    }));
    const handler = createHandler({
      env: {
        AWS_REGION: 'eu-west-1',
        SCAN_QUEUE_URL: QUEUE,
        CLUSTERS: 'prod',
        DISCOVER_CLUSTERS: 'karpenter.sh/discovery',
      },
      clock: () => new Date('2026-11-01T10:15:00.000Z'),
    });
    // Act
    const result = await handler(exampleEvent('scheduled-event.json'), context);
    // Assess
    expect(result).toEqual({ enqueued: 2 });
    const input = sqs.commandCalls(SendMessageBatchCommand)[0]?.args[0].input;
    expect(input?.Entries?.map((e) => JSON.parse(e.MessageBody ?? '').cluster)).toEqual([
      'prod',
      'batch',
    ]);
  });

  it('accepts discovery without a cluster list, and refuses neither', async () => {
    eks.on(ListClustersCommand).resolves({ clusters: [] });
    const discoverOnly = createHandler({
      env: { AWS_REGION: 'eu-west-1', SCAN_QUEUE_URL: QUEUE, CLUSTERS: '', DISCOVER_CLUSTERS: '*' },
    });
    await expect(discoverOnly(exampleEvent('scheduled-event.json'), context)).resolves.toEqual({
      enqueued: 0,
    });
    const neither = createHandler({
      env: { AWS_REGION: 'eu-west-1', SCAN_QUEUE_URL: QUEUE, CLUSTERS: '' },
    });
    await expect(neither(exampleEvent('scheduled-event.json'), context)).rejects.toThrow(
      /CLUSTERS: must list at least one cluster, or set DISCOVER_CLUSTERS/
    );
  });
});
