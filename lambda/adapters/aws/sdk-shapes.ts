// SDK response shapes (as the SDK returns them, and as world files record them) → core types.
// Structural inputs so the live adapter (SDK types) and the world adapter (zod-parsed records)
// share one mapping.
import type {
  CapacityReservation,
  Image,
  InstanceProfile,
  InstanceTypeInfo,
  InstanceTypeOffering,
  KmsGrant,
  KmsKey,
  Role,
  SecurityGroup,
  Subnet,
  Tags,
} from '../../core/facts/aws.js';
import { tagMapOf } from '../../core/selectors/tag-map.js';

interface SdkTag {
  readonly Key?: string | undefined;
  readonly Value?: string | undefined;
}

/** SDK tag list → own-property map (a `__proto__` or `constructor` key is an ordinary tag). */
function tagsOf(tags: readonly SdkTag[] | undefined): Tags {
  return tagMapOf(
    (tags ?? []).flatMap((tag): [string, string][] =>
      tag.Key === undefined ? [] : [[tag.Key, tag.Value ?? '']]
    )
  );
}

function isoOf(value: string | Date | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value instanceof Date ? value.toISOString() : value;
}

/** `T` with every key that may hold `undefined` made optional and `undefined` removed. */
type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/** Copies defined values only: core types use optional fields, never `undefined` values. */
function defined<T extends Record<string, unknown>>(record: T): Defined<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, value]) => value !== undefined)
  ) as Defined<T>;
}

export interface SdkImage {
  readonly ImageId?: string | undefined;
  readonly Name?: string | undefined;
  readonly OwnerId?: string | undefined;
  readonly ImageOwnerAlias?: string | undefined;
  readonly State?: string | undefined;
  readonly Architecture?: string | undefined;
  readonly CreationDate?: string | undefined;
  readonly DeprecationTime?: string | undefined;
  readonly ImageAllowed?: boolean | undefined;
  readonly RootDeviceName?: string | undefined;
  readonly BlockDeviceMappings?:
    | readonly {
        readonly DeviceName?: string | undefined;
        readonly Ebs?: { readonly VolumeSize?: number | undefined } | undefined;
      }[]
    | undefined;
  readonly Tags?: readonly SdkTag[] | undefined;
}

export function imageFromSdk(image: SdkImage): Image {
  const root = image.BlockDeviceMappings?.find(
    (mapping) => mapping.DeviceName !== undefined && mapping.DeviceName === image.RootDeviceName
  );
  return defined({
    id: image.ImageId ?? '',
    name: image.Name,
    ownerId: image.OwnerId,
    ownerAlias: image.ImageOwnerAlias,
    state: image.State ?? 'unknown',
    architecture: image.Architecture,
    creationDate: image.CreationDate,
    deprecationTime: image.DeprecationTime,
    imageAllowed: image.ImageAllowed,
    rootDeviceName: image.RootDeviceName,
    rootVolumeSizeGiB: root?.Ebs?.VolumeSize,
    tags: tagsOf(image.Tags),
  });
}

export interface SdkSubnet {
  readonly SubnetId?: string | undefined;
  readonly VpcId?: string | undefined;
  readonly AvailabilityZone?: string | undefined;
  readonly AvailabilityZoneId?: string | undefined;
  readonly AvailableIpAddressCount?: number | undefined;
  readonly Tags?: readonly SdkTag[] | undefined;
}

export function subnetFromSdk(subnet: SdkSubnet): Subnet {
  return defined({
    id: subnet.SubnetId ?? '',
    vpcId: subnet.VpcId,
    availabilityZone: subnet.AvailabilityZone,
    availabilityZoneId: subnet.AvailabilityZoneId,
    availableIpAddressCount: subnet.AvailableIpAddressCount,
    tags: tagsOf(subnet.Tags),
  });
}

export interface SdkSecurityGroup {
  readonly GroupId?: string | undefined;
  readonly GroupName?: string | undefined;
  readonly VpcId?: string | undefined;
  readonly Tags?: readonly SdkTag[] | undefined;
}

