// Gathers what the simulations of one NodeClass need from the inventory: the scanner's resolved
// AWS facts first, Karpenter's own status (what its validation dry-runs use) as the fallback.
import type { AwsNodeClassFacts } from '../facts/aws.js';
import type { ControllerRoleFound } from '../facts/permissions.js';
import { ok, type Slice, unavailable } from '../facts/slice.js';
import type { ClusterContext, Inventory, NodeClassEntry } from '../inventory.js';
import { clusterOf, factsKeyOf } from '../inventory.js';
import type { EC2NodeClass } from '../schema.js';
import { accountOfArn, roleArnOf } from './arns.js';
import type {
  ExistingResourceFacts,
  LaunchResources,
  NodeClassSimulationInput,
  PermissionScope,
} from './request-context.js';

function ids<T>(
  slice: Slice<T> | undefined,
  pick: (value: T) => readonly string[],
  fallback: readonly string[] | undefined
): Slice<readonly string[]> | undefined {
  if (slice?.status === 'ok') return ok(pick(slice.value));
  if (slice?.status === 'unavailable') return slice;
  return fallback === undefined ? undefined : ok(fallback);
}

/** Each launch resource kind, and the check that reports it when it does not resolve. */
const LAUNCH_RESOURCE_CHECKS = {
  images: 'ami-selector-resolves',
  subnets: 'subnets-resolve',
  'security groups': 'security-groups-resolve',
  'capacity reservations': 'capacity-reservations-resolve',
} as const;

type LaunchResourceKind = keyof typeof LAUNCH_RESOURCE_CHECKS;

/** The ids of each launch resource kind, from the AWS facts or else Karpenter's status. */
function launchSlices(
  facts: AwsNodeClassFacts | undefined,
  nodeClass: EC2NodeClass
): readonly (readonly [LaunchResourceKind, Slice<readonly string[]> | undefined])[] {
  const status = nodeClass.status;
  const images = ids(
    facts?.amis?.status === 'ok' ? facts.amis.value.available : facts?.amis,
    (selection) => selection.selected.map((selected) => selected.image.id),
    status?.amis?.map((ami) => ami.id)
  );
  const subnets = ids(
    facts?.subnets,
    (value) => value.subnets.map((subnet) => subnet.id),
    status?.subnets?.map((subnet) => subnet.id)
  );
  const securityGroups = ids(
    facts?.securityGroups,
    (value) => value.securityGroups.map((group) => group.id),
    status?.securityGroups?.map((group) => group.id)
  );
  const reservations = ids(
    facts?.capacityReservations,
    (value) => value.reservations.map((reservation) => reservation.id),
    status?.capacityReservations
      ?.map((reservation) => reservation.id)
      .filter((id): id is string => typeof id === 'string')
  );
  return [
    ['images', images],
    ['subnets', subnets],
    ['security groups', securityGroups],
    ['capacity reservations', reservations],
  ];
}

/** The read facts of each resolved resource by id (Karpenter's status has ids only). */
function existingResourceFacts(
  facts: AwsNodeClassFacts | undefined
): ReadonlyMap<string, ExistingResourceFacts> {
  const known = new Map<string, ExistingResourceFacts>();
  const add = (id: string, value: ExistingResourceFacts) => known.set(id, value);
  const images = facts?.amis?.status === 'ok' ? facts.amis.value.available : undefined;
  if (images?.status === 'ok')
    for (const selected of images.value.selected)
      add(selected.image.id, {
        tags: selected.image.tags,
        ...(selected.image.ownerId === undefined ? {} : { ownerId: selected.image.ownerId }),
      });
  if (facts?.subnets?.status === 'ok')
    for (const subnet of facts.subnets.value.subnets)
      add(subnet.id, {
        tags: subnet.tags,
        ...(subnet.vpcId === undefined ? {} : { vpcId: subnet.vpcId }),
        ...(subnet.availabilityZone === undefined
          ? {}
          : { availabilityZone: subnet.availabilityZone }),
      });
  if (facts?.securityGroups?.status === 'ok')
    for (const group of facts.securityGroups.value.securityGroups)
      add(group.id, {
        tags: group.tags,
        ...(group.vpcId === undefined ? {} : { vpcId: group.vpcId }),
      });
  if (facts?.capacityReservations?.status === 'ok')
    for (const reservation of facts.capacityReservations.value.reservations)
      add(reservation.id, {
        tags: reservation.tags,
        ...(reservation.availabilityZone === undefined
          ? {}
          : { availabilityZone: reservation.availabilityZone }),
      });
  return known;
}

