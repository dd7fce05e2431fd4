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
import { StableHasher } from '../model.js';
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

/** What AWS knows of an existing resource when it evaluates a launch that uses it. */
export interface ExistingResourceFacts {
  readonly tags: Tags;
  /** The owning account, where it may differ from the scanned one (images). */
  readonly ownerId?: string;
  readonly vpcId?: string;
  readonly availabilityZone?: string;
}

/** What the NodeClass resolved to (scanner facts, or Karpenter's status as a fallback). */
export interface LaunchResources {
  readonly imageIds: readonly string[];
  readonly subnetIds: readonly string[];
  readonly securityGroupIds: readonly string[];
  readonly capacityReservationIds: readonly string[];
  /** Placement group name, when the class selects one. */
  readonly placementGroup?: string;
  /** The read facts of resources by id (absent for ids taken from Karpenter's status). */
  readonly known?: ReadonlyMap<string, ExistingResourceFacts>;
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
  /**
   * Condition keys the controller's policies use (lower-cased → as written). AWS-set keys among
   * them whose values the scanner read are supplied; undefined when the policies are unread.
   */
  readonly policyKeys?: ReadonlyMap<string, string>;
}

export interface SimulationPlan {
  readonly requests: readonly SimulationRequest[];
  readonly gaps: readonly SimulationGap[];
}

const LAUNCH_ACTIONS = ['ec2:RunInstances', 'ec2:CreateFleet'] as const;
/**
 * A call Karpenter's controller makes, from the release that first makes it (`since`) until the
 * one that stopped (`until`, exclusive). Each cites where the release calls it.
 */
interface ControllerCall {
  readonly action: string;
  readonly since?: string;
  readonly until?: string;
}

/**
 * Instance-profile calls in role mode (pkg/providers/instanceprofile/instanceprofile.go).
 * TagInstanceProfile backfilled `eks:eks-cluster-name` on v1.0 profiles
 * (https://github.com/aws/karpenter-provider-aws/blob/v1.0.14/pkg/providers/instanceprofile/instanceprofile.go#L85-L94) and is gone from v1.1.0.
 */
const INSTANCE_PROFILE_CALLS: readonly ControllerCall[] = [
  { action: 'iam:GetInstanceProfile' },
  { action: 'iam:CreateInstanceProfile' },
  { action: 'iam:TagInstanceProfile', until: '1.1.0' },
  { action: 'iam:AddRoleToInstanceProfile' },
  { action: 'iam:RemoveRoleFromInstanceProfile' },
  { action: 'iam:DeleteInstanceProfile' },
];

/**
 * ListInstanceProfiles lists a cluster's profiles under their IAM path from v1.7.0
 * (https://github.com/aws/karpenter-provider-aws/blob/v1.7.0/pkg/providers/instanceprofile/instanceprofile.go#L203-L226).
 */
const LIST_INSTANCE_PROFILES: ControllerCall = {
  action: 'iam:ListInstanceProfiles',
  since: '1.7.0',
};

/**
 * Describe calls (`AllowRegionalReadActions`), by the release whose provider first calls each:
 * capacity reservations v1.3.0 (pkg/providers/capacityreservation/provider.go), placement groups
 * v1.11.0 (pkg/providers/placementgroup/provider.go), instance status v1.12.0
 * (pkg/providers/instancestatus/instancestatus.go).
 */
const DESCRIBE_CALLS: readonly ControllerCall[] = [
  { action: 'ec2:DescribeCapacityReservations', since: '1.3.0' },
  { action: 'ec2:DescribeImages' },
  { action: 'ec2:DescribeInstances' },
  { action: 'ec2:DescribeInstanceStatus', since: '1.12.0' },
  { action: 'ec2:DescribeInstanceTypeOfferings' },
  { action: 'ec2:DescribeInstanceTypes' },
  { action: 'ec2:DescribeLaunchTemplates' },
  { action: 'ec2:DescribePlacementGroups', since: '1.11.0' },
  { action: 'ec2:DescribeSecurityGroups' },
  { action: 'ec2:DescribeSpotPriceHistory' },
  { action: 'ec2:DescribeSubnets' },
];

/**
 * Whether the release makes the call. An unknown version is taken as the newest release: it makes
 * every call added so far and none that was dropped.
 */
