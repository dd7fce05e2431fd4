// AWS stubs for scans of live clusters against a local test API server (see
// test/adapters/kube/tls-fixtures.ts): the EKS answers that point at the server, and the mocks that
// keep the live plan's enrichers off the network.
import { EC2Client } from '@aws-sdk/client-ec2';
import {
  type Cluster,
  EKSClient,
  ListAccessEntriesCommand,
  ListPodIdentityAssociationsCommand,
} from '@aws-sdk/client-eks';
import { IAMClient } from '@aws-sdk/client-iam';
import { KMSClient } from '@aws-sdk/client-kms';
import { SSMClient } from '@aws-sdk/client-ssm';
import {
  GetCallerIdentityCommand,
  type GetCallerIdentityCommandOutput,
  STSClient,
} from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';

/** DescribeCluster's answer: an ACTIVE cluster with API authentication served at `endpoint`. */
export function eksCluster(
  name: string,
  endpoint: string,
  caPem: string,
  more: Partial<Cluster> = {}
): { cluster: Cluster } {
  return {
    cluster: {
      name,
      status: 'ACTIVE',
      endpoint,
      certificateAuthority: { data: Buffer.from(caPem).toString('base64') },
      accessConfig: { authenticationMode: 'API' },
      ...more,
    },
  };
}

/** `eksCluster` with the ARN, Kubernetes version and VPC a provisioned cluster reports. */
export function provisionedEksCluster(
  name: string,
  endpoint: string,
  caPem: string,
  region: string
): { cluster: Cluster } {
  return eksCluster(name, endpoint, caPem, {
    arn: `arn:aws:eks:${region}:123456789012:cluster/${name}`,
    version: '1.33',
    resourcesVpcConfig: { vpcId: 'vpc-1', endpointPublicAccess: true },
  });
}

/** The error EC2, IAM and SSM answer with after `reset()`. */
export const ACCESS_DENIED = Object.assign(new Error('denied in tests'), {
  name: 'AccessDenied',
  $metadata: { httpStatusCode: 403 },
});

/**
 * Mocks of every client a live CLI scan uses. `reset()` (before each test): EC2, IAM, SSM and KMS deny
 * every call (the AWS-facts and permission enrichers run but stay off the network), STS answers
 * the preflight's GetCallerIdentity with `identity`, and EKS lists no access entries or pod
 * identity associations (DescribeCluster is the test's to answer). `restore()` after all.
 */
export function mockLiveAws(
  identity: Partial<GetCallerIdentityCommandOutput> = { Account: '111122223333' }
) {
  const eks = mockClient(EKSClient);
  const ec2 = mockClient(EC2Client);
  const iam = mockClient(IAMClient);
  const ssm = mockClient(SSMClient);
  const kms = mockClient(KMSClient);
  const sts = mockClient(STSClient);
  return {
    eks,
    reset(): void {
      eks.reset();
      ec2.reset().onAnyCommand().rejects(ACCESS_DENIED);
      iam.reset().onAnyCommand().rejects(ACCESS_DENIED);
      ssm.reset().onAnyCommand().rejects(ACCESS_DENIED);
      kms.reset().onAnyCommand().rejects(ACCESS_DENIED);
      sts.reset().on(GetCallerIdentityCommand).resolves(identity);
      eks.on(ListAccessEntriesCommand).resolves({ accessEntries: [] });
      eks.on(ListPodIdentityAssociationsCommand).resolves({ associations: [] });
    },
    restore(): void {
      for (const mock of [eks, ec2, iam, ssm, kms, sts]) mock.restore();
    },
  };
}
