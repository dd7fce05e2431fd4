// The fewest AWS calls a fleet needs, computed from the fleet description alone (the world
// buildFleetWorld writes) with its own normalisation: no scanner function is imported (a test keeps
// this file free of lambda/ imports), so "calls / lower bound" measures the scanner, not itself.
//
// What must be learned, and the fewest requests that can learn it:
// - the AMI selectors' images: the image ids (a NodeClass's id terms, and the images behind its
//   alias and ssmParameter terms, one per Kubernetes version and parameter) ORed in one image-id
//   filter, and name terms without tags ORed in one name filter per owner set, 200 values a call
//   like any EC2 filter; a term with tags is a query of its own; the state filter is answered
//   locally, so it never costs a second query;
// - subnets and security groups: terms of one literal filter (an id, a name, or one tag) need one
//   Describe* per 200 distinct values of that filter (EC2 ORs a filter's values and refuses more
//   than 200 in a call); any other term one call;
// - each distinct capacity-reservation selector term: one DescribeCapacityReservations;
// - the region's instance types and their zone offerings, once each, when a NodePool launches
//   through a NodeClass: DescribeInstanceTypes 100 a page (HVM x86_64/arm64 types only, as
//   Karpenter asks), DescribeInstanceTypeOfferings 1,000 rows a page;
// - the SSM parameters behind every alias and ssmParameter term: GetParameters, 10 names a call;
// - the region's EBS encryption settings (GetEbsEncryptionByDefault, GetEbsDefaultKmsKeyId), once,
//   when a volume may use the account's default key (any volume without kmsKeyID), and each
//   distinct KMS key a volume names or the default is (DescribeKey per reference; GetKeyPolicy and
//   ListGrants per customer managed key), AWS managed alias/aws/ebs excepted;
// - each distinct node role (GetRole + ListAttachedRolePolicies when it exists) and instance
//   profile (GetInstanceProfile);
// - per Karpenter controller role: its policies (GetRole for the boundary, ListRolePolicies,
//   ListAttachedRolePolicies, then one read per inline and two per managed policy), and the
//   SimulatePrincipalPolicy floor of bench/simulation-floor.ts: per distinct context as the
//   policies see it, its (action, resource) pairs at 100 a call.
import { aliasParameters } from './fleet.js';
import { simulationFloor } from './simulation-floor.js';

/** GetParameters accepts at most 10 names. */
const PARAMETERS_PER_CALL = 10;
/** EC2 refuses more than 200 filter values in one call (FilterLimitExceeded). */
const FILTER_VALUES_PER_CALL = 200;

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return value !== null && typeof value === 'object' ? (value as Json) : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Tags as a canonical string: keys sorted, each key=value. */
function tagKey(tags: unknown): string {
  return Object.entries(record(tags))
    .map(([key, value]) => `${key}=${String(value)}`)
    .sort()
    .join('&');
}

/** The role name of a role ARN or bare name. */
function roleName(value: string): string {
  return value.slice(value.lastIndexOf('/') + 1);
}

/** One selector term (subnet, security group, capacity reservation), order-insensitive. */
function selectorTermKey(term: Json): string {
  return JSON.stringify([
    text(term.id) ?? '',
    text(term.name) ?? '',
    text(term.ownerID) ?? '',
    text(term.instanceMatchCriteria) ?? '',
    tagKey(term.tags),
  ]);
}

const hasWildcard = (value: string) => /[*?\\]/.test(value);

type FilterNeed = { readonly filter: string; readonly value: string } | { readonly query: string };

/**
 * What one NodeClass' subnet or security-group terms ask EC2: literal values of one filter
 * (shared with every other NodeClass' values of that filter), or queries of their own. Its ids
 * (and names) go in one filter, as Karpenter sends them; `idFilter` names the id filter.
 */
function filterNeeds(terms: readonly Json[], idFilter: string): FilterNeed[] {
  const needs: FilterNeed[] = [];
  for (const [filter, values] of [
    [idFilter, terms.flatMap((term) => text(term.id) ?? [])],
    [
      'group-name',
      terms.flatMap((term) => (text(term.id) === undefined ? (text(term.name) ?? []) : [])),
    ],
  ] as const) {
    if (values.length === 0) continue;
    if (values.some(hasWildcard))
      needs.push({ query: `${filter} ${[...values].sort().join(',')}` });
    else for (const value of values) needs.push({ filter, value });
  }
  for (const term of terms) {
    if (text(term.id) !== undefined || text(term.name) !== undefined) continue;
    const tags = Object.entries(record(term.tags));
    const [only] = tags;
    if (tags.length === 1 && only !== undefined) {
      const [key, value] = [only[0], String(only[1])];
      if (value === '*' && !hasWildcard(key)) {
        needs.push({ filter: 'tag-key', value: key });
        continue;
      }
      if (value !== '*' && !hasWildcard(value)) {
        needs.push({ filter: `tag:${key}`, value });
        continue;
      }
    }
    needs.push({ query: selectorTermKey(term) });
  }
  return needs;
}

