// The fewest SimulatePrincipalPolicy calls a fleet needs, from the fleet description alone (the world
// buildFleetWorld writes). No scanner code is imported (test/bench/lower-bound.test.ts checks it):
// the (action, resource) pairs and contexts are modelled here from Karpenter's own calls
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/controllers/nodeclass/validation.go,
// https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/website/content/en/docs/reference/cloudformation.md),
// and grouped by what docs/permission-semantics.md says a simulation must keep apart:
// - the principal (the cluster's controller role);
// - which context keys a request carries (presence changes verdicts through `Null`, `…IfExists`
//   and negated operators, also in SCPs, which cannot be read);
// - the values of the keys the controller role's policies compare; other values do not change a
//   verdict, except that an empty value or the number of values in a list may read as absent;
// - resource keys (tags, `ec2:Vpc`, `ec2:AvailabilityZone`) and `ec2:Region` are supplied only when
//   the policies use them, so they split contexts only then.
//
// One call is one list of actions on one list of resources, every pair of the cross product
// answered, at most 1,000 results to a page (MaxItems' largest value; 100 when not given,
// https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html): a call
// holds at most 1,000 (action, resource) pairs, and a call of one context answers no other
// context. Per context, ⌈pairs / 1,000⌉ calls are needed. Where that is one call but the context's
// actions × its resources exceed a page, one call cannot hold them: two are needed, so the floor
// counts two. Beyond that no cross-product cost is counted, so the floor may still be below what
// any packing reaches.
import { aliasParameters } from './fleet.js';

const RESULTS_PER_CALL = 1000;

type Json = Record<string, unknown>;

const record = (value: unknown): Json =>
  value !== null && typeof value === 'object' ? (value as Json) : {};
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

interface Entry {
  readonly key: string;
  readonly values: readonly string[];
}

/** Condition keys a controller role's policies use, and those they compare by value. */
interface KeyUsage {
  readonly used: ReadonlySet<string>;
  /** Undefined: a policy could not be read, so every value counts. */
  readonly compared: ReadonlySet<string> | undefined;
}

/** A policy document as IAM returns it (URL-encoded JSON), plain JSON or an object. */
function parseDocument(document: unknown): Json | undefined {
  if (typeof document !== 'string') return document === undefined ? undefined : record(document);
  for (const candidate of [document, safeDecode(document)]) {
    try {
      return record(JSON.parse(candidate));
    } catch {
      // try the next form
    }
  }
  return undefined;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Keys of the documents: a key is compared by value unless every use is `Null` or a
 * `StringLike`/`StringNotLike` on `*` (set operators always compare); `${key}` variables compare.
 */
function keyUsage(documents: readonly unknown[]): KeyUsage {
  const used = new Set<string>();
  const compared = new Set<string>();
  for (const document of documents) {
    const parsed = parseDocument(document);
    if (parsed === undefined) return { used, compared: undefined };
    for (const match of JSON.stringify(parsed).matchAll(/\$\{([^}*?$]+)\}/g)) {
      const key = (match[1] ?? '').toLowerCase();
      used.add(key);
      compared.add(key);
    }
    const statements = Array.isArray(parsed.Statement) ? parsed.Statement : [parsed.Statement];
    for (const statement of statements.map(record)) {
      for (const [operator, block] of Object.entries(record(statement.Condition))) {
        for (const [key, value] of Object.entries(record(block))) {
          if (/[*$]/.test(key)) return { used, compared: undefined };
          const lower = key.toLowerCase();
          used.add(lower);
          const values = (Array.isArray(value) ? value : [value]).map(String);
          const bare = operator.replace(/IfExists$/, '');
          const presence =
            bare === 'Null' ||
            ((bare === 'StringLike' || bare === 'StringNotLike') && values.includes('*'));
          if (operator.startsWith('For') || !presence) compared.add(lower);
        }
      }
    }
  }
  return { used, compared };
}