function callMadeBy(call: ControllerCall, version: KarpenterVersion | undefined): boolean {
  if (version === undefined) return call.until === undefined;
  return (
    (call.since === undefined || isAtLeast(version, call.since)) &&
    (call.until === undefined || !isAtLeast(version, call.until))
  );
}

const actionsMadeBy = (calls: readonly ControllerCall[], version: KarpenterVersion | undefined) =>
  calls.filter((call) => callMadeBy(call, version)).map((call) => call.action);

/**
 * Describe actions the controller calls. Actions added in later releases are required only from
 * those releases, so an older install with its matching policy passes.
 */
export function describeActions(version: KarpenterVersion | undefined): string[] {
  return actionsMadeBy(DESCRIBE_CALLS, version);
}

/** Instance-profile actions the controller calls in role mode. */
function instanceProfileActions(version: KarpenterVersion | undefined): string[] {
  return actionsMadeBy(INSTANCE_PROFILE_CALLS, version);
}

/**
 * Profiles live under `/karpenter/<region>/<cluster>/<uid>/` from v1.7.0
 * (https://github.com/aws/karpenter-provider-aws/blob/v1.7.0/pkg/providers/instanceprofile/instanceprofile.go#L114-L115); before, at the
 * root path.
 */
const PROFILE_PATH_SINCE = '1.7.0';

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

const byKey = (a: ContextEntry, b: ContextEntry) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function sortedContext(entries: readonly ContextEntry[]): ContextEntry[] {
  return [...entries].sort(byKey);
}

/** The entries in key order: themselves when already so (as a stable sort leaves them). */
function inKeyOrder(entries: readonly ContextEntry[]): readonly ContextEntry[] {
  for (let index = 1; index < entries.length; index++)
    if (byKey(entries[index - 1] as ContextEntry, entries[index] as ContextEntry) > 0)
      return sortedContext(entries);
  return entries;
}

function addJsonArray(hasher: StableHasher, values: readonly unknown[]): StableHasher {
  hasher.add('[');
  for (let index = 0; index < values.length; index++) {
    if (index > 0) hasher.add(',');
    hasher.addJson(values[index]);
  }
  return hasher.add(']');
}

/**
 * Same principal, actions, resources and context → same key, whatever the order: the hash of
 * `JSON.stringify([principal, sorted actions, sorted resources, [[key, type, values], …] by key])`,
 * hashed as it would be written (about 70,000 keys in a 5,000-NodeClass scan).
 */