/** Calls for a set of filter needs: one per 200 values of each filter, one per other query. */
function filterCalls(needs: Iterable<FilterNeed>): number {
  const values = new Map<string, Set<string>>();
  const queries = new Set<string>();
  for (const need of needs) {
    if ('query' in need) queries.add(need.query);
    else values.set(need.filter, (values.get(need.filter) ?? new Set()).add(need.value));
  }
  let calls = queries.size;
  for (const set of values.values()) calls += Math.ceil(set.size / FILTER_VALUES_PER_CALL);
  return calls;
}

/** The AMI query keys of one NodeClass, and the SSM parameter names it needs. */
function amiNeeds(
  terms: readonly Json[],
  kubernetesVersion: string,
  region: string
): { readonly queries: FilterNeed[]; readonly parameters: string[] } {
  const alias = terms.map((term) => text(term.alias)).find((value) => value !== undefined);
  if (alias !== undefined) {
    const parameters = Object.keys(aliasParameters(alias.toLowerCase(), () => ''));
    return {
      // Each parameter names an image of that Kubernetes version: at least one id apiece.
      queries: parameters.map((name) => ({
        filter: `${region} image-id`,
        value: `${name} k8s ${kubernetesVersion}`,
      })),
      parameters,
    };
  }
  const queries: FilterNeed[] = [];
  const parameters: string[] = [];
  for (const term of terms) {
    const id = text(term.id);
    const parameter = text(term.ssmParameter);
    const name = text(term.name);
    if (id !== undefined) queries.push({ filter: `${region} image-id`, value: id });
    else if (parameter !== undefined) {
      parameters.push(parameter);
      queries.push({ filter: `${region} image-id`, value: `ssm:${parameter}` });
    } else if (name !== undefined && Object.keys(record(term.tags)).length === 0) {
      const owner = text(term.owner);
      // EC2 semantics: a name without an owner is searched among the caller's and Amazon's images.
      const owners = owner !== undefined ? [owner] : ['amazon', 'self'];
      queries.push({ filter: `${region} name ${owners.join(',')}`, value: name });
    } else {
      const owner = text(term.owner);
      queries.push({
        query: JSON.stringify([region, name ?? '', owner ?? '', tagKey(term.tags)]),
      });
    }
  }
  return { queries, parameters };
}

/** DescribeInstanceTypes pages at most 100 types, DescribeInstanceTypeOfferings 1,000 rows. */
const INSTANCE_TYPES_PER_CALL = 100;
const OFFERINGS_PER_CALL = 1000;

/** The region's types Karpenter's query returns: HVM, x86_64 or arm64. */
function karpenterTypes(types: readonly unknown[]): number {
  return types.filter((type) => {
    const info = record(type);
    const hvm = list(info.SupportedVirtualizationTypes).includes('hvm');
    const arch = list(record(info.ProcessorInfo).SupportedArchitectures);
    return hvm && (arch.includes('x86_64') || arch.includes('arm64'));
  }).length;
}

/** A region-wide section's list for the world's region (`{ "us-east-1": [...] }`). */
function regionList(section: unknown, region: string): unknown[] {
  const byRegion = record(section);
  return Object.hasOwn(byRegion, region) ? list(byRegion[region]) : [];
}

/** The controller role of a cluster: Pod Identity for Karpenter's service account, else IRSA. */
function controllerRoleOf(cluster: Json): string | undefined {
  const kubernetes = record(cluster.kubernetes);
  const namespace = text(kubernetes.karpenterNamespace) ?? 'kube-system';
  const serviceAccount = text(kubernetes.karpenterServiceAccount) ?? 'karpenter';
  for (const association of list(cluster.podIdentityAssociations).map(record)) {
    if (association.namespace === namespace && association.serviceAccount === serviceAccount) {
      const arn = text(association.roleArn);
      if (arn !== undefined) return roleName(arn);
    }
  }
  for (const account of list(kubernetes.serviceAccounts).map(record)) {
    if (account.namespace !== namespace || account.name !== serviceAccount) continue;
    const arn = text(record(account.annotations)['eks.amazonaws.com/role-arn']);
    if (arn !== undefined) return roleName(arn);
  }
  return undefined;
}

