// Phase of the dispatch function: the SQS queue it fills.
import { SQSClient } from '@aws-sdk/client-sqs';
import { clientDefaults } from '../../adapters/aws/client-defaults.js';
import { createScanQueue } from '../../adapters/aws/queue.js';
import type { ScanQueue } from '../../core/ports/service.js';

export function createQueue(region: string, queueUrl: string): ScanQueue {
  return createScanQueue(new SQSClient({ ...clientDefaults(), region }), queueUrl);
}
