// SNS implementation of the NotificationPublisher port: PublishBatch with at most 10 entries and
// at most 256 KiB per request (SNS quotas), `MessageStructure: json` for per-protocol bodies.
// Entries that fail for a transient reason are retried once; what still fails is returned (never
// thrown) so the caller can undo exactly those claims. A message id given twice (a summary carried
// by several claims) is sent once: SNS rejects a batch with repeated entry ids.

import {
  PublishBatchCommand,
  type PublishBatchRequestEntry,
  type SNSClient,
} from '@aws-sdk/client-sns';
import type { OutgoingMessage } from '../../core/notify/message.js';
import { utf8Length } from '../../core/notify/sanitize.js';
import type { NotificationPublisher } from '../../core/ports/service.js';
import { batchesWithin } from '../../shared/chunks.js';
import { classifyAwsError } from './aws-errors.js';
import { type BatchSender, sendBatches } from './batch-send.js';

export const snsPublisherActions = ['sns:Publish'] as const;

export type SnsSender = Pick<SNSClient, 'send'>;

const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 256 * 1024;

export function toBatchEntry(message: OutgoingMessage): PublishBatchRequestEntry {
  return {
    Id: message.id,
    Message: JSON.stringify(message.bodies),
    MessageStructure: 'json',
    Subject: message.subject,
    MessageAttributes: Object.fromEntries(
      Object.entries(message.attributes).map(([name, value]) => [
        name,
        { DataType: 'String', StringValue: value },
      ])
    ),
  };
}

function entryBytes(entry: PublishBatchRequestEntry): number {
  const attributes = Object.entries(entry.MessageAttributes ?? {}).reduce(
    (sum, [name, value]) =>
      sum +
      utf8Length(name) +
      utf8Length(value.DataType ?? '') +
      utf8Length(value.StringValue ?? ''),
    0
  );
  return utf8Length(entry.Message ?? '') + utf8Length(entry.Subject ?? '') + attributes;
}

/** Groups entries into requests of ≤10 entries and ≤256 KiB, in order. */
export function planBatches(
  entries: readonly PublishBatchRequestEntry[]
): PublishBatchRequestEntry[][] {
  return batchesWithin(
    entries,
    { maxItems: MAX_BATCH_ENTRIES, maxBytes: MAX_BATCH_BYTES },
    entryBytes
  );
}

export function createSnsPublisher(sns: SnsSender, topicArn: string): NotificationPublisher {
  const sender: BatchSender<PublishBatchRequestEntry> = {
    service: 'SNS',
    send: (entries) =>
      sns.send(
        new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: entries })
      ),
    isRetryableError: (error) => {
      const reason = classifyAwsError(error);
      return reason === 'throttled' || reason === 'unreachable' || reason === 'timeout';
    },
  };

  return {
    async publish(messages) {
      const unique = [...new Map(messages.map((message) => [message.id, message])).values()];
      const entries = unique.map(toBatchEntry);
      return { failed: await sendBatches(sender, planBatches(entries)) };
    },
  };
}
