// Lambda: `EC2 AMI State Change` → rescan only the NodeClasses that can select the image.
import type { Context } from 'aws-lambda';
import { createLiveAwsFacts } from '../adapters/aws/aws-facts-adapter.js';
import { type EventOutcome, handleAmiEvent } from '../app/handle-ami-event.js';
import { imageMatchesTerm } from '../core/ami/queries.js';
import { appLogger } from '../shared/logger.js';
import { eventIdOf, invoke, lazyService, type ServiceOverrides } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  const service = lazyService('ami-event', overrides);
  return (event: unknown, context?: Context): Promise<EventOutcome> =>
    invoke(service, context, eventIdOf(event), ({ clients, store, scan, metrics }) =>
      handleAmiEvent(
        {
          images: createLiveAwsFacts({
            ec2: clients.ec2(),
            ssm: clients.ssm(),
            iam: clients.iam(),
          }),
          matches: imageMatchesTerm,
          store,
          scan,
          metrics,
          logger: appLogger(),
        },
        event
      )
    );
}

export const handler = createHandler();
