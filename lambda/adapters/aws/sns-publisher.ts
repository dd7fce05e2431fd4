// SNS implementation of the NotificationPublisher port: PublishBatch with at most 10 entries and
// at most 256 KiB per request (SNS quotas), `MessageStructure: json` for per-protocol bodies.
// Entries that fail for a transient reason are retried once; what still fails is returned (never
// thrown) so the caller can undo exactly those claims.
import {
  PublishBatchCommand,
  type PublishBatchRequestEntry,
  type SNSClient,
} from '@aws-sdk/client-sns';
import type { OutgoingMessage } from '../../core/notify/message.js';
import { utf8Length } from '../../core/notify/sanitize.js';
import type { NotificationPublisher, PublishFailure } from '../../core/service-ports.js';
import { classifyAwsError } from './aws-errors.js';

export const snsPublisherActions = ['sns:Publish'] as const;

export type SnsSender = Pick<SNSClient, 'send'>;

export const MAX_BATCH_ENTRIES = 10;
export const MAX_BATCH_BYTES = 256 * 1024;

interface EntryFailure extends PublishFailure {
  readonly retryable: boolean;
}

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
  const batches: PublishBatchRequestEntry[][] = [];
  let current: PublishBatchRequestEntry[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = entryBytes(entry);
    if (
      current.length > 0 &&
      (current.length === MAX_BATCH_ENTRIES || bytes + size > MAX_BATCH_BYTES)
    ) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export function createSnsPublisher(sns: SnsSender, topicArn: string): NotificationPublisher {
  async function send(batch: readonly PublishBatchRequestEntry[]): Promise<EntryFailure[]> {
    try {
      const response = await sns.send(
        new PublishBatchCommand({ TopicArn: topicArn, PublishBatchRequestEntries: [...batch] })
      );
      const succeeded = new Set((response.Successful ?? []).map((entry) => entry.Id));
      const failed = new Map((response.Failed ?? []).map((entry) => [entry.Id, entry]));
      return batch
        .filter((entry) => !succeeded.has(entry.Id))
        .map((entry) => {
          const failure = failed.get(entry.Id);
          return {
            id: entry.Id ?? '',
            code: failure?.Code ?? 'NotAcknowledged',
            message: failure?.Message ?? 'SNS did not report this entry',
            // Sender faults (bad input) will fail again; everything else is worth one retry.
            retryable: failure?.SenderFault !== true,
          };
        });
    } catch (error) {
      const code = (error as { name?: string }).name ?? 'Error';
      const message = error instanceof Error ? error.message : String(error);
      const reason = classifyAwsError(error);
      return batch.map((entry) => ({
        id: entry.Id ?? '',
        code,
        message,
        retryable: reason === 'throttled' || reason === 'unreachable' || reason === 'timeout',
      }));
    }
  }

  return {
    async publish(messages) {
      const entries = messages.map(toBatchEntry);
      const byId = new Map(entries.map((entry) => [entry.Id, entry]));
      const failures: PublishFailure[] = [];
      for (const batch of planBatches(entries)) {
        const firstTry = await send(batch);
        const retry = firstTry.filter((failure) => failure.retryable);
        failures.push(...firstTry.filter((failure) => !failure.retryable));
        if (retry.length > 0) {
          const again = await send(
            retry.map((failure) => byId.get(failure.id)).filter((e) => e !== undefined)
          );
          failures.push(...again);
        }
      }
      return { failed: failures.map(({ id, code, message }) => ({ id, code, message })) };
    },
  };
}