/** Image, subnets, security groups and capacity reservations the class resolves to. */
export function launchResourcesOf(
  facts: AwsNodeClassFacts | undefined,
  nodeClass: EC2NodeClass
): Slice<LaunchResources> {
  const slices = launchSlices(facts, nodeClass);
  for (const [what, slice] of slices) {
    if (slice?.status === 'unavailable') {
      return unavailable(slice.reason, `resolving ${what} failed: ${slice.message}`);
    }
  }
  const [images, subnets, securityGroups, reservations] = slices.map(([, slice]) => slice);
  if (images === undefined && subnets === undefined && securityGroups === undefined) {
    return unavailable(
      'unknown',
      'no AWS facts were collected for this NodeClass and it has no status to fall back on'
    );
  }
  const value = (slice: Slice<readonly string[]> | undefined) =>
    slice?.status === 'ok' ? slice.value : [];
  const placementGroup = nodeClass.spec.placementGroupSelector;
  const placementName = placementGroup?.name ?? placementGroup?.id;
  return ok({
    imageIds: value(images),
    subnetIds: value(subnets),
    securityGroupIds: value(securityGroups),
    capacityReservationIds: value(reservations),
    ...(placementName === undefined ? {} : { placementGroup: placementName }),
    known: existingResourceFacts(facts),
  });
}

/**
 * For a class whose resources nothing resolved (no AWS facts, no status): every resource of each
 * type the launch uses, as wildcard ARNs (`image/*`, `subnet/*`, `security-group/*`, and
 * `capacity-reservation/*` when the class selects reservations). A policy that allows only some
 * of them denies these requests, as it would deny a resource it does not name.
 */
export function wildcardLaunchResources(nodeClass: EC2NodeClass): LaunchResources {
  const placementGroup = nodeClass.spec.placementGroupSelector;
  const placementName = placementGroup?.name ?? placementGroup?.id;
  return {
    imageIds: ['*'],
    subnetIds: ['*'],
    securityGroupIds: ['*'],
    capacityReservationIds:
      (nodeClass.spec.capacityReservationSelectorTerms ?? []).length > 0 ? ['*'] : [],
    ...(placementName === undefined ? {} : { placementGroup: placementName }),
    known: new Map(),
  };
}

/**
 * The check whose finding explains why the class' launch resources are unknown (a read failed) or
 * empty (a selector matched nothing): the first such kind, in `launchResourcesOf`'s order.
 * Undefined when they resolved, or when nothing was collected at all (no check explains that).
 */
export function launchRootCheck(
  facts: AwsNodeClassFacts | undefined,
  nodeClass: EC2NodeClass
): string | undefined {
  const slices = launchSlices(facts, nodeClass);
  const failed = slices.find(([, slice]) => slice?.status === 'unavailable');
  if (failed) return LAUNCH_RESOURCE_CHECKS[failed[0]];
  const required = slices.slice(0, 3);
  if (required.every(([, slice]) => slice === undefined)) return undefined;
  const empty = required.find(([, slice]) => slice?.status !== 'ok' || slice.value.length === 0);
  return empty ? LAUNCH_RESOURCE_CHECKS[empty[0]] : undefined;
}

/**
 * The check whose finding explains why the node role is unknown (`nodeRoleArnOf` unavailable): its
 * read failed (node-role-valid errors), or the instance profile is missing or empty.
 */
export function nodeRoleRootCheck(facts: AwsNodeClassFacts | undefined): string | undefined {
  const nodeRole = facts?.nodeRole;
  if (nodeRole?.status === 'unavailable') return 'node-role-valid';
  if (
    nodeRole?.status === 'ok' &&
    nodeRole.value.role === undefined &&
    nodeRole.value.name === undefined
  ) {
    return 'instance-profile-exists';
  }
  return undefined;
}

/** ARN of the role EC2 instances get: `spec.role`, or the role inside `spec.instanceProfile`. */
function nodeRoleArnOf(
  scope: PermissionScope,
  facts: AwsNodeClassFacts | undefined,
  nodeClass: EC2NodeClass
): Slice<string> {
  const nodeRole = facts?.nodeRole;
  if (nodeRole?.status === 'unavailable') return nodeRole;
  if (nodeRole?.status === 'ok') {
    if (nodeRole.value.role !== undefined) return ok(nodeRole.value.role.arn);
    if (nodeRole.value.name !== undefined) return ok(roleArnOf(scope, nodeRole.value.name));
    return unavailable(
      'not-found',
      `instance profile "${nodeClass.spec.instanceProfile ?? ''}" does not exist or holds no role (see instance-profile-exists)`
    );
  }
  if (nodeClass.spec.role !== undefined) return ok(roleArnOf(scope, nodeClass.spec.role));
  return unavailable(
    'unknown',
    `the role inside instance profile "${nodeClass.spec.instanceProfile ?? ''}" was not read`
  );
}