export function securityGroupFromSdk(group: SdkSecurityGroup): SecurityGroup {
  return defined({
    id: group.GroupId ?? '',
    name: group.GroupName,
    vpcId: group.VpcId,
    tags: tagsOf(group.Tags),
  });
}

export interface SdkCapacityReservation {
  readonly CapacityReservationId?: string | undefined;
  readonly OwnerId?: string | undefined;
  readonly State?: string | undefined;
  readonly InstanceType?: string | undefined;
  readonly AvailabilityZone?: string | undefined;
  readonly InstanceMatchCriteria?: string | undefined;
  readonly EndDate?: string | Date | undefined;
  readonly ReservationType?: string | undefined;
  readonly AvailableInstanceCount?: number | undefined;
  readonly TotalInstanceCount?: number | undefined;
  readonly Interruptible?: boolean | undefined;
  readonly Tags?: readonly SdkTag[] | undefined;
}

export function capacityReservationFromSdk(
  reservation: SdkCapacityReservation
): CapacityReservation {
  return defined({
    id: reservation.CapacityReservationId ?? '',
    ownerId: reservation.OwnerId,
    state: reservation.State,
    instanceType: reservation.InstanceType,
    availabilityZone: reservation.AvailabilityZone,
    instanceMatchCriteria: reservation.InstanceMatchCriteria,
    endDate: isoOf(reservation.EndDate),
    reservationType: reservation.ReservationType,
    availableInstanceCount: reservation.AvailableInstanceCount,
    totalInstanceCount: reservation.TotalInstanceCount,
    interruptible: reservation.Interruptible,
    tags: tagsOf(reservation.Tags),
  });
}

export interface SdkInstanceTypeOffering {
  readonly InstanceType?: string | undefined;
  readonly LocationType?: string | undefined;
  readonly Location?: string | undefined;
}

/** An availability-zone offering; undefined for rows of another location type or without a name. */
export function instanceTypeOfferingFromSdk(
  offering: SdkInstanceTypeOffering
): InstanceTypeOffering | undefined {
  if (offering.InstanceType === undefined || offering.Location === undefined) return undefined;
  if (offering.LocationType !== undefined && offering.LocationType !== 'availability-zone') {
    return undefined;
  }
  return { instanceType: offering.InstanceType, zone: offering.Location };
}

type Maybe<T> = T | undefined;

/** `InstanceTypeInfo` as the SDK returns it and world files record it: the fields read. */
export interface SdkInstanceTypeInfo {
  readonly InstanceType?: Maybe<string>;
  readonly ProcessorInfo?: Maybe<{
    readonly SupportedArchitectures?: Maybe<readonly string[]>;
    readonly Manufacturer?: Maybe<string>;
    readonly SustainedClockSpeedInGhz?: Maybe<number>;
  }>;
  readonly SupportedVirtualizationTypes?: Maybe<readonly string[]>;
  readonly VCpuInfo?: Maybe<{ readonly DefaultVCpus?: Maybe<number> }>;
  readonly MemoryInfo?: Maybe<{ readonly SizeInMiB?: Maybe<number> }>;
  readonly Hypervisor?: Maybe<string>;
  readonly BareMetal?: Maybe<boolean>;
  readonly SupportedUsageClasses?: Maybe<readonly string[]>;
  readonly GpuInfo?: Maybe<{
    readonly Gpus?: Maybe<
      readonly {
        readonly Name?: Maybe<string>;
        readonly Manufacturer?: Maybe<string>;
        readonly Count?: Maybe<number>;
        readonly MemoryInfo?: Maybe<{ readonly SizeInMiB?: Maybe<number> }>;
      }[]
    >;
  }>;
  readonly InferenceAcceleratorInfo?: Maybe<{
    readonly Accelerators?: Maybe<
      readonly {
        readonly Name?: Maybe<string>;
        readonly Manufacturer?: Maybe<string>;
        readonly Count?: Maybe<number>;
      }[]
    >;
  }>;
  readonly NeuronInfo?: Maybe<{
    readonly NeuronDevices?: Maybe<
      readonly {
        readonly Name?: Maybe<string>;
        readonly Count?: Maybe<number>;
        readonly CoreInfo?: Maybe<{ readonly Count?: Maybe<number> }>;
      }[]
    >;
  }>;
  readonly NetworkInfo?: Maybe<{
    readonly DefaultNetworkCardIndex?: Maybe<number>;
    readonly NetworkCards?: Maybe<
      readonly {
        readonly NetworkCardIndex?: Maybe<number>;
        readonly MaximumNetworkInterfaces?: Maybe<number>;
      }[]
    >;
    readonly MaximumNetworkInterfaces?: Maybe<number>;
    readonly Ipv4AddressesPerInterface?: Maybe<number>;
    readonly EfaInfo?: Maybe<{ readonly MaximumEfaInterfaces?: Maybe<number> }>;
    readonly EncryptionInTransitSupported?: Maybe<boolean>;
    readonly EnaSupport?: Maybe<string>;
  }>;
  readonly InstanceStorageInfo?: Maybe<{
    readonly TotalSizeInGB?: Maybe<number>;
    readonly NvmeSupport?: Maybe<string>;
  }>;
  readonly EbsInfo?: Maybe<{
    readonly EbsOptimizedSupport?: Maybe<string>;
    readonly EbsOptimizedInfo?: Maybe<{ readonly MaximumBandwidthInMbps?: Maybe<number> }>;
  }>;
}