/** The controller role's documents (inline, attached, boundary) in the world, as IAM lists them. */
function roleDocuments(role: Json, policies: ReadonlyMap<string, Json>): unknown[] {
  const documents: unknown[] = list(role.RolePolicyList).map(
    (policy) => record(policy).PolicyDocument
  );
  const arns = [
    ...list(role.AttachedPolicies).map((policy) => text(record(policy).PolicyArn)),
    text(record(role.PermissionsBoundary).PermissionsBoundaryArn),
  ];
  for (const arn of arns) {
    if (arn === undefined) continue;
    const policy = policies.get(arn);
    // An AWS managed policy the world does not hold: unreadable here, so every value counts.
    documents.push(policy === undefined ? '' : (policy.Document ?? policy.document ?? ''));
  }
  return documents;
}

/** Pod Identity session tags (https://docs.aws.amazon.com/eks/latest/userguide/pod-id-abac.html). */
const POD_IDENTITY_TAGS = [
  'eks-cluster-arn',
  'eks-cluster-name',
  'kubernetes-namespace',
  'kubernetes-service-account',
];

interface Controller {
  readonly arn: string;
  readonly principalTags: readonly Entry[];
}

function controllerOf(cluster: Json): Controller | undefined {
  const kubernetes = record(cluster.kubernetes);
  const namespace = text(kubernetes.karpenterNamespace) ?? 'kube-system';
  const serviceAccount = text(kubernetes.karpenterServiceAccount) ?? 'karpenter';
  for (const association of list(cluster.podIdentityAssociations).map(record)) {
    const arn = text(association.roleArn);
    if (association.namespace !== namespace || association.serviceAccount !== serviceAccount)
      continue;
    if (arn === undefined) continue;
    const values = [text(cluster.arn) ?? '', text(cluster.name) ?? '', namespace, serviceAccount];
    return {
      arn,
      principalTags: POD_IDENTITY_TAGS.map((tag, index) => ({
        key: `aws:PrincipalTag/${tag}`,
        values: [values[index] ?? ''],
      })),
    };
  }
  for (const entry of list(kubernetes.serviceAccounts).map(record)) {
    if (entry.namespace !== namespace || entry.name !== serviceAccount) continue;
    const arn = text(record(entry.annotations)['eks.amazonaws.com/role-arn']);
    if (arn !== undefined) return { arn, principalTags: [] };
  }
  return undefined;
}

/** `1.8.0` → [1, 8, 0]; unknown → undefined (the newest release: every current call). */
function versionOf(value: string | undefined): number[] | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(value ?? '');
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