export interface LowerBound {
  /** Fewest calls per `service:Operation`. */
  readonly byOperation: Readonly<Record<string, number>>;
  /** Distinct (controller role, context as its policies see it): at least one simulation each. */
  readonly simulationContexts: number;
}

/** The lower bound of a fleet world (the JSON `buildFleetWorld` returns). */
export function fleetLowerBound(world: unknown): LowerBound {
  const root = record(world);
  const region = text(root.region) ?? '';
  const iam = record(root.iam);
  const roles = new Map(list(iam.roles).map((role) => [text(record(role).RoleName), record(role)]));
  const profiles = new Map(
    list(iam.instanceProfiles).map((profile) => [
      text(record(profile).InstanceProfileName),
      record(profile),
    ])
  );

  const images: FilterNeed[] = [];
  const parameters = new Set<string>();
  const subnets: FilterNeed[] = [];
  const securityGroups: FilterNeed[] = [];
  const reservations = new Set<string>();
  const nodeRoles = new Set<string>();
  const instanceProfiles = new Set<string>();
  const controllerContexts = new Map<string, Set<string>>();

  let instanceTypesNeeded = false;
  let defaultKeyNeeded = false;
  const keyReferences = new Set<string>();
  for (const cluster of list(record(root.eks).clusters).map(record)) {
    const clusterName = text(cluster.name) ?? '';
    const kubernetesVersion = text(cluster.version) ?? '';
    const kubernetes = record(cluster.kubernetes);
    const nodeClasses = list(kubernetes.ec2NodeClasses).map(record);
    const classNames = new Set(
      nodeClasses.map((nodeClass) => text(record(nodeClass.metadata).name))
    );
    for (const nodePool of list(kubernetes.nodePools).map(record)) {
      const ref = record(record(record(nodePool.spec).template).spec).nodeClassRef;
      if (classNames.has(text(record(ref).name))) instanceTypesNeeded = true;
    }
    const controller = controllerRoleOf(cluster);
    if (controller !== undefined && nodeClasses.length > 0) {
      const contexts = controllerContexts.get(controller) ?? new Set<string>();
      contexts.add(`${region} ${clusterName}`);
      controllerContexts.set(controller, contexts);
    }
    for (const nodeClass of nodeClasses) {
      const spec = record(nodeClass.spec);
      const ami = amiNeeds(list(spec.amiSelectorTerms).map(record), kubernetesVersion, region);
      images.push(...ami.queries);
      for (const name of ami.parameters) parameters.add(name);
      subnets.push(...filterNeeds(list(spec.subnetSelectorTerms).map(record), 'subnet-id'));
      securityGroups.push(
        ...filterNeeds(list(spec.securityGroupSelectorTerms).map(record), 'group-id')
      );
      for (const term of list(spec.capacityReservationSelectorTerms).map(record))
        reservations.add(`${region} ${selectorTermKey(term)}`);
      const mappings = list(spec.blockDeviceMappings).map(record);
      if (mappings.length === 0) defaultKeyNeeded = true;
      for (const mapping of mappings) {
        const keyId = text(record(mapping.ebs).kmsKeyID);
        if (keyId === undefined) defaultKeyNeeded = true;
        else keyReferences.add(keyId);
      }
      const profile = text(spec.instanceProfile);
      const role = text(spec.role);
      if (profile !== undefined) {
        instanceProfiles.add(profile);
        const profileRole = text(record(list(profiles.get(profile)?.Roles)[0]).RoleName);
        if (profileRole !== undefined) nodeRoles.add(profileRole);
      } else if (role !== undefined) {
        nodeRoles.add(roleName(role));
      }
    }
  }

  // Role reads: node roles and controller roles alike (GetRole; attached policies if it exists).
  const readRoles = new Set([...nodeRoles, ...controllerContexts.keys()]);
  const existing = [...readRoles].filter((name) => roles.has(name));
  const controllers = [...controllerContexts.keys()].filter((name) => roles.has(name));
  const inlinePolicies = controllers.reduce(
    (sum, name) => sum + list(roles.get(name)?.RolePolicyList).length,
    0
  );
  const managedPolicies = new Set(
    controllers.flatMap((name) =>
      list(roles.get(name)?.AttachedPolicies).map((policy) => text(record(policy).PolicyArn))
    )
  );
  const simulations = simulationFloor(world);
  const simulationContexts = simulations.contexts;

  const kms = record(root.kms);
  const defaults = record(record(kms.ebsEncryptionDefaults)[region]);
  const defaultKey = text(defaults.KmsKeyId) ?? 'alias/aws/ebs';
  if (defaultKeyNeeded) keyReferences.add(defaultKey);
  const awsManaged = (reference: string) =>
    reference === 'alias/aws/ebs' || reference.endsWith(':alias/aws/ebs');
  const keys = list(kms.keys).map(record);
  const keyOf = (reference: string) =>
    keys.find((key) => {
      const metadata = record(key.KeyMetadata);
      const alias = reference.includes('alias/')
        ? reference.slice(reference.indexOf('alias/'))
        : '';
      return (
        text(metadata.KeyId) === reference ||
        text(metadata.Arn) === reference ||
        list(key.Aliases).includes(alias)
      );
    });
  const described = [...keyReferences].filter((reference) => !awsManaged(reference));
  const customerKeys = new Set(
    described.flatMap((reference) => {
      const metadata = record(keyOf(reference)?.KeyMetadata);
      return text(metadata.KeyManager) === 'CUSTOMER' ? [text(metadata.Arn)] : [];
    })
  );

  const byOperation: Record<string, number> = {
    'ec2:DescribeImages': filterCalls(images),
    // One region per fleet world: every filter's values can share calls.
    'ec2:DescribeSubnets': filterCalls(subnets),
    'ec2:DescribeSecurityGroups': filterCalls(securityGroups),
    'ec2:DescribeCapacityReservations': reservations.size,
    // The region's instance types and zone offerings, once, when a NodePool launches anything.
    'ec2:DescribeInstanceTypes': instanceTypesNeeded
      ? Math.max(
          1,
          Math.ceil(
            karpenterTypes(regionList(root.instanceTypes, region)) / INSTANCE_TYPES_PER_CALL
          )
        )
      : 0,
    'ec2:DescribeInstanceTypeOfferings': instanceTypesNeeded
      ? Math.max(
          1,
          Math.ceil(regionList(root.instanceTypeOfferings, region).length / OFFERINGS_PER_CALL)
        )
      : 0,
    'ec2:GetEbsEncryptionByDefault': defaultKeyNeeded ? 1 : 0,
    'ec2:GetEbsDefaultKmsKeyId': defaultKeyNeeded ? 1 : 0,
    'kms:DescribeKey': described.length,
    'kms:GetKeyPolicy': customerKeys.size,
    'kms:ListGrants': customerKeys.size,
    'ssm:GetParameters': Math.ceil(parameters.size / PARAMETERS_PER_CALL),
    'iam:GetInstanceProfile': instanceProfiles.size,
    'iam:GetRole': readRoles.size,
    'iam:ListAttachedRolePolicies': existing.length,
    'iam:ListRolePolicies': controllers.length,
    'iam:GetRolePolicy': inlinePolicies,
    'iam:GetPolicy': managedPolicies.size,
    'iam:GetPolicyVersion': managedPolicies.size,
    'iam:SimulatePrincipalPolicy': simulations.calls,
  };
  return {
    byOperation: Object.fromEntries(Object.entries(byOperation).filter(([, calls]) => calls > 0)),
    simulationContexts,
  };
}

