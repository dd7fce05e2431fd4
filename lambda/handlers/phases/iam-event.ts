// Phase: the IAM event's parsing (zod) and the IAM lookups that map it to roles, loaded on the
// first event, without the scanner's other clients.
import { IAMClient } from '@aws-sdk/client-iam';
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { clientDefaults, instrumentClient } from '../../adapters/aws/client-defaults.js';
import { createIamEntityReader } from '../../adapters/aws/iam-entities.js';
import type { ApiRateLimiter } from '../../adapters/aws/rate-limit.js';
import type { IamEntityReader } from '../../core/ports/service.js';

export { handleIamEvent } from '../../app/handle-iam-event.js';

export function createIamEntities(input: {
  readonly region: string;
  readonly counter: ApiCallCounter;
  readonly limiter: ApiRateLimiter;
}): IamEntityReader {
  const iam = instrumentClient(
    new IAMClient({ region: input.region, ...clientDefaults() }),
    'iam',
    input.counter,
    input.limiter
  );
  return createIamEntityReader(iam);
}