function atLeast(version: number[] | undefined, since: string): boolean {
  if (version === undefined) return true;
  const wanted = versionOf(since) ?? [0, 0, 0];
  for (let index = 0; index < 3; index++) {
    const a = version[index] ?? 0;
    const b = wanted[index] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * Karpenter's Describe calls by the release that first makes them: capacity reservations v1.3.0,
 * placement groups v1.11.0, instance status v1.12.0 (pkg/providers/capacityreservation,
 * placementgroup, instancestatus).
 */
const DESCRIBE_SINCE: readonly (readonly [string, string])[] = [
  ['ec2:DescribeCapacityReservations', '1.3.0'],
  ['ec2:DescribeImages', '0.0.0'],
  ['ec2:DescribeInstances', '0.0.0'],
  ['ec2:DescribeInstanceStatus', '1.12.0'],
  ['ec2:DescribeInstanceTypeOfferings', '0.0.0'],
  ['ec2:DescribeInstanceTypes', '0.0.0'],
  ['ec2:DescribeLaunchTemplates', '0.0.0'],
  ['ec2:DescribePlacementGroups', '1.11.0'],
  ['ec2:DescribeSecurityGroups', '0.0.0'],
  ['ec2:DescribeSpotPriceHistory', '0.0.0'],
  ['ec2:DescribeSubnets', '0.0.0'],
];

/** Shell-style match of an AMI name pattern (`*`, `?`). */
function globMatches(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(value);
}

function tagsOf(resource: Json): Map<string, string> {
  return new Map(
    list(resource.Tags).map((tag) => [text(record(tag).Key) ?? '', text(record(tag).Value) ?? ''])
  );
}

/** A selector term's tags match (`*` any value). */
function tagsMatch(wanted: Json, tags: ReadonlyMap<string, string>): boolean {
  return Object.entries(wanted).every(
    ([key, value]) => tags.has(key) && (value === '*' || tags.get(key) === String(value))
  );
}

/** An existing resource a launch uses: its ARN and, when read by the scan, its facts. */
interface Existing {
  readonly arn: string;
  readonly tags?: ReadonlyMap<string, string>;
  readonly vpcId?: string | undefined;
  readonly zone?: string | undefined;
}

interface Pair {
  readonly action: string;
  readonly resource: string;
}

interface ContextGroup {
  readonly principal: string;
  readonly label: string;
  readonly actions: Set<string>;
  readonly resources: Set<string>;
  readonly pairs: Set<string>;
}

export interface ContextFloor {
  readonly principal: string;
  /** What the first request of the context was (`launch`, `describe`, …), for reading. */
  readonly label: string;
  readonly actions: number;
  readonly resources: number;
  readonly pairs: number;
  readonly calls: number;
}

export interface SimulationFloor {
  /** Distinct (principal, context as the policies see it). */
  readonly contexts: number;
  /** Distinct (action, resource) pairs, summed over contexts. */
  readonly pairs: number;
  /** Σ ⌈pairs / results per call⌉ over contexts. */
  readonly byPairs: number;
  /** The floor: `byPairs`, plus one call per context whose pairs fit one page but not one call. */
  readonly calls: number;
  readonly byContext: readonly ContextFloor[];
}

/** The simulation floor of a fleet world. */
export function simulationFloor(world: unknown, perCall = RESULTS_PER_CALL): SimulationFloor {
  const root = record(world);
  const region = text(root.region) ?? '';
  const account = text(root.account) ?? '';
  const partition = text(root.partition) ?? 'aws';
  const iam = record(root.iam);
  const ec2 = record(root.ec2);
  const roles = new Map(list(iam.roles).map((role) => [text(record(role).RoleName), record(role)]));
  const roleByArn = (arn: string) => roles.get(arn.slice(arn.lastIndexOf('/') + 1));
  const policies = new Map(
    list(iam.policies).map((policy) => [text(record(policy).Arn) ?? '', record(policy)])
  );
  const profiles = new Map(
    list(iam.instanceProfiles).map((profile) => [
      text(record(profile).InstanceProfileName),
      record(profile),
    ])
  );
  const parameters = record(record(root.ssm).parameters);
  const images = list(ec2.images).map(record);
  const subnets = list(ec2.subnets).map(record);
  const securityGroups = list(ec2.securityGroups).map(record);
  const reservations = list(ec2.capacityReservations).map(record);
  const spotRoleExists = roles.has('AWSServiceRoleForEC2Spot');
  // IAM's calls carry its single endpoint's region (us-east-1 in the commercial partition).
  const iamRegion =
    { aws: 'us-east-1', 'aws-cn': 'cn-north-1', 'aws-us-gov': 'us-gov-west-1' }[partition] ?? '';
  const ec2Arn = (resource: string) =>
    `arn:${partition}:ec2:${region}:${/^(image|snapshot)\//.test(resource) ? '' : account}:${resource}`;

  const groups = new Map<string, ContextGroup>();

  for (const cluster of list(record(root.eks).clusters).map(record)) {
    const clusterName = text(cluster.name) ?? '';
    const kubernetes = record(cluster.kubernetes);
    const nodeClasses = list(kubernetes.ec2NodeClasses).map(record);
    const controller = controllerOf(cluster);
    const controllerRole = controller === undefined ? undefined : roleByArn(controller.arn);
    // No controller role in the account: the permission checks fail without simulating.
    if (controller === undefined || controllerRole === undefined || nodeClasses.length === 0)
      continue;
    const usage = keyUsage(roleDocuments(controllerRole, policies));
    const uses = (key: string) => usage.used.has(key.toLowerCase());
    const compares = (key: string) =>
      usage.compared === undefined || usage.compared.has(key.toLowerCase());
    const version = versionOf(text(kubernetes.karpenterVersion));

    /** Adds pairs under a context; the context is keyed as the policies see it. */
    const add = (label: string, entries: readonly Entry[], pairs: readonly Pair[]) => {
      const seen = [...entries, ...controller.principalTags]
        .map(({ key, values }) => {
          const shown = compares(key) ? values : values.map((value) => (value === '' ? '' : '•'));
          return `${key}=${JSON.stringify(shown)}`;
        })
        .sort();
      const id = `${controller.arn} ${seen.join(' ')}`;
      let group = groups.get(id);
      if (group === undefined) {
        group = {
          principal: controller.arn,
          label,
          actions: new Set(),
          resources: new Set(),
          pairs: new Set(),
        };
        groups.set(id, group);
      }
      for (const { action, resource } of pairs) {
        group.actions.add(action);
        group.resources.add(resource);
        group.pairs.add(`${action} ${resource}`);
      }
    };
    const on = (actions: readonly string[], resources: readonly string[]): Pair[] =>
      actions.flatMap((action) => resources.map((resource) => ({ action, resource })));
    const tagEntries = (prefix: string, tags: Record<string, string>): Entry[] =>
      Object.entries(tags).map(([key, value]) => ({ key: `${prefix}${key}`, values: [value] }));
    const requestTags = (tags: Record<string, string>): Entry[] => [
      ...tagEntries('aws:RequestTag/', tags),
      { key: 'aws:TagKeys', values: Object.keys(tags).sort() },
    ];
    const requestedRegion = { key: 'aws:RequestedRegion', values: [region] };
    const iamRequestedRegion = { key: 'aws:RequestedRegion', values: [iamRegion] };
    const ec2Region = uses('ec2:Region') ? [{ key: 'ec2:Region', values: [region] }] : [];
    const resourceKeysUsed = [...usage.used].some(
      (key) => /resourcetag\//.test(key) || key === 'ec2:vpc' || key === 'ec2:availabilityzone'
    );
    /** Keys AWS sets from a resource whose facts the scan read, when the policies use them. */
    const existingEntries = (resource: Existing): Entry[] => {
      if (resource.tags === undefined) return [];
      const entries: Entry[] = [];
      for (const key of usage.used) {
        const tag = /^[a-z0-9-]+:resourcetag\/(.+)$/.exec(key)?.[1];
        const tagValue =
          tag === undefined
            ? undefined
            : [...resource.tags].find(([name]) => name.toLowerCase() === tag)?.[1];
        if (tagValue !== undefined) entries.push({ key, values: [tagValue] });
        if (key === 'ec2:vpc' && resource.vpcId !== undefined)
          entries.push({ key, values: [ec2Arn(`vpc/${resource.vpcId}`)] });
        if (key === 'ec2:availabilityzone' && resource.zone !== undefined)
          entries.push({ key, values: [resource.zone] });
      }
      return entries;
    };

    const poolsByClass = new Map<string, string[]>();
    let spotWanted = false;
    for (const nodePool of list(kubernetes.nodePools).map(record)) {
      const spec = record(record(record(nodePool.spec).template).spec);
      const name = text(record(nodePool.metadata).name) ?? '';
      const target = text(record(spec.nodeClassRef).name) ?? '';
      poolsByClass.set(target, [...(poolsByClass.get(target) ?? []), name]);
      for (const requirement of list(spec.requirements).map(record)) {
        if (requirement.key !== 'karpenter.sh/capacity-type') continue;
        const values = list(requirement.values);
        if (
          (requirement.operator === 'In' && values.includes('spot')) ||
          (requirement.operator === 'NotIn' && !values.includes('spot')) ||
          requirement.operator === 'Exists'
        )
          spotWanted = true;
      }
    }

    for (const nodeClass of nodeClasses) {
      const metadata = record(nodeClass.metadata);
      const className = text(metadata.name) ?? '';
      const spec = record(nodeClass.spec);
      const specTags = Object.fromEntries(
        Object.entries(record(spec.tags)).map(([key, value]) => [key, String(value)])
      );
      const owned = {
        [`kubernetes.io/cluster/${clusterName}`]: 'owned',
        'eks:eks-cluster-name': clusterName,
      };

      // What the class resolves to, read from the world as the scan reads it.
      const existing: Existing[] = [];
      const parameterNames: string[] = [];
      const amiTerms = list(spec.amiSelectorTerms).map(record);
      const alias = amiTerms.map((term) => text(term.alias)).find((value) => value !== undefined);
      const imageIds = new Set<string>();
      if (alias !== undefined) {
        for (const name of Object.keys(aliasParameters(alias.toLowerCase(), () => ''))) {
          parameterNames.push(name);
          const id = text(parameters[name]);
          if (id !== undefined) imageIds.add(id);
        }
      } else {
        for (const term of amiTerms) {
          const id = text(term.id);
          const parameter = text(term.ssmParameter);
          const name = text(term.name);
          if (id !== undefined) imageIds.add(id);
          else if (parameter !== undefined) {
            parameterNames.push(parameter);
            const value = text(parameters[parameter]);
            if (value !== undefined) imageIds.add(value);
          } else if (name !== undefined) {
            const owner = text(term.owner);
            for (const image of images) {
              const ownerId = text(image.OwnerId);
              const ownerMatches =
                owner === undefined
                  ? ownerId === account || image.ImageOwnerAlias === 'amazon'
                  : owner === 'self'
                    ? ownerId === account
                    : owner === ownerId || owner === image.ImageOwnerAlias;
              if (ownerMatches && globMatches(name, text(image.Name) ?? ''))
                imageIds.add(text(image.ImageId) ?? '');
            }
          }
        }
      }
      for (const id of imageIds) {
        const image = images.find((candidate) => candidate.ImageId === id);
        // Another account's image does not show its owner's tags: nothing known of it.
        const own = image !== undefined && text(image.OwnerId) === account;
        existing.push({
          arn: ec2Arn(`image/${id}`),
          ...(own ? { tags: tagsOf(image) } : {}),
        });
      }
      existing.push({ arn: ec2Arn('snapshot/*') });
      const select = (terms: readonly Json[], resources: readonly Json[], idField: string) =>
        resources.filter((resource) =>
          terms.some((term) => {
            const id = text(term.id);
            if (id !== undefined) return resource[idField] === id;
            const name = text(term.name);
            if (name !== undefined) return resource.GroupName === name;
            return (
              Object.keys(record(term.tags)).length > 0 &&
              tagsMatch(record(term.tags), tagsOf(resource))
            );
          })
        );
      for (const subnet of select(list(spec.subnetSelectorTerms).map(record), subnets, 'SubnetId'))
        existing.push({
          arn: ec2Arn(`subnet/${text(subnet.SubnetId)}`),
          tags: tagsOf(subnet),
          vpcId: text(subnet.VpcId),
          zone: text(subnet.AvailabilityZone),
        });
      for (const group of select(
        list(spec.securityGroupSelectorTerms).map(record),
        securityGroups,
        'GroupId'
      ))
        existing.push({
          arn: ec2Arn(`security-group/${text(group.GroupId)}`),
          tags: tagsOf(group),
          vpcId: text(group.VpcId),
        });
      for (const reservation of select(
        list(spec.capacityReservationSelectorTerms).map(record),
        reservations,
        'CapacityReservationId'
      ))
        existing.push({
          arn: ec2Arn(`capacity-reservation/${text(reservation.CapacityReservationId)}`),
          tags: tagsOf(reservation),
          zone: text(reservation.AvailabilityZone),
        });

      // Launches, per NodePool (its name is a request tag); a class no NodePool uses is still
      // validated by dry-runs with an empty nodepool tag.
      const launchTemplate = ec2Arn('launch-template/*');
      const created = (...types: string[]) => types.map((type) => ec2Arn(`${type}/*`));
      const pools = [...new Set(poolsByClass.get(className) ?? [''])].sort();
      for (const pool of pools) {
        const tags = {
          ...specTags,
          ...owned,
          'karpenter.sh/nodepool': pool,
          'karpenter.k8s.aws/ec2nodeclass': className,
        };
        const base = [...requestTags(tags), requestedRegion, ...ec2Region];
        const creates: readonly (readonly [string, string, string[]])[] = [
          ['ec2:CreateLaunchTemplate', 'CreateLaunchTemplate', [launchTemplate]],
          [
            'ec2:CreateFleet',
            'CreateFleet',
            created('fleet', 'instance', 'volume', 'network-interface'),
          ],
          ['ec2:RunInstances', 'RunInstances', created('instance', 'volume', 'network-interface')],
        ];
        for (const [action, createAction, resources] of creates) {
          add('launch', base, on([action], resources));
          // Tag on create: its CreateTags carries ec2:CreateAction.
          add(
            'tag-on-create',
            [...base, { key: 'ec2:CreateAction', values: [createAction] }],
            on(['ec2:CreateTags'], resources)
          );
        }
        const launches = ['ec2:RunInstances', 'ec2:CreateFleet'];
        add(
          'use-launch-template',
          [...base, ...tagEntries('aws:ResourceTag/', tags)],
          on(launches, [launchTemplate])
        );
        for (const resource of existing) {
          const entries = resourceKeysUsed ? existingEntries(resource) : [];
          add('launch', [...base, ...entries], on(launches, [resource.arn]));
        }
      }

      // iam:PassRole of the node role (spec.role, or the role in spec.instanceProfile).
      const profileName = text(spec.instanceProfile);
      const nodeRole =
        profileName === undefined
          ? text(spec.role)
          : (text(record(list(profiles.get(profileName)?.Roles)[0]).Arn) ??
            text(record(list(profiles.get(profileName)?.Roles)[0]).RoleName));
      if (nodeRole !== undefined) {
        const arn = nodeRole.startsWith('arn:')
          ? nodeRole
          : `arn:${partition}:iam::${account}:role/${nodeRole}`;
        add(
          'pass-role',
          [{ key: 'iam:PassedToService', values: ['ec2.amazonaws.com'] }, requestedRegion],
          on(['iam:PassRole'], [arn])
        );
      }

      // Role mode: Karpenter manages the class' instance profile
      // (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/instanceprofile/instanceprofile.go).
      if (profileName === undefined) {
        const profileTags = {
          ...specTags,
          ...owned,
          'karpenter.k8s.aws/ec2nodeclass': className,
          'topology.kubernetes.io/region': region,
        };
        const name = text(record(nodeClass.status).instanceProfile) ?? `${clusterName}_*`;
        const uid = text(metadata.uid) ?? '*';
        const profile = atLeast(version, '1.7.0')
          ? `arn:${partition}:iam::${account}:instance-profile/karpenter/${region}/${clusterName}/${uid}/${name}`
          : `arn:${partition}:iam::${account}:instance-profile/${name}`;
        add(
          'create-instance-profile',
          [...requestTags(profileTags), iamRequestedRegion],
          on(['iam:CreateInstanceProfile'], [profile])
        );
        if (!atLeast(version, '1.1.0'))
          add(
            'tag-instance-profile',
            [
              ...requestTags(profileTags),
              ...tagEntries('aws:ResourceTag/', profileTags),
              iamRequestedRegion,
            ],
            on(['iam:TagInstanceProfile'], [profile])
          );
        add(
          'manage-instance-profile',
          [...tagEntries('aws:ResourceTag/', profileTags), iamRequestedRegion],
          on(
            [
              'iam:GetInstanceProfile',
              'iam:AddRoleToInstanceProfile',
              'iam:RemoveRoleFromInstanceProfile',
              'iam:DeleteInstanceProfile',
            ],
            [profile]
          )
        );
        if (atLeast(version, '1.7.0'))
          add(
            'list-instance-profiles',
            [iamRequestedRegion],
            on(['iam:ListInstanceProfiles'], ['*'])
          );
      }

      // Discovery: the regional Describe calls, the cluster, the AMI parameters.
      add(
        'describe',
        [requestedRegion, ...ec2Region],
        on(
          DESCRIBE_SINCE.filter(([, since]) => atLeast(version, since)).map(([action]) => action),
          ['*']
        )
      );
      add(
        'describe',
        [requestedRegion],
        on(
          ['eks:DescribeCluster'],
          [`arn:${partition}:eks:${region}:${account}:cluster/${clusterName}`]
        )
      );
      if (parameterNames.length > 0)
        add(
          'describe',
          [requestedRegion],
          on(
            ['ssm:GetParameter'],
            parameterNames.map((name) => {
              const path = name.replace(/^\/+/, '');
              return `arn:${partition}:ssm:${region}:${path.startsWith('aws/service/') ? '' : account}:parameter/${path}`;
            })
          )
        );
    }

    // The first Spot launch creates EC2 Spot's service-linked role when it is missing.
    if (spotWanted && !spotRoleExists)
      add(
        'spot-service-linked-role',
        [{ key: 'iam:AWSServiceName', values: ['spot.amazonaws.com'] }, iamRequestedRegion],
        on(
          ['iam:CreateServiceLinkedRole'],
          [
            `arn:${partition}:iam::${account}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`,
          ]
        )
      );
  }

  const byContext = [...groups.values()].map((group): ContextFloor => {
    const pairs = group.pairs.size;
    const byPairs = Math.ceil(pairs / perCall);
    const oneCall = group.actions.size * Math.max(1, group.resources.size) <= perCall;
    return {
      principal: group.principal,
      label: group.label,
      actions: group.actions.size,
      resources: group.resources.size,
      pairs,
      calls: byPairs === 1 && !oneCall ? 2 : byPairs,
    };
  });
  return {
    contexts: byContext.length,
    pairs: byContext.reduce((sum, context) => sum + context.pairs, 0),
    byPairs: byContext.reduce((sum, context) => sum + Math.ceil(context.pairs / perCall), 0),
    calls: byContext.reduce((sum, context) => sum + context.calls, 0),
    byContext,
  };
}

/**
 * The shortest time `calls` simulations take against a token bucket of `capacity` and
 * `refillPerSecond` that starts full: the calls past the burst at the refill rate.
 */
export function iamWallFloorSeconds(
  calls: number,
  limit: { readonly capacity: number; readonly refillPerSecond: number }
): number {
  return Math.max(0, calls - limit.capacity) / limit.refillPerSecond;
}

/**
 * The fewest IAM calls that read the fleet's roles, instance profiles and policies when the account
 * is read whole: iam:GetAccountAuthorizationDetails pages of the account's roles and customer
 * managed policies, 1,000 items a page (MaxItems' largest,
 * https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetAccountAuthorizationDetails.html).
 * Roles recorded only inside an instance profile are roles of the account too.
 */
export function accountDirectoryPages(world: unknown, perPage = 1000): number {
  const iam = record(record(world).iam);
  const roles = new Set(list(iam.roles).map((role) => text(record(role).RoleName)));
  for (const profile of list(iam.instanceProfiles))
    for (const role of list(record(profile).Roles)) roles.add(text(record(role).RoleName));
  roles.delete(undefined);
  const customerPolicies = list(iam.policies).filter(
    (policy) => (text(record(policy).Arn) ?? '').split(':')[4] !== 'aws'
  );
  return Math.max(1, Math.ceil((roles.size + customerPolicies.length) / perPage));
}
