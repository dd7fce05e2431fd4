// Lambda: `EC2 AMI State Change` → rescan only the NodeClasses that can select the image. Cold
// start imports only the middleware; the event's parsing, the EC2 lookup and the scanner load on
// first use (service.ts). Events come from every region the scanner scans (forwarded to this
// region's bus), so the image is looked up with an EC2 client of the event's region.
import type { EventOutcome } from '../app/handle-ami-event.js';
import type { AwsFactsPort } from '../core/ports/aws-facts.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { deferredPort } from './deferred.js';
import { eventIdOf, type ServiceOverrides, serviceHandler } from './service.js';

type ImageLookup = Pick<AwsFactsPort, 'describeImages'>;

export function createHandler(overrides: ServiceOverrides = {}) {
  // One lookup (and EC2 client) per region, kept while warm. Only regions of stored clusters are
  // ever asked (handleAmiEvent), so the map stays as small as the set of scanned regions.
  const lookups = new Map<string, ImageLookup>();
  return serviceHandler<unknown, EventOutcome>('ami-event', overrides, async (service, event) => {
    setCorrelationId(eventIdOf(event));
    const { handleAmiEvent, imageMatchesTerm } = await import('./phases/ami-event.js');
    const imagesIn = (region: string): ImageLookup => {
      let lookup = lookups.get(region);
      if (lookup === undefined) {
        lookup = deferredPort(
          async () =>
            (await import('./phases/ami-images.js')).createImageLookup({
              region,
              counter: service.counter,
              limiter: service.limiter,
            }),
          { describeImages: true }
        );
        lookups.set(region, lookup);
      }
      return lookup;
    };
    return handleAmiEvent(
      {
        imagesIn,
        homeRegion: service.config.region,
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
