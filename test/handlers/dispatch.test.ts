import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambda/handlers/dispatch.js';
import { ConfigError } from '../../lambda/shared/errors.js';
import { exampleEvent } from '../support/handler-fixtures.js';

const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/111122223333/NodeClassScanner-ScanQueue';
const sqs = mockClient(SQSClient);

beforeEach(() => {
  sqs.reset();
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
    const result = await handler(exampleEvent('scheduled-event.json'));
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
    await expect(handler(exampleEvent('scheduled-event.json'))).rejects.toThrow(ConfigError);
    await expect(handler(exampleEvent('scheduled-event.json'))).rejects.toThrow(
      /SCAN_QUEUE_URL: missing; CLUSTERS: missing/
    );
  });
});