/** An instance type; undefined without a name. */
export function instanceTypeFromSdk(info: SdkInstanceTypeInfo): InstanceTypeInfo | undefined {
  if (info.InstanceType === undefined || info.InstanceType === '') return undefined;
  const network = info.NetworkInfo;
  const storage = info.InstanceStorageInfo;
  const ebs = info.EbsInfo;
  return defined({
    instanceType: info.InstanceType,
    architectures: [...(info.ProcessorInfo?.SupportedArchitectures ?? [])],
    virtualizationTypes: [...(info.SupportedVirtualizationTypes ?? [])],
    cpuManufacturer: info.ProcessorInfo?.Manufacturer,
    sustainedClockSpeedGhz: info.ProcessorInfo?.SustainedClockSpeedInGhz,
    vcpus: info.VCpuInfo?.DefaultVCpus,
    memoryMiB: info.MemoryInfo?.SizeInMiB,
    hypervisor: info.Hypervisor,
    bareMetal: info.BareMetal,
    usageClasses: [...(info.SupportedUsageClasses ?? [])],
    gpus: (info.GpuInfo?.Gpus ?? []).map((gpu) =>
      defined({
        name: gpu.Name,
        manufacturer: gpu.Manufacturer,
        count: gpu.Count,
        memoryMiB: gpu.MemoryInfo?.SizeInMiB,
      })
    ),
    inferenceAccelerators: (info.InferenceAcceleratorInfo?.Accelerators ?? []).map((accelerator) =>
      defined({
        name: accelerator.Name,
        manufacturer: accelerator.Manufacturer,
        count: accelerator.Count,
      })
    ),
    neuronDevices:
      info.NeuronInfo === undefined
        ? undefined
        : (info.NeuronInfo.NeuronDevices ?? []).map((device) =>
            defined({ name: device.Name, count: device.Count, coreCount: device.CoreInfo?.Count })
          ),
    network: defined({
      defaultNetworkCardIndex: network?.DefaultNetworkCardIndex,
      networkCards: (network?.NetworkCards ?? []).map((card) =>
        defined({
          index: card.NetworkCardIndex,
          maximumNetworkInterfaces: card.MaximumNetworkInterfaces,
        })
      ),
      maximumNetworkInterfaces: network?.MaximumNetworkInterfaces,
      ipv4AddressesPerInterface: network?.Ipv4AddressesPerInterface,
      efaMaximumInterfaces: network?.EfaInfo?.MaximumEfaInterfaces,
      encryptionInTransitSupported: network?.EncryptionInTransitSupported,
      enaSupport: network?.EnaSupport,
    }),
    instanceStorage:
      storage === undefined
        ? undefined
        : defined({ totalSizeGB: storage.TotalSizeInGB, nvmeSupport: storage.NvmeSupport }),
    ebs:
      ebs === undefined
        ? undefined
        : defined({
            optimizedSupport: ebs.EbsOptimizedSupport,
            maximumBandwidthMbps: ebs.EbsOptimizedInfo?.MaximumBandwidthInMbps,
          }),
  });
}

