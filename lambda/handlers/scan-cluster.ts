// Lambda: SQS consumer scanning one cluster per message, through Powertools' batch processor.
// Partial batch responses: only the messages whose scan failed are retried; malformed messages
// are dropped (logged and counted, never retried forever). Cold start imports only the
// middleware; the request schema and the scanner load on first use (service.ts).
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ScannerError } from '../shared/errors.js';
import { logger, setCorrelationId } from '../shared/logger.js';
import { type Service, type ServiceOverrides, serviceHandler } from './service.js';

function parseBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Scans the record's cluster; throws (a batch item failure) when the scan did not complete. */
async function scanRecord({ scan, metrics }: Service, record: SQSRecord): Promise<void> {
  setCorrelationId(record.messageId);
  const { ClusterScanRequestSchema } = await import('../core/ports/service.js');
  const request = ClusterScanRequestSchema.safeParse(parseBody(record.body));
  if (!request.success) {
    logger.warn('Scan request ignored', {
      messageId: record.messageId,
      issues: request.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`),
    });
    metrics.eventIgnored('malformed-scan-request');
    return;
  }
  const { cluster, region, trigger } = request.data;
  const result = await scan({
    scanId: record.messageId,
    trigger,
    clusters: [{ cluster, ...(region === undefined ? {} : { region }) }],
  });
  if (result.failedClusters.length > 0) {
    const reasons = result.outcomes.flatMap((outcome) => outcome.error ?? []);
    throw new ScannerError(
      `scan of ${result.failedClusters.join(', ')} failed${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}`
    );
  }
}

export function createHandler(overrides: ServiceOverrides = {}) {
  return serviceHandler<SQSEvent, SQSBatchResponse>(
    'scan-cluster',
    overrides,
    (service, event, context) =>
      processPartialResponse(
        event,
        (record: SQSRecord) => scanRecord(service, record),
        new BatchProcessor(EventType.SQS),
        {
          context,
          // One at a time: each record's log lines carry its own correlation id, and scans share
          // the EC2/IAM rate limits.
          processInParallel: false,
          // A batch whose every scan failed is still a partial batch response, not an error.
          throwOnFullBatchFailure: false,
        }
      )
  );
}

export const handler = createHandler();
