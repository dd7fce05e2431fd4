// Lambda: `EC2 AMI State Change` → rescan only the NodeClasses that can select the image.
import { createLiveAwsFacts } from '../adapters/aws/aws-facts-adapter.js';
import { type EventOutcome, handleAmiEvent } from '../app/handle-ami-event.js';
import { imageMatchesTerm } from '../core/ami/queries.js';
import { appLogger, setCorrelationId } from '../shared/logger.js';
import { eventIdOf, type ServiceOverrides, serviceHandler } from './service.js';

export function createHandler(overrides: ServiceOverrides = {}) {
  return serviceHandler<unknown, EventOutcome>(
    'ami-event',
    overrides,
    ({ clients, store, scan, metrics }, event) => {
      setCorrelationId(eventIdOf(event));
      return handleAmiEvent(
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
      );
    }
  );
}

export const handler = createHandler();
