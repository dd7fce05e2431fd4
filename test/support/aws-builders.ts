import { imageMatchesQuery } from '../../lambda/core/ami/queries.js';
import { selectImages } from '../../lambda/core/ami/select.js';
import type {
  AmiFacts,
  AwsClusterFacts,
  AwsNodeClassFacts,
  CapacityReservation,
  EbsEncryptionDefaults,
  Image,
  ImageSelection,
  InstanceProfile,
  InstanceTypeInfo,
  InstanceTypeOffering,
  KmsKeyLookup,
  Role,
  SecurityGroup,
  Subnet,
} from '../../lambda/core/facts/aws.js';
import { ok, type Slice, unavailable } from '../../lambda/core/facts/slice.js';
import type { ClusterContext, Inventory } from '../../lambda/core/inventory.js';
import { nodeClassKey } from '../../lambda/core/inventory.js';
import type { AwsFactsPort, FilterQuery, ImageQuery } from '../../lambda/core/ports/aws-facts.js';
import { capacityReservationMatchesQuery } from '../../lambda/core/selectors/capacity-reservations.js';
import { securityGroupMatchesQuery } from '../../lambda/core/selectors/security-groups.js';
import { subnetMatchesQuery } from '../../lambda/core/selectors/subnets.js';
import { SourceUnavailableError } from '../../lambda/shared/errors.js';
import { anInventory } from './builders.js';

export const ACCOUNT = '111122223333';
export const SCAN_TIME = new Date('2026-11-01T00:00:00Z');

export function anImage(overrides: Partial<Image> = {}): Image {
  return {
    id: 'ami-0a1b2c3d4e5f00001',
    name: 'team-node-2026-10-01',
    ownerId: ACCOUNT,
    state: 'available',
    architecture: 'x86_64',
    creationDate: '2026-10-01T00:00:00.000Z',
    rootDeviceName: '/dev/xvda',
    rootVolumeSizeGiB: 20,
    tags: {},
    ...overrides,
  };
}

export function aSubnet(overrides: Partial<Subnet> = {}): Subnet {
  return {
    id: 'subnet-0a1',
    vpcId: 'vpc-0main',
    availabilityZone: 'us-east-1a',
    availabilityZoneId: 'use1-az1',
    availableIpAddressCount: 250,
    tags: { 'karpenter.sh/discovery': 'demo' },
    ...overrides,
  };
}

export function aSecurityGroup(overrides: Partial<SecurityGroup> = {}): SecurityGroup {
  return {
    id: 'sg-0a1',
    name: 'demo-nodes',
    vpcId: 'vpc-0main',
    tags: { 'karpenter.sh/discovery': 'demo' },
    ...overrides,
  };
}

export function aCapacityReservation(
  overrides: Partial<CapacityReservation> = {}
): CapacityReservation {
  return {
    id: 'cr-0a1',
    ownerId: ACCOUNT,
    state: 'active',
    instanceType: 'p5.48xlarge',
    availabilityZone: 'us-east-1a',
    instanceMatchCriteria: 'targeted',
    reservationType: 'default',
    tags: { team: 'ml' },
    ...overrides,
  };
}

export function trustPolicy(services: readonly string[] = ['ec2.amazonaws.com']): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Principal: { Service: services }, Action: 'sts:AssumeRole' }],
  });
}

export const NODE_POLICIES = [
  'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
  'arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly',
  'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
  'arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore',
] as const;

export function aRole(overrides: Partial<Role> = {}): Role {
  const name = overrides.name ?? 'KarpenterNodeRole-demo';
  return {
    name,
    arn: `arn:aws:iam::${ACCOUNT}:role/${name}`,
    path: '/',
    assumeRolePolicyDocument: trustPolicy(),
    attachedPolicyArns: [...NODE_POLICIES],
    ...overrides,
  };
}

export function anInstanceProfile(overrides: Partial<InstanceProfile> = {}): InstanceProfile {
  const name = overrides.name ?? 'KarpenterNodeInstanceProfile';
  return {
    name,
    arn: `arn:aws:iam::${ACCOUNT}:instance-profile/${name}`,
    path: '/',
    roleNames: ['KarpenterNodeRole-demo'],
    ...overrides,
  };
}

