import { describe, expect, it } from 'vitest';
import type { Denial } from '../../../lambda/core/iam/interpret.js';
import { remediationPolicy } from '../../../lambda/core/iam/remediation.js';
import type { PermissionScope } from '../../../lambda/core/iam/request-context.js';
import { NODE_ROLE } from '../../support/permission-builders.js';

const SCOPE: PermissionScope = {
  partition: 'aws',
  region: 'us-east-1',
  accountId: '111122223333',
  clusterName: 'demo',
  eksClusterName: 'demo',
};

function denial(overrides: Partial<Denial>): Denial {
  return {
    kind: 'pass-node-role',
    action: 'iam:PassRole',
    resource: NODE_ROLE,
    decision: 'implicitDeny',
    deniedBy: 'no-allow',
    matchedStatements: [],
    missingContextValues: [],
    ...overrides,
  };
}

describe('remediationPolicy', () => {
  it('grants PassRole on exactly the node role, to EC2 only', () => {
    expect(remediationPolicy(SCOPE, [denial({})])).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'AllowPassingInstanceRole',
          Effect: 'Allow',
          Action: ['iam:PassRole'],
          Resource: [NODE_ROLE],
          Condition: {
            StringEquals: { 'iam:PassedToService': ['ec2.amazonaws.com', 'ec2.amazonaws.com.cn'] },
          },
        },
      ],
    });
  });

  it('scopes create calls by request tags and CreateTags by ec2:CreateAction', () => {
    const policy = remediationPolicy(SCOPE, [
      denial({
        kind: 'create-fleet',
        action: 'ec2:CreateFleet',
        resource: 'arn:aws:ec2:us-east-1:111122223333:fleet/*',
      }),
      denial({
        kind: 'create-fleet',
        action: 'ec2:CreateTags',
        resource: 'arn:aws:ec2:us-east-1:111122223333:instance/*',
      }),
    ]);

    expect(policy?.Statement).toEqual([
      {
        Sid: 'AllowScopedEC2InstanceActionsWithTags',
        Effect: 'Allow',
        Action: ['ec2:CreateFleet'],
        Resource: ['arn:aws:ec2:us-east-1:*:fleet/*', 'arn:aws:ec2:us-east-1:*:instance/*'],
        Condition: {
          StringEquals: {
            'aws:RequestTag/kubernetes.io/cluster/demo': 'owned',
            'aws:RequestTag/eks:eks-cluster-name': 'demo',
          },
          StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
        },
      },
      {
        Sid: 'AllowScopedResourceCreationTagging',
        Effect: 'Allow',
        Action: ['ec2:CreateTags'],
        Resource: ['arn:aws:ec2:us-east-1:*:instance/*'],
        Condition: {
          StringEquals: {
            'aws:RequestTag/kubernetes.io/cluster/demo': 'owned',
            'aws:RequestTag/eks:eks-cluster-name': 'demo',
            'ec2:CreateAction': ['CreateFleet'],
          },
          StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
        },
      },
    ]);
  });

  it('scopes existing resources by type and merges statements sharing a Sid', () => {
    const policy = remediationPolicy(SCOPE, [
      denial({
        kind: 'use-existing-resources',
        action: 'ec2:RunInstances',
        resource: 'arn:aws:ec2:us-east-1::image/ami-1',
      }),
      denial({
        kind: 'use-existing-resources',
        action: 'ec2:CreateFleet',
        resource: 'arn:aws:ec2:us-east-1:111122223333:subnet/subnet-1',
      }),
    ]);

    expect(policy?.Statement).toEqual([
      {
        Sid: 'AllowScopedEC2InstanceAccessActions',
        Effect: 'Allow',
        Action: ['ec2:CreateFleet', 'ec2:RunInstances'],
        Resource: ['arn:aws:ec2:us-east-1:*:subnet/*', 'arn:aws:ec2:us-east-1::image/*'],
      },
    ]);
  });

  it('widens public SSM parameters to /aws/service/* and keeps custom ones exact', () => {
    const policy = remediationPolicy(SCOPE, [
      denial({
        kind: 'read-ssm-parameters',
        action: 'ssm:GetParameter',
        resource: 'arn:aws:ssm:us-east-1::parameter/aws/service/eks/x',
      }),
      denial({
        kind: 'read-ssm-parameters',
        action: 'ssm:GetParameter',
        resource: 'arn:aws:ssm:us-east-1:111122223333:parameter/team/ami',
      }),
    ]);

    expect(policy?.Statement[0]?.Resource).toEqual([
      'arn:aws:ssm:us-east-1:111122223333:parameter/team/ami',
      'arn:aws:ssm:us-east-1::parameter/aws/service/*',
    ]);
  });

  it('offers no Allow statement for SCP or identity-policy denials', () => {
    expect(
      remediationPolicy(SCOPE, [
        denial({ deniedBy: 'scp' }),
        denial({ deniedBy: 'identity-policy' }),
      ])
    ).toBeUndefined();
  });

  it('covers instance-profile, list, describe and cluster statements', () => {
    const policy = remediationPolicy(SCOPE, [
      denial({
        kind: 'manage-instance-profile',
        action: 'iam:CreateInstanceProfile',
        resource: 'x',
      }),
      denial({ kind: 'manage-instance-profile', action: 'iam:TagInstanceProfile', resource: 'x' }),
      denial({
        kind: 'manage-instance-profile',
        action: 'iam:AddRoleToInstanceProfile',
        resource: 'x',
      }),
      denial({ kind: 'manage-instance-profile', action: 'iam:GetInstanceProfile', resource: 'x' }),
      denial({ kind: 'list-instance-profiles', action: 'iam:ListInstanceProfiles', resource: '*' }),
      denial({ kind: 'describe-ec2', action: 'ec2:DescribeImages', resource: '*' }),
      denial({ kind: 'describe-cluster', action: 'eks:DescribeCluster', resource: 'x' }),
      denial({
        kind: 'use-launch-template',
        action: 'ec2:RunInstances',
        resource: 'arn:aws:ec2:us-east-1:1:launch-template/*',
      }),
    ]);

    expect(policy?.Statement.map((statement) => statement.Sid)).toEqual([
      'AllowScopedInstanceProfileCreationActions',
      'AllowScopedInstanceProfileTagActions',
      'AllowScopedInstanceProfileActions',
      'AllowInstanceProfileReadActions',
      'AllowUnscopedInstanceProfileListAction',
      'AllowRegionalReadActions',
      'AllowAPIServerEndpointDiscovery',
      'AllowScopedEC2LaunchTemplateAccessActions',
    ]);
    expect(policy?.Statement[5]?.Condition).toEqual({
      StringEquals: { 'aws:RequestedRegion': 'us-east-1' },
    });
    expect(policy?.Statement[6]?.Resource).toEqual([
      'arn:aws:eks:us-east-1:111122223333:cluster/demo',
    ]);
  });
});
