// Lambda: on schedule, enqueue one scan request per configured cluster.
import type { Context, ScheduledEvent } from 'aws-lambda';
import { dispatchScans } from '../app/dispatch.js';
import { appLogger } from '../shared/logger.js';
import { invoke, lazyService, type ServiceOverrides } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  const service = lazyService('dispatch', overrides);
  return (event: Partial<ScheduledEvent>, context?: Context) =>
    invoke(service, context, event.id, async ({ queue, clock, config }) => {
      const requests = await dispatchScans(
        { queue, logger: appLogger(), clock },
        config.clusters.map(({ name, region }) =>
          region === config.region ? { name } : { name, region }
        ),
        'schedule'
      );
      return { enqueued: requests.length };
    });
}

export const handler = createHandler();