/** A selection as the enricher computes it, from images that all matched one query. */
function aSelection(images: readonly Image[], now = SCAN_TIME): ImageSelection {
  const selected = selectImages([{ images }], now);
  return {
    queries: [
      {
        query: { filters: [{ name: 'name', values: ['team-node-*'] }], includeDeprecated: true },
        termIndexes: [0],
        images,
        selected,
      },
    ],
    matchCount: images.length,
    selected,
  };
}

export function anAmiFacts(
  overrides: Partial<AmiFacts> & {
    images?: readonly Image[];
    imagesIgnoringState?: readonly Image[];
  } = {}
): AmiFacts {
  const { images = [anImage()], imagesIgnoringState, ...rest } = overrides;
  return {
    ssmParameters: [],
    available: ok(aSelection(images.filter((image) => image.state === 'available'))),
    ignoringState: ok(aSelection(imagesIgnoringState ?? images)),
    ...rest,
  };
}

/** Facts for a healthy role-mode NodeClass; override any slice. */
export function someAwsFacts(overrides: Partial<AwsNodeClassFacts> = {}): AwsNodeClassFacts {
  return {
    amis: ok(anAmiFacts()),
    subnets: ok({ queries: [], subnets: [aSubnet()] }),
    securityGroups: ok({ queries: [], securityGroups: [aSecurityGroup()] }),
    nodeRole: ok({ source: 'spec.role', name: 'KarpenterNodeRole-demo', role: aRole() }),
    ...overrides,
  };
}

/** Healthy facts whose AMI queries (any state) matched exactly `images`. */
export function awsFactsWithImages(images: readonly Image[]): AwsNodeClassFacts {
  return someAwsFacts({ amis: ok(anAmiFacts({ images })) });
}

export function throttled<T>(what = 'ec2:DescribeImages'): Slice<T> {
  return unavailable('throttled', `${what}: Rate exceeded (RequestLimitExceeded)`);
}

export function aClusterFacts(overrides: Partial<AwsClusterFacts> = {}): AwsClusterFacts {
  return {
    accountId: ACCOUNT,
    arn: `arn:aws:eks:us-east-1:${ACCOUNT}:cluster/demo`,
    kubernetesVersion: '1.32',
    vpcId: 'vpc-0main',
    authenticationMode: 'API_AND_CONFIG_MAP',
    accessEntries: ok([
      {
        principalArn: `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo`,
        type: 'EC2_LINUX',
        kubernetesGroups: [],
      },
    ]),
    awsAuthRoleMappings: ok([]),
    ...overrides,
  };
}

/**
 * An inventory with `aws` collected: the raw NodeClasses in cluster `demo`, each given `facts`
 * (the same for all, or per NodeClass name).
 */
export function anAwsInventory(
  objects: readonly unknown[],
  facts: AwsNodeClassFacts | ((name: string) => AwsNodeClassFacts),
  cluster: Partial<ClusterContext> = {}
): Inventory {
  const base = anInventory(objects, {
    cluster: { name: 'demo', region: 'us-east-1', aws: ok(aClusterFacts()), ...cluster },
    inputs: ['spec', 'aws'],
  });
  const awsFacts = new Map(
    base.nodeClasses.map((entry) => [
      nodeClassKey(entry.cluster, entry.name),
      typeof facts === 'function' ? facts(entry.name) : facts,
    ])
  );
  return { ...base, awsFacts };
}

export interface AccountState {
  readonly images?: readonly Image[];
  readonly subnets?: readonly Subnet[];
  readonly securityGroups?: readonly SecurityGroup[];
  readonly capacityReservations?: readonly CapacityReservation[];
  /** The region's zone offerings; absent: not recorded (the port answers undefined). */
  readonly instanceTypeOfferings?: readonly InstanceTypeOffering[];
  /** The region's instance types; absent: not recorded (the port answers undefined). */
  readonly instanceTypes?: readonly InstanceTypeInfo[];
  readonly parameters?: Readonly<Record<string, string>>;
  readonly instanceProfiles?: readonly InstanceProfile[];
  readonly roles?: readonly Role[];
  /** The region's EBS encryption settings; absent: not recorded (the port answers undefined). */
  readonly ebsEncryptionDefaults?: EbsEncryptionDefaults;
  /** KMS keys by every reference that resolves to them (id, ARN, alias). */
  readonly kmsKeys?: Readonly<Record<string, KmsKeyLookup>>;
}