/** IAM returns policy documents URL-encoded (RFC 3986); recorded files may hold plain JSON. */
function decodePolicyDocument(document: string | undefined): string | undefined {
  if (document === undefined) return undefined;
  if (document.trimStart().startsWith('{')) return document;
  try {
    return decodeURIComponent(document);
  } catch {
    return document;
  }
}

export interface SdkRole {
  readonly RoleName?: string | undefined;
  readonly Arn?: string | undefined;
  readonly Path?: string | undefined;
  readonly AssumeRolePolicyDocument?: string | undefined;
  readonly PermissionsBoundary?:
    | { readonly PermissionsBoundaryArn?: string | undefined }
    | undefined;
}

export interface SdkAttachedPolicy {
  readonly PolicyArn?: string | undefined;
}

export function roleFromSdk(role: SdkRole, attached: readonly SdkAttachedPolicy[]): Role {
  return defined({
    name: role.RoleName ?? '',
    arn: role.Arn ?? '',
    path: role.Path,
    assumeRolePolicyDocument: decodePolicyDocument(role.AssumeRolePolicyDocument),
    permissionsBoundaryArn: role.PermissionsBoundary?.PermissionsBoundaryArn,
    attachedPolicyArns: attached
      .map((policy) => policy.PolicyArn)
      .filter((arn): arn is string => arn !== undefined),
  });
}

export interface SdkInstanceProfile {
  readonly InstanceProfileName?: string | undefined;
  readonly Arn?: string | undefined;
  readonly Path?: string | undefined;
  readonly Roles?: readonly { readonly RoleName?: string | undefined }[] | undefined;
}

export function instanceProfileFromSdk(profile: SdkInstanceProfile): InstanceProfile {
  return defined({
    name: profile.InstanceProfileName ?? '',
    arn: profile.Arn ?? '',
    path: profile.Path,
    roleNames: (profile.Roles ?? [])
      .map((role) => role.RoleName)
      .filter((name): name is string => name !== undefined),
  });
}

export interface SdkKeyMetadata {
  readonly KeyId?: string | undefined;
  readonly Arn?: string | undefined;
  readonly KeyState?: string | undefined;
  readonly KeyManager?: string | undefined;
  readonly KeyUsage?: string | undefined;
  readonly KeySpec?: string | undefined;
  readonly DeletionDate?: string | Date | undefined;
}

export function kmsKeyFromSdk(metadata: SdkKeyMetadata): KmsKey {
  return defined({
    keyId: metadata.KeyId ?? '',
    arn: metadata.Arn ?? '',
    // DescribeKey always reports a state; a record without one says nothing usable.
    state: metadata.KeyState ?? 'Unknown',
    manager: metadata.KeyManager,
    usage: metadata.KeyUsage,
    spec: metadata.KeySpec,
    deletionDate: isoOf(metadata.DeletionDate),
  });
}

export interface SdkGrant {
  readonly GrantId?: string | undefined;
  readonly GranteePrincipal?: string | undefined;
  readonly Operations?: readonly string[] | undefined;
  readonly Constraints?: object | undefined;
}

export function kmsGrantFromSdk(grant: SdkGrant): KmsGrant {
  const constraints = Object.entries((grant.Constraints ?? {}) as Record<string, unknown>).filter(
    ([, value]) => value !== undefined
  );
  return defined({
    grantId: grant.GrantId,
    granteePrincipal: grant.GranteePrincipal,
    operations: [...(grant.Operations ?? [])],
    constrained: constraints.length > 0,
    constraints:
      constraints.length === 0
        ? undefined
        : constraints.map(([name, value]) => `${name} ${JSON.stringify(value)}`).join('; '),
  });
}
