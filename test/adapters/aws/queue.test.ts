import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createScanQueue } from '../../../lambda/adapters/aws/queue.js';
import type { ClusterScanRequest } from '../../../lambda/core/ports/service.js';

const sqs = mockClient(SQSClient);
const URL = 'https://sqs.eu-west-1.amazonaws.com/111122223333/scan';
const request = (cluster: string): ClusterScanRequest => ({
  version: 1,
  cluster,
  trigger: 'schedule',
  requestedAt: '2026-11-01T00:00:00.000Z',
});

beforeEach(() => {
  sqs.reset();
});

describe('createScanQueue', () => {
  it('sends one JSON message per request, at most 10 per batch', async () => {
    // Prepare
    sqs.on(SendMessageBatchCommand).callsFake((input: { Entries: { Id: string }[] }) => ({
      Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: e.Id, MD5OfMessageBody: 'x' })),
    }));
    const requests = Array.from({ length: 12 }, (_, i) => request(`c${i}`));
    // Act
    const result = await createScanQueue(new SQSClient({}), URL).enqueue(requests);
    // Assess
    expect(result.failed).toEqual([]);
    const calls = sqs.commandCalls(SendMessageBatchCommand);
    expect(calls.map((c) => c.args[0].input.Entries?.length)).toEqual([10, 2]);
    expect(calls[0]?.args[0].input).toMatchObject({ QueueUrl: URL });
    expect(calls[0]?.args[0].input.Entries?.[0]).toEqual({
      Id: 'm0',
      MessageBody: JSON.stringify(request('c0')),
    });
  });

  it('retries a transient failure once and reports what still failed by cluster', async () => {
    sqs
      .on(SendMessageBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: 'm0', MessageId: '1', MD5OfMessageBody: 'x' }],
        Failed: [{ Id: 'm1', Code: 'InternalError', SenderFault: false }],
      })
      .resolves({
        Failed: [{ Id: 'm1', Code: 'InternalError', SenderFault: false, Message: 'still' }],
      });
    const result = await createScanQueue(new SQSClient({}), URL).enqueue([
      request('a'),
      request('b'),
    ]);
    expect(result.failed).toEqual([{ id: 'b', code: 'InternalError', message: 'still' }]);
    expect(sqs.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });
});
