// The SimulatePrincipalPolicy calls that reproduce what Karpenter asks AWS for, per NodeClass
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/controllers/nodeclass/validation.go and
// https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/reference/cloudformation.md).
import type { Tags } from '../facts/aws.js';
import type {
  ContextEntry,
  ControllerRoleFound,
  PermissionGroup,
  SimulationGap,
  SimulationKind,
  SimulationRequest,
} from '../facts/permissions.js';
import type { Slice } from '../facts/slice.js';
import { stableHash } from '../model.js';
import type { EC2NodeClass } from '../schema.js';
import { isAtLeast, type KarpenterVersion } from '../version.js';
import {
  type ArnScope,
  ec2Arn,
  ec2ServicePrincipal,
  eksClusterArn,
  iamArn,
  ssmParameterArn,
} from './arns.js';

export interface PermissionScope extends ArnScope {
  /** Karpenter's `CLUSTER_NAME` setting: the value its tags (and the policy's conditions) use. */
  readonly clusterName: string;
  /** The EKS cluster's name (`eks:DescribeCluster`). */
  readonly eksClusterName: string;
  readonly karpenterVersion?: KarpenterVersion;
}

/** What the NodeClass resolved to (scanner facts, or Karpenter's status as a fallback). */
export interface LaunchResources {
  readonly imageIds: readonly string[];
  readonly subnetIds: readonly string[];
  readonly securityGroupIds: readonly string[];
  readonly capacityReservationIds: readonly string[];
  /** Placement group name, when the class selects one. */
  readonly placementGroup?: string;
}

export interface NodeClassSimulationInput {
  readonly scope: PermissionScope;
  readonly nodeClassName: string;
  readonly nodeClass: EC2NodeClass;
  /**
   * NodePools whose `nodeClassRef` names this class; Karpenter tags launches with each. Unavailable
   * when the cluster's NodePools could not be listed.
   */
  readonly nodePools: Slice<readonly string[]>;
  readonly controller: ControllerRoleFound;
  readonly launch: Slice<LaunchResources>;
  /** ARN of the node role (`spec.role`, or the role inside `spec.instanceProfile`). */
  readonly nodeRole: Slice<string>;
  /** SSM parameters the controller reads: alias paths and custom `ssmParameter` terms. */
  readonly ssmParameterNames: readonly string[];
}

export interface SimulationPlan {
  readonly requests: readonly SimulationRequest[];
  readonly gaps: readonly SimulationGap[];
}

const LAUNCH_TEMPLATE_ACTIONS = ['ec2:CreateLaunchTemplate', 'ec2:CreateTags'] as const;
const CREATE_FLEET_ACTIONS = ['ec2:CreateFleet', 'ec2:CreateTags'] as const;
const RUN_INSTANCES_ACTIONS = ['ec2:RunInstances', 'ec2:CreateTags'] as const;
const LAUNCH_ACTIONS = ['ec2:RunInstances', 'ec2:CreateFleet'] as const;
const INSTANCE_PROFILE_ACTIONS = [
  'iam:GetInstanceProfile',
  'iam:CreateInstanceProfile',
  'iam:TagInstanceProfile',
  'iam:AddRoleToInstanceProfile',
  'iam:RemoveRoleFromInstanceProfile',
  'iam:DeleteInstanceProfile',
] as const;

/** `AllowRegionalReadActions` of Karpenter's reference policy, by the release that added each. */
const DESCRIBE_ACTIONS: readonly (readonly [string, string | undefined])[] = [
  ['ec2:DescribeCapacityReservations', '1.3.0'],
  ['ec2:DescribeImages', undefined],
  ['ec2:DescribeInstances', undefined],
  ['ec2:DescribeInstanceStatus', '1.12.0'],
  ['ec2:DescribeInstanceTypeOfferings', undefined],
  ['ec2:DescribeInstanceTypes', undefined],
  ['ec2:DescribeLaunchTemplates', undefined],
  ['ec2:DescribePlacementGroups', '1.11.0'],
  ['ec2:DescribeSecurityGroups', undefined],
  ['ec2:DescribeSpotPriceHistory', undefined],
  ['ec2:DescribeSubnets', undefined],
];