export function simulationKey(
  request: Pick<SimulationRequest, 'principalArn' | 'actions' | 'resourceArns' | 'context'>
): string {
  const hasher = new StableHasher().add('[').addJson(request.principalArn).add(',');
  addJsonArray(hasher, [...request.actions].sort()).add(',');
  addJsonArray(hasher, [...request.resourceArns].sort()).add(',[');
  const context = inKeyOrder(request.context);
  for (let index = 0; index < context.length; index++) {
    const entry = context[index] as ContextEntry;
    hasher
      .add(index > 0 ? ',[' : '[')
      .addJson(entry.key)
      .add(',')
      .addJson(entry.type)
      .add(',');
    addJsonArray(hasher, entry.values).add(']');
  }
  return hasher.add(']]').digest();
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

/** `ec2:Region`, which AWS sets on every EC2 call, when the policies use it. */
function ec2RegionContext(input: NodeClassSimulationInput): ContextEntry[] {
  const written = input.policyKeys?.get('ec2:region');
  return written === undefined
    ? []
    : [{ key: written, type: 'string', values: [input.scope.region] }];
}

const RESOURCE_TAG_KEY = /^[a-z0-9-]+:resourcetag\/(.+)$/;
/** Other keys AWS sets from an existing resource that the scan reads. */
const RESOURCE_KEYS: ReadonlySet<string> = new Set(['ec2:vpc', 'ec2:availabilityzone']);

/**
 * The keys AWS sets from an existing resource that the policies use and whose values were read:
 * its tags (`aws:ResourceTag/…`, `ec2:ResourceTag/…`), `ec2:Vpc` and `ec2:AvailabilityZone`
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonec2.html#amazonec2-policy-keys).
 */
function existingResourceContext(
  input: NodeClassSimulationInput,
  facts: ExistingResourceFacts
): ContextEntry[] {
  const entries: ContextEntry[] = [];
  const tags = new Map(
    Object.entries(facts.tags).map(([key, value]) => [key.toLowerCase(), value])
  );
  for (const [lower, written] of input.policyKeys ?? []) {
    const tagKey = RESOURCE_TAG_KEY.exec(lower)?.[1];
    const value =
      tagKey !== undefined
        ? tags.get(tagKey)
        : lower === 'ec2:vpc' && facts.vpcId !== undefined
          ? ec2Arn(input.scope, `vpc/${facts.vpcId}`)
          : lower === 'ec2:availabilityzone'
            ? facts.availabilityZone
            : undefined;
    if (value !== undefined) entries.push({ key: written, type: 'string', values: [value] });
  }
  return entries;
}

/**
 * Existing resources of a launch, grouped so each simulation carries its resources' own keys
 * (resource keys apply to every ARN of a call). Resources whose facts were read list every key
 * they have; the others (snapshots, placement groups, ids from Karpenter's status) do not.
 */
function existingResourceGroups(
  input: NodeClassSimulationInput,
  resources: LaunchResources
): { readonly arns: string[]; readonly context: ContextEntry[]; readonly known: boolean }[] {
  const arn = (resource: string) => ec2Arn(input.scope, resource);
  const listed: (readonly [string, string | undefined])[] = [
    ...resources.imageIds.map((id) => [arn(`image/${id}`), id] as const),
    [arn('snapshot/*'), undefined],
    ...resources.subnetIds.map((id) => [arn(`subnet/${id}`), id] as const),
    ...resources.securityGroupIds.map((id) => [arn(`security-group/${id}`), id] as const),
    ...resources.capacityReservationIds.map(
      (id) => [arn(`capacity-reservation/${id}`), id] as const
    ),
    ...(resources.placementGroup === undefined
      ? []
      : [[arn(`placement-group/${resources.placementGroup}`), undefined] as const]),
  ];
  // Unread policies: one simulation, and a resource key it lacks stays open. Policies that use
  // no resource key: one simulation too, as nothing a resource has can change their answer.
  const keys = [...(input.policyKeys?.keys() ?? [])];
  if (!keys.some((key) => RESOURCE_TAG_KEY.test(key) || RESOURCE_KEYS.has(key)))
    return [{ arns: listed.map(([resource]) => resource), context: [], known: false }];
  const groups = new Map<string, { arns: string[]; context: ContextEntry[]; known: boolean }>();
  for (const [resource, id] of listed) {
    const read = id === undefined ? undefined : resources.known?.get(id);
    // Another account's image (Amazon's EKS AMIs, shared images): DescribeImages does not show
    // its owner's tags, which AWS's authorization still sees.
    const facts =
      read?.ownerId !== undefined && read.ownerId !== input.scope.accountId ? undefined : read;
    const context = facts === undefined ? [] : existingResourceContext(input, facts);
    const known = facts !== undefined;
    const key = JSON.stringify([known, sortedContext(context)]);
    const group = groups.get(key) ?? { arns: [], context, known };
    group.arns.push(resource);
    groups.set(key, group);
  }
  return [...groups.values()];
}

/** Launch simulations for one NodePool value: one per Karpenter request and per resource-tag set. */
function launchRequests(
  input: NodeClassSimulationInput,
  nodePool: string,
  resources: LaunchResources | undefined
): SimulationRequest[] {
  const { scope, controller } = input;
  const tags = karpenterEc2Tags(scope, input.nodeClassName, nodePool, input.nodeClass.spec.tags);
  const created = [...requestTagContext(tags), regionContext(scope), ...ec2RegionContext(input)];
  const arn = (resource: string) => ec2Arn(scope, resource);
  const launchTemplate = arn('launch-template/*');
  // Each create call carries the request tags; its CreateTags (tag on create) carries them and
  // ec2:CreateAction, which AWS sets only on that CreateTags
  // (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/supported-iam-actions-tagging.html).
  const creates: readonly (readonly [SimulationKind, string, string, readonly string[]])[] = [
    [
      'create-launch-template',
      'ec2:CreateLaunchTemplate',
      'CreateLaunchTemplate',
      [launchTemplate],
    ],
    [
      'create-fleet',
      'ec2:CreateFleet',
      'CreateFleet',
      ['fleet/*', 'instance/*', 'volume/*', 'network-interface/*'].map(arn),
    ],
    [
      'run-instances',
      'ec2:RunInstances',
      'RunInstances',
      ['instance/*', 'volume/*', 'network-interface/*'].map(arn),
    ],
  ];
  const requests = [
    ...creates.flatMap(([kind, action, createAction, arns]) => [
      request(kind, 'launch', controller, [action], arns, created),
      request(kind, 'launch', controller, ['ec2:CreateTags'], arns, [
        ...created,
        createActionContext(createAction),
      ]),
    ]),
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
    for (const group of existingResourceGroups(input, resources)) {
      requests.push(
        request(
          'use-existing-resources',
          'launch',
          controller,
          LAUNCH_ACTIONS,
          group.arns,
          [...created, ...group.context],
          { resourceTagsKnown: group.known }
        )
      );
    }
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
  const version = scope.karpenterVersion;
  if (version !== undefined && !isAtLeast(version, PROFILE_PATH_SINCE))
    return iamArn(scope, `instance-profile/${name}`);
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
    // Creating carries the new profile's tags as request tags (it has none yet); tagging (v1.0)
    // both; the other calls act on Karpenter's existing profile, which carries them as resource tags.
    const actions = instanceProfileActions(scope.karpenterVersion);
    const profile = [instanceProfileArn(input)];
    const region = iamRegionContext(scope);
    const byContext = [
      { calls: ['iam:CreateInstanceProfile'], context: requestTagContext(profileTags) },
      {
        calls: ['iam:TagInstanceProfile'],
        context: [...requestTagContext(profileTags), ...resourceTagContext(profileTags)],
      },
      {
        calls: actions.filter(
          (action) => action !== 'iam:CreateInstanceProfile' && action !== 'iam:TagInstanceProfile'
        ),
        context: resourceTagContext(profileTags),
      },
    ];
    for (const { calls, context } of byContext) {
      const made = calls.filter((call) => actions.includes(call));
      if (made.length === 0) continue;
      requests.push(
        request('manage-instance-profile', 'manage-instance-profile', controller, made, profile, [
          ...context,
          ...region,
        ])
      );
    }
    if (callMadeBy(LIST_INSTANCE_PROFILES, scope.karpenterVersion)) {
      requests.push(
        request(
          'list-instance-profiles',
          'manage-instance-profile',
          controller,
          [LIST_INSTANCE_PROFILES.action],
          ['*'],
          iamRegionContext(scope)
        )
      );
    }
  }

  requests.push(
    request(
      'describe-ec2',
      'discover',
      controller,
      describeActions(scope.karpenterVersion),
      ['*'],
      [regionContext(scope), ...ec2RegionContext(input)]
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

/** EC2 Spot's service-linked role: every Spot launch needs it in the account. */
export const SPOT_SERVICE_LINKED_ROLE = 'AWSServiceRoleForEC2Spot';
const SPOT_SERVICE_NAME = 'spot.amazonaws.com';

/** `arn:<partition>:iam::<account>:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`. */
function spotServiceLinkedRoleArn(scope: ArnScope): string {
  return iamArn(scope, `role/aws-service-role/${SPOT_SERVICE_NAME}/${SPOT_SERVICE_LINKED_ROLE}`);
}

/**
 * The first Spot launch in an account without `AWSServiceRoleForEC2Spot` has EC2 create it with the
 * caller's `iam:CreateServiceLinkedRole` (else `AuthFailure.ServiceLinkedRoleCreationNotPermitted`,
 * aws/karpenter-provider-aws#5436). Simulated only when the role is absent. IAM's call, so IAM's
 * endpoint region.
 */
export function spotServiceLinkedRoleRequest(
  scope: PermissionScope,
  controller: ControllerRoleFound
): SimulationRequest {
  return request(
    'create-spot-service-linked-role',
    'spot-service-linked-role',
    controller,
    ['iam:CreateServiceLinkedRole'],
    [spotServiceLinkedRoleArn(scope)],
    [
      { key: 'iam:AWSServiceName', type: 'string', values: [SPOT_SERVICE_NAME] },
      ...iamRegionContext(scope),
    ]
  );
}
