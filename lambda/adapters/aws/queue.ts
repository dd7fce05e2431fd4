// SQS implementation of the ScanQueue port: SendMessageBatch with at most 10 entries per request.
// Failed entries that are not the sender's fault are retried once; the rest are returned.
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ClusterScanRequest, PublishFailure, ScanQueue } from '../../core/service-ports.js';

export const scanQueueActions = ['sqs:SendMessage'] as const;

export type SqsSender = Pick<SQSClient, 'send'>;

const MAX_BATCH_ENTRIES = 10;

interface EntryFailure extends PublishFailure {
  readonly retryable: boolean;
}

export function createScanQueue(sqs: SqsSender, queueUrl: string): ScanQueue {
  async function send(entries: readonly SendMessageBatchRequestEntry[]): Promise<EntryFailure[]> {
    try {
      const response = await sqs.send(
        new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [...entries] })
      );
      const succeeded = new Set((response.Successful ?? []).map((entry) => entry.Id));
      const failed = new Map((response.Failed ?? []).map((entry) => [entry.Id, entry]));
      return entries
        .filter((entry) => !succeeded.has(entry.Id))
        .map((entry) => {
          const failure = failed.get(entry.Id);
          return {
            id: entry.Id ?? '',
            code: failure?.Code ?? 'NotAcknowledged',
            message: failure?.Message ?? 'SQS did not report this entry',
            retryable: failure?.SenderFault !== true,
          };
        });
    } catch (error) {
      return entries.map((entry) => ({
        id: entry.Id ?? '',
        code: (error as { name?: string }).name ?? 'Error',
        message: error instanceof Error ? error.message : String(error),
        retryable: false,
      }));
    }
  }

  return {
    async enqueue(requests: readonly ClusterScanRequest[]) {
      const entries: SendMessageBatchRequestEntry[] = requests.map((request, index) => ({
        // Batch ids only need to be unique within a request; the index keeps them valid.
        Id: `m${index}`,
        MessageBody: JSON.stringify(request),
      }));
      const byId = new Map(entries.map((entry) => [entry.Id, entry]));
      const failures: PublishFailure[] = [];
      for (let start = 0; start < entries.length; start += MAX_BATCH_ENTRIES) {
        const first = await send(entries.slice(start, start + MAX_BATCH_ENTRIES));
        failures.push(...first.filter((failure) => !failure.retryable));
        const retry = first.filter((failure) => failure.retryable);
        if (retry.length > 0) {
          failures.push(
            ...(await send(retry.map((f) => byId.get(f.id)).filter((e) => e !== undefined)))
          );
        }
      }
      return {
        failed: failures.map(({ id, code, message }) => ({
          id: requests[Number(id.slice(1))]?.cluster ?? id,
          code,
          message,
        })),
      };
    },
  };
}
