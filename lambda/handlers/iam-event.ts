// Lambda: IAM change via CloudTrail → rescan only the NodeClasses whose roles it affects. Cold
// start imports only the middleware; the event's parsing, the IAM lookups and the scanner load on
// first use (service.ts).
import type { EventOutcome } from '../app/handle-ami-event.js';
import type { IamEntityReader } from '../core/ports/service.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { eventIdOf, type ServiceOverrides, serviceHandler } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  let iam: IamEntityReader | undefined;
  return serviceHandler<unknown, EventOutcome>('iam-event', overrides, async (service, event) => {
    setCorrelationId(eventIdOf(event));
    const phase = await import('./phases/iam-event.js');
    iam ??= phase.createIamEntities({
      region: service.config.region,
      counter: service.counter,
      limiter: service.limiter,
    });
    return phase.handleIamEvent(
      {
        iam,
        homeRegion: service.config.region,
        store: service.store,
        scan: service.scan,
        metrics: service.metrics,
        logger: appLogger(),
      },
      event
    );
  });
}

export const handler = createHandler();
