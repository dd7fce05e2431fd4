// Lambda: SQS consumer scanning one cluster per message. Partial batch responses: only the
// messages whose scan failed are retried; malformed messages are dropped (never retried forever).
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { ClusterScanRequestSchema } from '../core/service-ports.js';
import { logger, setCorrelationId } from '../shared/logger.js';
import { invoke, lazyService, type ServiceOverrides } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  const service = lazyService('scan-cluster', overrides);
  return (event: SQSEvent, context?: Context): Promise<SQSBatchResponse> =>
    invoke(service, context, undefined, async ({ scan, metrics }) => {
      const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
      for (const record of event.Records ?? []) {
        setCorrelationId(record.messageId);
        let body: unknown;
        try {
          body = JSON.parse(record.body);
        } catch {
          body = undefined;
        }
        const request = ClusterScanRequestSchema.safeParse(body);
        if (!request.success) {
          logger.warn('Scan request ignored', {
            messageId: record.messageId,
            issues: request.error.issues
              .slice(0, 3)
              .map((i) => `${i.path.join('.')}: ${i.message}`),
          });
          metrics.eventIgnored('malformed-scan-request');
          continue;
        }
        const { cluster, region, trigger } = request.data;
        const result = await scan({
          scanId: record.messageId,
          trigger,
          clusters: [{ cluster, ...(region === undefined ? {} : { region }) }],
        });
        if (result.failedClusters.length > 0)
          batchItemFailures.push({ itemIdentifier: record.messageId });
      }
      return { batchItemFailures };
    });
}

export const handler = createHandler();
