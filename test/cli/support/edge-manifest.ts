// A NodeClass the live-AWS CLI tests scan (a pinned image id, subnets and security groups by tag),
// the mocked AWS answers that resolve it, and controller policy files for its scans.
import { join } from 'node:path';
import {
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  type EC2Client,
} from '@aws-sdk/client-ec2';
import {
  GetRoleCommand,
  type IAMClient,
  ListAttachedRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import type { NamedPolicy } from '../../../lambda/core/facts/permissions.js';
import { referenceControllerPolicies } from '../../support/karpenter-controller-policy.js';

/** The edge class under another name, with `specLines` (indented as spec fields) added to its spec. */
export function edgeNodeClass(name: string, specLines: readonly string[] = []): string {
  return [
    'apiVersion: karpenter.k8s.aws/v1',
    'kind: EC2NodeClass',
    `metadata: { name: ${name} }`,
    'spec:',
    '  amiFamily: AL2023',
    '  amiSelectorTerms: [{ id: ami-0123456789abcdef0 }]',
    '  role: KarpenterNodeRole-demo',
    '  subnetSelectorTerms: [{ tags: { network: edge } }]',
    '  securityGroupSelectorTerms: [{ tags: { karpenter.sh/discovery: demo } }]',
    ...specLines,
    '',
  ].join('\n');
}

export const EDGE_MANIFEST = edgeNodeClass('edge');

/**
 * What EC2 and IAM answer for the edge class in `account`: its image, one subnet with
 * `availableIps` free addresses, one security group, and its node role with no attached policies.
 */
export function answerEdgeResources(
  ec2: AwsClientStub<EC2Client>,
  iam: AwsClientStub<IAMClient>,
  { account = '111122223333', availableIps = 100 } = {}
): void {
  ec2.on(DescribeImagesCommand).resolves({
    Images: [
      {
        ImageId: 'ami-0123456789abcdef0',
        State: 'available',
        Architecture: 'x86_64',
        CreationDate: '2026-11-01T00:00:00.000Z',
      },
    ],
  });
  ec2.on(DescribeSubnetsCommand).resolves({
    Subnets: [{ SubnetId: 'subnet-1', VpcId: 'vpc-1', AvailableIpAddressCount: availableIps }],
  });
  ec2.on(DescribeSecurityGroupsCommand).resolves({
    SecurityGroups: [{ GroupId: 'sg-1', GroupName: 'nodes', VpcId: 'vpc-1' }],
  });
  iam.on(GetRoleCommand).resolves({
    Role: {
      RoleName: 'KarpenterNodeRole-demo',
      Arn: `arn:aws:iam::${account}:role/KarpenterNodeRole-demo`,
      Path: '/',
      RoleId: 'AROAEXAMPLE',
      CreateDate: new Date('2025-01-01T00:00:00Z'),
    },
  });
  iam.on(ListAttachedRolePoliciesCommand).resolves({ AttachedPolicies: [] });
}

/** Karpenter v1.14.1's reference controller policies for the edge class's cluster, demo in us-east-1. */
export function edgeReferencePolicies(account = '111122223333'): NamedPolicy[] {
  return referenceControllerPolicies('v1.14.1', {
    partition: 'aws',
    region: 'us-east-1',
    accountId: account,
    clusterName: 'demo',
  });
}

/** The policies as files in a directory `tree` makes, and the `--controller-policy` flags naming them. */
export function controllerPolicyFlags(
  tree: (files: Readonly<Record<string, string>>) => string,
  policies: readonly NamedPolicy[]
): string[] {
  const dir = tree(
    Object.fromEntries(policies.map((policy) => [`${policy.name}.json`, policy.document]))
  );
  return policies.flatMap((policy) => ['--controller-policy', join(dir, `${policy.name}.json`)]);
}