/** Public SSM prefixes of each alias family, used when the exact parameters were not resolved. */
const ALIAS_PARAMETER_PREFIX: Readonly<Record<string, string>> = {
  al2: '/aws/service/eks/optimized-ami/*',
  al2023: '/aws/service/eks/optimized-ami/*',
  bottlerocket: '/aws/service/bottlerocket/*',
  windows2019: '/aws/service/ami-windows-latest/*',
  windows2022: '/aws/service/ami-windows-latest/*',
  windows2025: '/aws/service/ami-windows-latest/*',
};

/** SSM parameters the controller reads for this class: alias paths and custom parameter terms. */
function ssmParameterNamesOf(
  facts: AwsNodeClassFacts | undefined,
  nodeClass: EC2NodeClass
): string[] {
  if (facts?.amis?.status === 'ok') {
    return [
      ...(facts.amis.value.alias?.parameters.map((parameter) => parameter.name) ?? []),
      ...facts.amis.value.ssmParameters.map((parameter) => parameter.name),
    ];
  }
  return nodeClass.spec.amiSelectorTerms.flatMap((term) => {
    if (term.ssmParameter !== undefined) return [term.ssmParameter];
    if (term.alias === undefined) return [];
    const family = term.alias.split('@')[0]?.toLowerCase() ?? '';
    const prefix = ALIAS_PARAMETER_PREFIX[family];
    return prefix === undefined ? [] : [prefix];
  });
}

/**
 * Names of the NodePools in the class' cluster whose `nodeClassRef` points at it; unavailable when
 * the cluster's NodePools could not be listed (then which NodePools launch with it is unknown).
 */
function nodePoolsOf(inventory: Inventory, entry: NodeClassEntry): Slice<string[]> {
  const read = clusterOf(inventory, entry.cluster)?.state?.nodePools;
  if (read?.status === 'unavailable') {
    return unavailable(
      read.reason,
      `the NodePools of cluster "${entry.cluster}" could not be read (${read.reason}): ${read.message}`
    );
  }
  let index = poolNamesByClass.get(inventory.nodePools);
  if (index === undefined) {
    index = new Map();
    for (const pool of inventory.nodePools) {
      if (!pool.parsed.ok) continue;
      const ref = pool.parsed.value.spec.template?.spec?.nodeClassRef;
      if (ref === undefined || (ref.kind ?? 'EC2NodeClass') !== 'EC2NodeClass') continue;
      const key = `${pool.cluster}\u0000${ref.name}`;
      const names = index.get(key);
      if (names === undefined) index.set(key, [pool.name]);
      else names.push(pool.name);
    }
    poolNamesByClass.set(inventory.nodePools, index);
  }
  return ok([...(index.get(`${entry.cluster}\u0000${entry.name}`) ?? [])]);
}

/** NodePool names by cluster and the EC2NodeClass they reference, indexed once per inventory. */
const poolNamesByClass = new WeakMap<Inventory['nodePools'], Map<string, string[]>>();

/** Account, region and Karpenter's cluster name for the simulations of one cluster. */
export function permissionScopeOf(
  cluster: ClusterContext,
  controller: ControllerRoleFound
): Slice<PermissionScope> {
  if (cluster.region === undefined) {
    return unavailable('unknown', `the region of cluster "${cluster.name}" is unknown`);
  }
  const clusterFacts = cluster.aws?.status === 'ok' ? cluster.aws.value : undefined;
  const accountId =
    clusterFacts?.accountId ??
    (clusterFacts?.arn === undefined ? undefined : accountOfArn(clusterFacts.arn)) ??
    accountOfArn(controller.roleArn);
  if (accountId === undefined) {
    return unavailable('unknown', `the account of cluster "${cluster.name}" is unknown`);
  }
  const controllerState = cluster.state?.controller;
  const clusterNameEnv =
    controllerState?.status === 'ok' ? controllerState.value?.clusterNameEnv : undefined;
  return ok({
    partition: cluster.partition,
    region: cluster.region,
    accountId,
    clusterName: clusterNameEnv ?? cluster.name,
    eksClusterName: cluster.name,
    ...(cluster.karpenterVersion === undefined
      ? {}
      : { karpenterVersion: cluster.karpenterVersion }),
  });
}

/** Everything `buildSimulations` needs for one parsed NodeClass. */
export function simulationInputOf(
  inventory: Inventory,
  entry: NodeClassEntry,
  nodeClass: EC2NodeClass,
  scope: PermissionScope,
  controller: ControllerRoleFound
): NodeClassSimulationInput {
  const facts = inventory.awsFacts.get(factsKeyOf(entry));
  return {
    scope,
    nodeClassName: entry.name,
    nodeClass,
    nodePools: nodePoolsOf(inventory, entry),
    controller,
    launch: launchResourcesOf(facts, nodeClass),
    nodeRole: nodeRoleArnOf(scope, facts, nodeClass),
    ssmParameterNames: ssmParameterNamesOf(facts, nodeClass),
  };
}
