// Live implementation of the AwsFactsPort: EC2, SSM, IAM and KMS through injected SDK clients.
import type { AwsFactsPort } from '../../core/ports/aws-facts.js';
import { createEc2Reader, type Ec2Sender } from './ec2-reader.js';
import { AWS_FACT_ACTIONS } from './fact-descriptors.js';
import { createIamReader, type IamSender } from './iam-reader.js';
import { createKmsReader, type KmsSender } from './kms-reader.js';
import { type ApiRateLimiter, rateLimited } from './rate-limit.js';
import { createSsmReader, type SsmSender } from './ssm-reader.js';

/** Every action of every port method, each once, in the table's order. */
export const awsFactsActions = [...new Set(Object.values(AWS_FACT_ACTIONS).flat())];

export interface AwsFactsClients {
  readonly ec2: Ec2Sender;
  readonly ssm: SsmSender;
  readonly iam: IamSender;
  /** Without it, KMS keys are not read (their facts say so). */
  readonly kms?: KmsSender;
}

/** `limiter` spaces calls per operation (the live scanner shares EC2's buckets with Karpenter). */
export function createLiveAwsFacts(
  clients: AwsFactsClients,
  options: { readonly limiter?: ApiRateLimiter } = {}
): AwsFactsPort {
  const { limiter } = options;
  const ec2 = createEc2Reader(limiter ? rateLimited(clients.ec2, 'ec2', limiter) : clients.ec2);
  const ssm = createSsmReader(limiter ? rateLimited(clients.ssm, 'ssm', limiter) : clients.ssm);
  const iam = createIamReader(limiter ? rateLimited(clients.iam, 'iam', limiter) : clients.iam);
  const kms =
    clients.kms === undefined
      ? undefined
      : createKmsReader(limiter ? rateLimited(clients.kms, 'kms', limiter) : clients.kms);
  return {
    describeImages: (query) => ec2.describeImages(query),
    describeSubnets: (query) => ec2.describeSubnets(query),
    describeSecurityGroups: (query) => ec2.describeSecurityGroups(query),
    describeCapacityReservations: (query) => ec2.describeCapacityReservations(query),
    describeInstanceTypeOfferings: () => ec2.describeInstanceTypeOfferings(),
    describeInstanceTypes: () => ec2.describeInstanceTypes(),
    getParameter: (name) => ssm.getParameter(name),
    getParameters: (names) => ssm.getParameters(names),
    getInstanceProfile: (name) => iam.getInstanceProfile(name),
    getRole: (name) => iam.getRole(name),
    getEbsEncryptionDefaults: () => ec2.getEbsEncryptionDefaults(),
    ...(kms === undefined ? {} : { describeKmsKey: (reference) => kms.describeKmsKey(reference) }),
  };
}
