// Lambda: IAM change via CloudTrail → rescan only the NodeClasses whose roles it affects.
import { createIamEntityReader } from '../adapters/aws/iam-entities.js';
import type { EventOutcome } from '../app/handle-ami-event.js';
import { handleIamEvent } from '../app/handle-iam-event.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { eventIdOf, type ServiceOverrides, serviceHandler } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  return serviceHandler<unknown, EventOutcome>(
    'iam-event',
    overrides,
    ({ clients, store, scan, metrics }, event) => {
      setCorrelationId(eventIdOf(event));
      return handleIamEvent(
        { iam: createIamEntityReader(clients.iam()), store, scan, metrics, logger: appLogger() },
        event
      );
    }
  );
}

export const handler = createHandler();
