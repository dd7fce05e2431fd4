import { PublishBatchCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  createSnsPublisher,
  planBatches,
  toBatchEntry,
} from '../../../lambda/adapters/aws/sns-publisher.js';
import type { OutgoingMessage } from '../../../lambda/core/notify/message.js';

const sns = mockClient(SNSClient);
const TOPIC = 'arn:aws:sns:eu-west-1:111122223333:findings';

function aMessage(id: string, size = 10): OutgoingMessage {
  return {
    id,
    subject: `[nodeclass-scanner] ${id}`,
    attributes: { change: 'new', severity: 'high', checkId: 'c', cluster: 'prod' },
    bodies: { default: JSON.stringify({ id, pad: 'x'.repeat(size) }), email: id, https: '{}' },
  };
}

beforeEach(() => {
  sns.reset();
});

describe('createSnsPublisher', () => {
  it('publishes a structured message with String attributes', async () => {
    // Prepare
    sns.on(PublishBatchCommand).resolves({ Successful: [{ Id: 'a', MessageId: '1' }], Failed: [] });
    // Act
    const result = await createSnsPublisher(new SNSClient({}), TOPIC).publish([aMessage('a')]);
    // Assess
    expect(result.failed).toEqual([]);
    expect(sns.commandCalls(PublishBatchCommand)[0]?.args[0].input).toEqual({
      TopicArn: TOPIC,
      PublishBatchRequestEntries: [
        {
          Id: 'a',
          Message: JSON.stringify(aMessage('a').bodies),
          MessageStructure: 'json',
          Subject: '[nodeclass-scanner] a',
          MessageAttributes: {
            change: { DataType: 'String', StringValue: 'new' },
            severity: { DataType: 'String', StringValue: 'high' },
            checkId: { DataType: 'String', StringValue: 'c' },
            cluster: { DataType: 'String', StringValue: 'prod' },
          },
        },
      ],
    });
  });

  it('sends a message given twice (a summary several claims carry) once, without its covers', async () => {
    sns.on(PublishBatchCommand).resolves({ Successful: [{ Id: 's', MessageId: '1' }], Failed: [] });
    const summary = { ...aMessage('s'), covers: ['new:a', 'new:b'] };
    await createSnsPublisher(new SNSClient({}), TOPIC).publish([summary, summary]);
    const entries =
      sns.commandCalls(PublishBatchCommand)[0]?.args[0].input.PublishBatchRequestEntries;
    expect(entries?.map((entry) => entry.Id)).toEqual(['s']);
    expect(JSON.stringify(entries)).not.toContain('covers');
  });

  it('sends at most 10 entries per request', async () => {
    sns
      .on(PublishBatchCommand)
      .callsFake((input: { PublishBatchRequestEntries: { Id: string }[] }) => ({
        Successful: input.PublishBatchRequestEntries.map((entry) => ({
          Id: entry.Id,
          MessageId: entry.Id,
        })),
      }));
    const messages = Array.from({ length: 23 }, (_, i) => aMessage(`m${i}`));
    const result = await createSnsPublisher(new SNSClient({}), TOPIC).publish(messages);
    expect(result.failed).toEqual([]);
    expect(
      sns
        .commandCalls(PublishBatchCommand)
        .map((c) => c.args[0].input.PublishBatchRequestEntries?.length)
    ).toEqual([10, 10, 3]);
  });

  it('keeps each request under 256 KiB in total', () => {
    const entries = Array.from({ length: 5 }, (_, i) => toBatchEntry(aMessage(`big${i}`, 100_000)));
    expect(planBatches(entries).map((batch) => batch.length)).toEqual([2, 2, 1]);
  });

  it('retries transient entry failures once and returns sender faults without retrying', async () => {
    sns
      .on(PublishBatchCommand)
      .resolvesOnce({
        Successful: [{ Id: 'a', MessageId: '1' }],
        Failed: [
          { Id: 'b', Code: 'InternalError', SenderFault: false, Message: 'try again' },
          { Id: 'c', Code: 'InvalidParameter', SenderFault: true, Message: 'bad attribute' },
        ],
      })
      .resolves({ Successful: [{ Id: 'b', MessageId: '2' }] });
    const result = await createSnsPublisher(new SNSClient({}), TOPIC).publish([
      aMessage('a'),
      aMessage('b'),
      aMessage('c'),
    ]);
    expect(result.failed).toEqual([
      { id: 'c', code: 'InvalidParameter', message: 'bad attribute' },
    ]);
    const calls = sns.commandCalls(PublishBatchCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]?.args[0].input.PublishBatchRequestEntries?.map((e) => e.Id)).toEqual(['b']);
  });

  it('returns every entry as failed when the whole call fails (no throw)', async () => {
    sns
      .on(PublishBatchCommand)
      .rejects(Object.assign(new Error('denied'), { name: 'AuthorizationErrorException' }));
    const result = await createSnsPublisher(new SNSClient({}), TOPIC).publish([
      aMessage('a'),
      aMessage('b'),
    ]);
    expect(result.failed).toEqual([
      { id: 'a', code: 'AuthorizationErrorException', message: 'denied' },
      { id: 'b', code: 'AuthorizationErrorException', message: 'denied' },
    ]);
    expect(sns.commandCalls(PublishBatchCommand)).toHaveLength(1);
  });
});
