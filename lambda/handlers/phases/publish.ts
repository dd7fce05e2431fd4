// Phase: notifications (SNS), loaded when a scan has something to publish.
import { SNSClient } from '@aws-sdk/client-sns';
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { clientDefaults, instrumentClient } from '../../adapters/aws/client-defaults.js';
import { createSnsPublisher } from '../../adapters/aws/sns-publisher.js';
import type { NotificationPublisher } from '../../core/ports/service.js';
import type { Config } from '../../shared/config.js';

export function createPublisher(config: Config, counter: ApiCallCounter): NotificationPublisher {
  const sns = instrumentClient(
    new SNSClient({ region: config.region, ...clientDefaults() }),
    'sns',
    counter
  );
  return createSnsPublisher(sns, config.findingsTopicArn);
}