export type PortMethod = keyof AwsFactsPort;

/**
 * An in-memory account answering the port with core's own matching. `calls` records every call;
 * `failWhen` injects failures (e.g. throttling) per call.
 */
export class InMemoryAwsFacts implements AwsFactsPort {
  public readonly calls: { method: PortMethod; argument: unknown }[] = [];
  public failWhen: (method: PortMethod, argument: unknown) => SourceUnavailableError | undefined =
    () => undefined;

  public constructor(private readonly state: AccountState) {}

  private async record<T>(method: PortMethod, argument: unknown, answer: () => T): Promise<T> {
    this.calls.push({ method, argument });
    await Promise.resolve();
    const failure = this.failWhen(method, argument);
    if (failure) throw failure;
    return answer();
  }

  public callsTo(method: PortMethod): unknown[] {
    return this.calls.filter((call) => call.method === method).map((call) => call.argument);
  }

  public describeImages(query: ImageQuery): Promise<readonly Image[]> {
    return this.record('describeImages', query, () =>
      (this.state.images ?? []).filter((image) =>
        imageMatchesQuery(image, query, { accountId: ACCOUNT })
      )
    );
  }

  public describeSubnets(query: FilterQuery): Promise<readonly Subnet[]> {
    return this.record('describeSubnets', query, () =>
      (this.state.subnets ?? []).filter((subnet) => subnetMatchesQuery(subnet, query))
    );
  }

  public describeSecurityGroups(query: FilterQuery): Promise<readonly SecurityGroup[]> {
    return this.record('describeSecurityGroups', query, () =>
      (this.state.securityGroups ?? []).filter((group) => securityGroupMatchesQuery(group, query))
    );
  }

  public describeCapacityReservations(query: FilterQuery): Promise<readonly CapacityReservation[]> {
    return this.record('describeCapacityReservations', query, () =>
      (this.state.capacityReservations ?? []).filter((reservation) =>
        capacityReservationMatchesQuery(reservation, query)
      )
    );
  }

  public describeInstanceTypeOfferings(): Promise<readonly InstanceTypeOffering[] | undefined> {
    return this.record('describeInstanceTypeOfferings', undefined, () =>
      this.state.instanceTypeOfferings === undefined
        ? undefined
        : [...this.state.instanceTypeOfferings]
    );
  }

  public describeInstanceTypes(): Promise<readonly InstanceTypeInfo[] | undefined> {
    return this.record('describeInstanceTypes', undefined, () =>
      this.state.instanceTypes === undefined ? undefined : [...this.state.instanceTypes]
    );
  }

  public getParameter(name: string): Promise<string | undefined> {
    return this.record('getParameter', name, () => this.state.parameters?.[name]);
  }

  public getInstanceProfile(name: string): Promise<InstanceProfile | undefined> {
    return this.record('getInstanceProfile', name, () =>
      this.state.instanceProfiles?.find((profile) => profile.name === name)
    );
  }

  public getRole(name: string): Promise<Role | undefined> {
    return this.record('getRole', name, () => this.state.roles?.find((role) => role.name === name));
  }

  public getEbsEncryptionDefaults(): Promise<EbsEncryptionDefaults | undefined> {
    return this.record(
      'getEbsEncryptionDefaults',
      undefined,
      () => this.state.ebsEncryptionDefaults
    );
  }

  public describeKmsKey(reference: string): Promise<KmsKeyLookup | undefined> {
    return this.record('describeKmsKey', reference, () =>
      this.state.kmsKeys !== undefined && Object.hasOwn(this.state.kmsKeys, reference)
        ? this.state.kmsKeys[reference]
        : undefined
    );
  }
}

export function throttling(source = 'ec2'): SourceUnavailableError {
  return new SourceUnavailableError(source, 'throttled', `${source}: Rate exceeded`);
}
