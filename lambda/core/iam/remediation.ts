// The minimal IAM statements that would allow what was denied, scoped like Karpenter's reference
// controller policy (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/getting-started/getting-started-with-karpenter/cloudformation.yaml), ready to paste into the controller role's policy.
import type { SimulationKind } from '../facts/permissions.js';
import { arnResource, ec2ServicePrincipal, eksClusterArn } from './arns.js';
import { type Denial, distinct } from './interpret.js';
import type { PermissionScope } from './request-context.js';

export interface PolicyStatement {
  readonly Sid: string;
  readonly Effect: 'Allow';
  readonly Action: string[];
  readonly Resource: string[];
  readonly Condition?: Record<string, Record<string, string | string[]>>;
}

export interface PolicyDocument {
  readonly Version: '2012-10-17';
  readonly Statement: PolicyStatement[];
}

/** `arn:aws:ec2:r:a:subnet/subnet-1` → `subnet`. */
function resourceType(arn: string): string {
  const resource = arnResource(arn);
  return resource.split('/')[0] ?? resource;
}

/** The reference policy scopes EC2 resources by type, in any account of the region. */
function ec2TypeArn(scope: PermissionScope, type: string): string {
  const account = type === 'image' || type === 'snapshot' ? '' : '*';
  return `arn:${scope.partition}:ec2:${scope.region}:${account}:${type}/*`;
}

function clusterTag(scope: PermissionScope): string {
  return `kubernetes.io/cluster/${scope.clusterName}`;
}

function requestTagCondition(scope: PermissionScope): Record<string, Record<string, string>> {
  return {
    StringEquals: {
      [`aws:RequestTag/${clusterTag(scope)}`]: 'owned',
      'aws:RequestTag/eks:eks-cluster-name': scope.clusterName,
    },
    StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
  };
}

const CREATE_ACTION: Partial<Record<SimulationKind, string>> = {
  'create-launch-template': 'CreateLaunchTemplate',
  'create-fleet': 'CreateFleet',
  'run-instances': 'RunInstances',
};

function ec2Statements(
  scope: PermissionScope,
  kind: SimulationKind,
  denials: readonly Denial[]
): PolicyStatement[] {
  const resources = distinct(
    denials.map((denial) => ec2TypeArn(scope, resourceType(denial.resource)))
  );
  const actions = distinct(denials.map((denial) => denial.action));
  const createAction = CREATE_ACTION[kind];
  if (createAction !== undefined) {
    const statements: PolicyStatement[] = [];
    const launchActions = actions.filter((action) => action !== 'ec2:CreateTags');
    if (launchActions.length > 0) {
      statements.push({
        Sid: 'AllowScopedEC2InstanceActionsWithTags',
        Effect: 'Allow',
        Action: launchActions,
        Resource: resources,
        Condition: requestTagCondition(scope),
      });
    }
    if (actions.includes('ec2:CreateTags')) {
      const tagging = requestTagCondition(scope);
      statements.push({
        Sid: 'AllowScopedResourceCreationTagging',
        Effect: 'Allow',
        Action: ['ec2:CreateTags'],
        Resource: distinct(
          denials
            .filter((denial) => denial.action === 'ec2:CreateTags')
            .map((denial) => ec2TypeArn(scope, resourceType(denial.resource)))
        ),
        Condition: {
          StringEquals: { ...tagging.StringEquals, 'ec2:CreateAction': [createAction] },
          StringLike: tagging.StringLike ?? {},
        },
      });
    }
    return statements;
  }
  if (kind === 'use-launch-template') {
    return [
      {
        Sid: 'AllowScopedEC2LaunchTemplateAccessActions',
        Effect: 'Allow',
        Action: actions,
        Resource: resources,
        Condition: {
          StringEquals: { [`aws:ResourceTag/${clusterTag(scope)}`]: 'owned' },
          StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
        },
      },
    ];
  }
  return [
    {
      Sid: 'AllowScopedEC2InstanceAccessActions',
      Effect: 'Allow',
      Action: actions,
      Resource: resources,
    },
  ];
}

function instanceProfileArn(scope: PermissionScope): string {
  return `arn:${scope.partition}:iam::${scope.accountId}:instance-profile/*`;
}

