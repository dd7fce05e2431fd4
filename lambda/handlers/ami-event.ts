// Lambda: `EC2 AMI State Change` → rescan only the NodeClasses that can select the image. Cold
// start imports only the middleware; the event's parsing, the EC2 lookup and the scanner load on
// first use (service.ts).
import type { EventOutcome } from '../app/handle-ami-event.js';
import type { AwsFactsPort } from '../core/ports/aws-facts.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { deferredPort } from './deferred.js';
import { eventIdOf, type ServiceOverrides, serviceHandler } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  let images: Pick<AwsFactsPort, 'describeImages'> | undefined;
  return serviceHandler<unknown, EventOutcome>('ami-event', overrides, async (service, event) => {
    setCorrelationId(eventIdOf(event));
    const { handleAmiEvent, imageMatchesTerm } = await import('./phases/ami-event.js');
    images ??= deferredPort(
      async () =>
        (await import('./phases/ami-images.js')).createImageLookup({
          region: service.config.region,
          counter: service.counter,
          limiter: service.limiter,
        }),
      { describeImages: true }
    );
    return handleAmiEvent(
      {
        images,
        matches: imageMatchesTerm,
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
