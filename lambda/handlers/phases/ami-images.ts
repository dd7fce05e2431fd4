// Phase: the one EC2 lookup an AMI event needs (the image), without the scanner's other clients.
import { EC2Client } from '@aws-sdk/client-ec2';
import type { ApiCallCounter } from '../../adapters/aws/api-call-counter.js';
import { clientDefaults, instrumentClient } from '../../adapters/aws/client-defaults.js';
import { createEc2Reader } from '../../adapters/aws/ec2-reader.js';
import type { ApiRateLimiter } from '../../adapters/aws/rate-limit.js';
import type { AwsFactsPort } from '../../core/ports/aws-facts.js';

export function createImageLookup(input: {
  readonly region: string;
  readonly counter: ApiCallCounter;
  readonly limiter: ApiRateLimiter;
}): Pick<AwsFactsPort, 'describeImages'> {
  const ec2 = instrumentClient(
    new EC2Client({ region: input.region, ...clientDefaults() }),
    'ec2',
    input.counter,
    input.limiter
  );
  const reader = createEc2Reader(ec2);
  return { describeImages: (query) => reader.describeImages(query) };
}