function instanceProfileStatements(
  scope: PermissionScope,
  actions: readonly string[]
): PolicyStatement[] {
  const cluster = `aws:ResourceTag/${clusterTag(scope)}`;
  const region = 'topology.kubernetes.io/region';
  const resource = [instanceProfileArn(scope)];
  const statements: PolicyStatement[] = [];
  if (actions.includes('iam:CreateInstanceProfile')) {
    statements.push({
      Sid: 'AllowScopedInstanceProfileCreationActions',
      Effect: 'Allow',
      Action: ['iam:CreateInstanceProfile'],
      Resource: resource,
      Condition: {
        StringEquals: {
          [`aws:RequestTag/${clusterTag(scope)}`]: 'owned',
          'aws:RequestTag/eks:eks-cluster-name': scope.clusterName,
          [`aws:RequestTag/${region}`]: scope.region,
        },
        StringLike: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    });
  }
  if (actions.includes('iam:TagInstanceProfile')) {
    statements.push({
      Sid: 'AllowScopedInstanceProfileTagActions',
      Effect: 'Allow',
      Action: ['iam:TagInstanceProfile'],
      Resource: resource,
      Condition: {
        StringEquals: {
          [cluster]: 'owned',
          [`aws:ResourceTag/${region}`]: scope.region,
          [`aws:RequestTag/${clusterTag(scope)}`]: 'owned',
          'aws:RequestTag/eks:eks-cluster-name': scope.clusterName,
          [`aws:RequestTag/${region}`]: scope.region,
        },
        StringLike: {
          'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*',
          'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': '*',
        },
      },
    });
  }
  const scoped = actions.filter((action) =>
    [
      'iam:AddRoleToInstanceProfile',
      'iam:RemoveRoleFromInstanceProfile',
      'iam:DeleteInstanceProfile',
    ].includes(action)
  );
  if (scoped.length > 0) {
    statements.push({
      Sid: 'AllowScopedInstanceProfileActions',
      Effect: 'Allow',
      Action: scoped,
      Resource: resource,
      Condition: {
        StringEquals: { [cluster]: 'owned', [`aws:ResourceTag/${region}`]: scope.region },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    });
  }
  if (actions.includes('iam:GetInstanceProfile')) {
    statements.push({
      Sid: 'AllowInstanceProfileReadActions',
      Effect: 'Allow',
      Action: ['iam:GetInstanceProfile'],
      Resource: resource,
    });
  }
  return statements;
}

function ssmResource(scope: PermissionScope, arn: string): string {
  return arn.includes(':parameter/aws/service/')
    ? `arn:${scope.partition}:ssm:${scope.region}::parameter/aws/service/*`
    : arn;
}

function statementsFor(
  scope: PermissionScope,
  kind: SimulationKind,
  denials: readonly Denial[]
): PolicyStatement[] {
  const actions = distinct(denials.map((denial) => denial.action));
  switch (kind) {
    case 'pass-node-role':
      return [
        {
          Sid: 'AllowPassingInstanceRole',
          Effect: 'Allow',
          Action: ['iam:PassRole'],
          Resource: distinct(denials.map((denial) => denial.resource)),
          Condition: {
            StringEquals: {
              'iam:PassedToService': distinct([
                ec2ServicePrincipal(scope.partition),
                'ec2.amazonaws.com',
                'ec2.amazonaws.com.cn',
              ]),
            },
          },
        },
      ];
    case 'manage-instance-profile':
      return instanceProfileStatements(scope, actions);
    case 'list-instance-profiles':
      return [
        {
          Sid: 'AllowUnscopedInstanceProfileListAction',
          Effect: 'Allow',
          Action: actions,
          Resource: ['*'],
        },
      ];
    case 'describe-ec2':
      return [
        {
          Sid: 'AllowRegionalReadActions',
          Effect: 'Allow',
          Action: actions,
          Resource: ['*'],
          Condition: { StringEquals: { 'aws:RequestedRegion': scope.region } },
        },
      ];
    case 'read-ssm-parameters':
      return [
        {
          Sid: 'AllowSSMReadActions',
          Effect: 'Allow',
          Action: ['ssm:GetParameter'],
          Resource: distinct(denials.map((denial) => ssmResource(scope, denial.resource))),
        },
      ];
    case 'describe-cluster':
      return [
        {
          Sid: 'AllowAPIServerEndpointDiscovery',
          Effect: 'Allow',
          Action: ['eks:DescribeCluster'],
          Resource: [eksClusterArn(scope, scope.eksClusterName)],
        },
      ];
    default:
      return ec2Statements(scope, kind, denials);
  }
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** Merges statements that share a Sid (same scoping), so each Sid appears once. */
function merge(statements: readonly PolicyStatement[]): PolicyStatement[] {
  const bySid = new Map<string, PolicyStatement>();
  for (const statement of statements) {
    const existing = bySid.get(statement.Sid);
    bySid.set(
      statement.Sid,
      existing === undefined
        ? statement
        : {
            ...existing,
            Action: distinct([...existing.Action, ...statement.Action]),
            Resource: distinct([...existing.Resource, ...statement.Resource]),
          }
    );
  }
  return [...bySid.values()].map((statement) => ({
    ...statement,
    Action: sorted(statement.Action),
    Resource: sorted(statement.Resource),
  }));
}

/**
 * The policy document that grants what an identity policy failed to allow. Denials by an SCP or by
 * an identity-policy Deny cannot be fixed by adding an Allow, so they are left out; a denial by the
 * permissions boundary is included because the same statement must be allowed by the boundary.
 */
export function remediationPolicy(
  scope: PermissionScope,
  denials: readonly Denial[]
): PolicyDocument | undefined {
  const fixable = denials.filter(
    (denial) => denial.deniedBy === 'no-allow' || denial.deniedBy === 'permissions-boundary'
  );
  if (fixable.length === 0) return undefined;
  const byKind = new Map<SimulationKind, Denial[]>();
  for (const denial of fixable)
    byKind.set(denial.kind, [...(byKind.get(denial.kind) ?? []), denial]);
  const statements = [...byKind].flatMap(([kind, group]) => statementsFor(scope, kind, group));
  return { Version: '2012-10-17', Statement: merge(statements) };
}
