// Lambda: IAM change via CloudTrail → rescan only the NodeClasses whose roles it affects.
import type { Context } from 'aws-lambda';
import { createIamEntityReader } from '../adapters/aws/iam-entities.js';
import type { EventOutcome } from '../app/handle-ami-event.js';
import { handleIamEvent } from '../app/handle-iam-event.js';
import { appLogger } from '../shared/logger.js';
import { eventIdOf, invoke, lazyService, type ServiceOverrides } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  const service = lazyService('iam-event', overrides);
  return (event: unknown, context?: Context): Promise<EventOutcome> =>
    invoke(service, context, eventIdOf(event), ({ clients, store, scan, metrics }) =>
      handleIamEvent(
        { iam: createIamEntityReader(clients.iam()), store, scan, metrics, logger: appLogger() },
        event
      )
    );
}

export const handler = createHandler();