/**
 * Describe actions the controller calls. Actions added in later releases are required only from
 * those releases, so an older install with its matching policy passes; an unknown version is the
 * worst case (the newest release needs them all).
 */
export function describeActions(version: KarpenterVersion | undefined): string[] {
  return DESCRIBE_ACTIONS.filter(
    ([, since]) => since === undefined || version === undefined || isAtLeast(version, since)
  ).map(([action]) => action);
}

/** The tags that mark a resource as created by this cluster's Karpenter. */
function clusterOwnershipTags(scope: PermissionScope): Record<string, string> {
  return {
    [`kubernetes.io/cluster/${scope.clusterName}`]: 'owned',
    'eks:eks-cluster-name': scope.clusterName,
  };
}

/** Tags Karpenter puts on every EC2 resource it creates for this class (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/v1/labels.go). */
export function karpenterEc2Tags(
  scope: PermissionScope,
  nodeClassName: string,
  nodePool: string,
  specTags: Tags | undefined
): Record<string, string> {
  return {
    ...specTags,
    ...clusterOwnershipTags(scope),
    'karpenter.sh/nodepool': nodePool,
    'karpenter.k8s.aws/ec2nodeclass': nodeClassName,
  };
}

/** Tags Karpenter puts on the instance profiles it creates in role mode (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instanceprofile/instanceprofile.go). */
function karpenterInstanceProfileTags(
  scope: PermissionScope,
  nodeClassName: string,
  specTags: Tags | undefined
): Record<string, string> {
  return {
    ...specTags,
    ...clusterOwnershipTags(scope),
    'karpenter.k8s.aws/ec2nodeclass': nodeClassName,
    'topology.kubernetes.io/region': scope.region,
  };
}

function tagEntries(prefix: string, tags: Tags): ContextEntry[] {
  return Object.entries(tags).map(([key, value]) => ({
    key: `${prefix}${key}`,
    type: 'string' as const,
    values: [value],
  }));
}

/** `aws:RequestTag/<key>` for each tag, and `aws:TagKeys` listing them all. */
function requestTagContext(tags: Tags): ContextEntry[] {
  return [
    ...tagEntries('aws:RequestTag/', tags),
    { key: 'aws:TagKeys', type: 'stringList', values: Object.keys(tags).sort() },
  ];
}

function resourceTagContext(tags: Tags): ContextEntry[] {
  return tagEntries('aws:ResourceTag/', tags);
}

function regionContext(scope: PermissionScope): ContextEntry {
  return { key: 'aws:RequestedRegion', type: 'string', values: [scope.region] };
}

function principalTagContext(controller: ControllerRoleFound): ContextEntry[] {
  return tagEntries('aws:PrincipalTag/', controller.sessionTags);
}

