// SQS implementation of the ScanQueue port: SendMessageBatch with at most 10 entries per request.
// Failed entries that are not the sender's fault are retried once; the rest are returned
// (batch-send.ts). A request that throws as a whole is not retried.
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ClusterScanRequest, ScanQueue } from '../../core/ports/service.js';
import { type BatchSender, sendBatches } from './batch-send.js';

export const scanQueueActions = ['sqs:SendMessage'] as const;

export type SqsSender = Pick<SQSClient, 'send'>;

const MAX_BATCH_ENTRIES = 10;

export function createScanQueue(sqs: SqsSender, queueUrl: string): ScanQueue {
  const sender: BatchSender<SendMessageBatchRequestEntry> = {
    service: 'SQS',
    send: (entries) =>
      sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries })),
    isRetryableError: () => false,
  };

  return {
    async enqueue(requests: readonly ClusterScanRequest[]) {
      const entries: SendMessageBatchRequestEntry[] = requests.map((request, index) => ({
        // Batch ids only need to be unique within a request; the index keeps them valid.
        Id: `m${index}`,
        MessageBody: JSON.stringify(request),
      }));
      const batches: SendMessageBatchRequestEntry[][] = [];
      for (let start = 0; start < entries.length; start += MAX_BATCH_ENTRIES) {
        batches.push(entries.slice(start, start + MAX_BATCH_ENTRIES));
      }
      const failures = await sendBatches(sender, batches);
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