export interface BucketLimit {
  readonly capacity: number;
  readonly refillPerSecond: number;
}

/**
 * The shortest wall time the bound's calls can take under the given token buckets (EC2 one per
 * action, SSM one, IAM reads one, SimulatePrincipalPolicy its own) with `latencyMs` per call and
 * unlimited concurrency: the slowest bucket's drain time plus one call's latency.
 */
export function lowerBoundWallTimeMs(
  byOperation: Readonly<Record<string, number>>,
  limits: {
    readonly ec2: BucketLimit;
    readonly ssm: BucketLimit;
    readonly iam: BucketLimit;
    readonly iamSimulate: BucketLimit;
  },
  latencyMs: number
): number {
  const buckets = new Map<string, { calls: number; limit: BucketLimit }>();
  for (const [operation, calls] of Object.entries(byOperation)) {
    const [service] = operation.split(':');
    const key =
      service === 'ec2'
        ? operation
        : operation === 'iam:SimulatePrincipalPolicy'
          ? 'iam:simulate'
          : (service ?? operation);
    const limit =
      service === 'ec2'
        ? limits.ec2
        : service === 'ssm'
          ? limits.ssm
          : key === 'iam:simulate'
            ? limits.iamSimulate
            : limits.iam;
    const bucket = buckets.get(key) ?? { calls: 0, limit };
    bucket.calls += calls;
    buckets.set(key, bucket);
  }
  let slowest = 0;
  for (const { calls, limit } of buckets.values()) {
    const drainMs = (Math.max(0, calls - limit.capacity) / limit.refillPerSecond) * 1000;
    slowest = Math.max(slowest, drainMs);
  }
  return buckets.size === 0 ? 0 : Math.round(slowest + latencyMs);
}