function sortedContext(entries: readonly ContextEntry[]): ContextEntry[] {
  return [...entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Same principal, actions, resources and context → same key, whatever the order. */
export function simulationKey(
  request: Pick<SimulationRequest, 'principalArn' | 'actions' | 'resourceArns' | 'context'>
): string {
  return stableHash(
    JSON.stringify([
      request.principalArn,
      [...request.actions].sort(),
      [...request.resourceArns].sort(),
      sortedContext(request.context).map((entry) => [entry.key, entry.type, entry.values]),
    ])
  );
}

/**
 * Kinds whose context lists every tag their resources have: resources being created have none,
 * and Karpenter's own launch templates and instance profiles carry exactly Karpenter's tags.
 */
const RESOURCE_TAGS_KNOWN: ReadonlySet<SimulationKind> = new Set<SimulationKind>([
  'create-launch-template',
  'create-fleet',
  'run-instances',
  'use-launch-template',
  'manage-instance-profile',
]);

function request(
  kind: SimulationKind,
  group: PermissionGroup,
  controller: ControllerRoleFound,
  actions: readonly string[],
  resourceArns: readonly string[],
  context: readonly ContextEntry[],
  options: { readonly resourceTagsKnown?: boolean } = {}
): SimulationRequest {
  const body = {
    principalArn: controller.roleArn,
    actions: [...actions],
    resourceArns: [...new Set(resourceArns)],
    context: sortedContext([...context, ...principalTagContext(controller)]),
  };
  const resourceTagsKnown = options.resourceTagsKnown ?? RESOURCE_TAGS_KNOWN.has(kind);
  return {
    key: simulationKey(body),
    kind,
    group,
    ...body,
    ...(resourceTagsKnown ? { resourceTagsKnown } : {}),
  };
}

/**
 * The region IAM's own calls are made in: its single endpoint's
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-requestedregion,
 * https://docs.aws.amazon.com/general/latest/gr/iam-service.html). Undefined where it is not
 * published: the key is then missing, and a statement using it leaves the verdict open.
 */
const IAM_ENDPOINT_REGION: Partial<Record<PermissionScope['partition'], string>> = {
  aws: 'us-east-1',
  'aws-cn': 'cn-north-1',
  'aws-us-gov': 'us-gov-west-1',
};

function iamRegionContext(scope: PermissionScope): ContextEntry[] {
  const region = IAM_ENDPOINT_REGION[scope.partition];
  return region === undefined
    ? []
    : [{ key: 'aws:RequestedRegion', type: 'string', values: [region] }];
}

function createActionContext(action: string): ContextEntry {
  return { key: 'ec2:CreateAction', type: 'string', values: [action] };
}

/** Launch simulations for one NodePool value: one per Karpenter request and per resource-tag set. */
function launchRequests(
  input: NodeClassSimulationInput,
  nodePool: string,
  resources: LaunchResources | undefined
): SimulationRequest[] {
  const { scope, controller } = input;
  const tags = karpenterEc2Tags(scope, input.nodeClassName, nodePool, input.nodeClass.spec.tags);
  const created = [...requestTagContext(tags), regionContext(scope)];
  const arn = (resource: string) => ec2Arn(scope, resource);
  const launchTemplate = arn('launch-template/*');
  const requests = [
    request(
      'create-launch-template',
      'launch',
      controller,
      LAUNCH_TEMPLATE_ACTIONS,
      [launchTemplate],
      [...created, createActionContext('CreateLaunchTemplate')]
    ),
    request(
      'create-fleet',
      'launch',
      controller,
      CREATE_FLEET_ACTIONS,
      ['fleet/*', 'instance/*', 'volume/*', 'network-interface/*'].map(arn),
      [...created, createActionContext('CreateFleet')]
    ),
    request(
      'run-instances',
      'launch',
      controller,
      RUN_INSTANCES_ACTIONS,
      ['instance/*', 'volume/*', 'network-interface/*'].map(arn),
      [...created, createActionContext('RunInstances')]
    ),
    // The launch template Karpenter created carries its tags; resource tags apply to every ARN of a
    // call, so the template is simulated apart from the untagged existing resources.
    request(
      'use-launch-template',
      'launch',
      controller,
      LAUNCH_ACTIONS,
      [launchTemplate],
      [...created, ...resourceTagContext(tags)]
    ),
  ];
  if (resources) {
    const existing = [
      ...resources.imageIds.map((id) => arn(`image/${id}`)),
      arn('snapshot/*'),
      ...resources.subnetIds.map((id) => arn(`subnet/${id}`)),
      ...resources.securityGroupIds.map((id) => arn(`security-group/${id}`)),
      ...resources.capacityReservationIds.map((id) => arn(`capacity-reservation/${id}`)),
      ...(resources.placementGroup === undefined
        ? []
        : [arn(`placement-group/${resources.placementGroup}`)]),
    ];
    requests.push(
      request('use-existing-resources', 'launch', controller, LAUNCH_ACTIONS, existing, created)
    );
  }
  return requests;
}

function launchGaps(launch: Slice<LaunchResources>): SimulationGap[] {
  if (launch.status === 'unavailable') {
    return [
      {
        group: 'launch',
        reason: launch.reason,
        message: `The class' image, subnets and security groups are unknown: ${launch.message}`,
      },
    ];
  }
  const missing = [
    launch.value.imageIds.length === 0 ? 'image' : undefined,
    launch.value.subnetIds.length === 0 ? 'subnets' : undefined,
    launch.value.securityGroupIds.length === 0 ? 'security groups' : undefined,
  ].filter((item) => item !== undefined);
  if (missing.length === 0) return [];
  return [
    {
      group: 'launch',
      reason: 'not-found',
      message: `The class resolved no ${missing.join(', ')}; RunInstances/CreateFleet on them cannot be simulated (see the *-resolve checks).`,
    },
  ];
}

/** Karpenter's role-mode profile ARN: `instance-profile/karpenter/<region>/<cluster>/<uid>/<name>`. */
function instanceProfileArn(input: NodeClassSimulationInput): string {
  const { scope, nodeClass } = input;
  const uid = nodeClass.metadata.uid ?? '*';
  const name = nodeClass.status?.instanceProfile ?? `${scope.clusterName}_*`;
  return iamArn(
    scope,
    `instance-profile/karpenter/${scope.region}/${scope.clusterName}/${uid}/${name}`
  );
}

/** Every simulation the controller needs for this NodeClass, and what could not be simulated. */
export function buildSimulations(input: NodeClassSimulationInput): SimulationPlan {
  const { scope, controller, nodeClass } = input;
  const resources = input.launch.status === 'ok' ? input.launch.value : undefined;
  const requests: SimulationRequest[] = [];
  const gaps: SimulationGap[] = [];
  if (input.nodePools.status === 'ok') {
    // No NodePool uses the class: nothing launches with it, but Karpenter still validates it with
    // dry-runs whose `karpenter.sh/nodepool` tag is empty, so that is the request simulated.
    const nodePools =
      input.nodePools.value.length > 0 ? [...new Set(input.nodePools.value)].sort() : [''];
    requests.push(...nodePools.flatMap((nodePool) => launchRequests(input, nodePool, resources)));
  } else {
    // Every launch carries its NodePool's name as a request tag, which policies may condition on:
    // a stand-in value would turn a NodePool-specific denial into a pass.
    gaps.push({
      group: 'launch',
      reason: input.nodePools.reason,
      message: `NodePools could not be read, so the karpenter.sh/nodepool tag of each launch is unknown: ${input.nodePools.message}`,
    });
  }
  gaps.push(...launchGaps(input.launch));

  if (input.nodeRole.status === 'ok') {
    requests.push(
      request(
        'pass-node-role',
        'pass-node-role',
        controller,
        ['iam:PassRole'],
        [input.nodeRole.value],
        [
          {
            key: 'iam:PassedToService',
            type: 'string',
            values: [ec2ServicePrincipal(scope.partition)],
          },
          regionContext(scope),
        ]
      )
    );
  } else {
    gaps.push({
      group: 'pass-node-role',
      reason: input.nodeRole.reason,
      message: `The node role is unknown: ${input.nodeRole.message}`,
    });
  }

  // Role mode only: in instanceProfile mode Karpenter makes no instance-profile call
  // (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/controllers/nodeclass/instanceprofile.go).
  // IAM's own calls go to its single endpoint, whose region they carry as aws:RequestedRegion.
  if (nodeClass.spec.instanceProfile === undefined) {
    const profileTags = karpenterInstanceProfileTags(
      scope,
      input.nodeClassName,
      nodeClass.spec.tags
    );
    requests.push(
      request(
        'manage-instance-profile',
        'manage-instance-profile',
        controller,
        INSTANCE_PROFILE_ACTIONS,
        [instanceProfileArn(input)],
        [
          ...requestTagContext(profileTags),
          ...resourceTagContext(profileTags),
          ...iamRegionContext(scope),
        ]
      ),
      request(
        'list-instance-profiles',
        'manage-instance-profile',
        controller,
        ['iam:ListInstanceProfiles'],
        ['*'],
        iamRegionContext(scope)
      )
    );
  }

  requests.push(
    request(
      'describe-ec2',
      'discover',
      controller,
      describeActions(scope.karpenterVersion),
      ['*'],
      [regionContext(scope)]
    ),
    request(
      'describe-cluster',
      'discover',
      controller,
      ['eks:DescribeCluster'],
      [eksClusterArn(scope, scope.eksClusterName)],
      [regionContext(scope)]
    )
  );
  if (input.ssmParameterNames.length > 0) {
    requests.push(
      request(
        'read-ssm-parameters',
        'discover',
        controller,
        ['ssm:GetParameter'],
        [...new Set(input.ssmParameterNames)].sort().map((name) => ssmParameterArn(scope, name)),
        [regionContext(scope)]
      )
    );
  }
  return { requests, gaps };
}
