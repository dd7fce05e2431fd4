// AWS facts as core types. Adapters (live SDK or world file) translate SDK shapes into these;
// checks never see SDK types. Tags are plain maps.
import type { FilterQuery, ImageQuery } from './queries.js';
import type { Slice } from './slice.js';

export type Tags = Readonly<Record<string, string>>;

export type { Ec2Filter } from './queries.js';

export interface Image {
  readonly id: string;
  readonly name?: string;
  readonly ownerId?: string;
  readonly ownerAlias?: string;
  /** `available | pending | failed | deregistered | disabled | …` */
  readonly state: string;
  readonly architecture?: string;
  readonly creationDate?: string;
  readonly deprecationTime?: string;
  /** `ImageAllowed` from DescribeImages (account "Allowed AMIs" setting); undefined when not reported. */
  readonly imageAllowed?: boolean;
  readonly rootDeviceName?: string;
  /** Size in GiB of the root device's snapshot, when known. */
  readonly rootVolumeSizeGiB?: number;
  readonly tags: Tags;
}

export interface Subnet {
  readonly id: string;
  readonly vpcId?: string;
  readonly availabilityZone?: string;
  readonly availabilityZoneId?: string;
  readonly availableIpAddressCount?: number;
  readonly tags: Tags;
}

export interface SecurityGroup {
  readonly id: string;
  readonly name?: string;
  readonly vpcId?: string;
  readonly tags: Tags;
}

export interface CapacityReservation {
  readonly id: string;
  readonly ownerId?: string;
  readonly state?: string;
  readonly instanceType?: string;
  readonly availabilityZone?: string;
  readonly instanceMatchCriteria?: string;
  readonly endDate?: string;
  readonly reservationType?: string;
  /** Instances that can still launch into it (`AvailableInstanceCount`). */
  readonly availableInstanceCount?: number;
  readonly totalInstanceCount?: number;
  /** Whether EC2 may reclaim it (interruptible capacity reservations). */
  readonly interruptible?: boolean;
  readonly tags: Tags;
}

/** One `DescribeInstanceTypeOfferings` row with location type `availability-zone`. */
export interface InstanceTypeOffering {
  readonly instanceType: string;
  /** Zone name (`us-east-1a`). */
  readonly zone: string;
}

/** A GPU of an instance type (`GpuInfo.Gpus[]`). */
export interface InstanceTypeGpu {
  readonly name?: string;
  readonly manufacturer?: string;
  readonly count?: number;
  readonly memoryMiB?: number;
}

/** An inference accelerator (`InferenceAcceleratorInfo.Accelerators[]`). */
export interface InstanceTypeAccelerator {
  readonly name?: string;
  readonly manufacturer?: string;
  readonly count?: number;
}

/** An AWS Neuron device (`NeuronInfo.NeuronDevices[]`). */
export interface InstanceTypeNeuronDevice {
  readonly name?: string;
  readonly count?: number;
  /** Neuron cores per device (`CoreInfo.Count`). */
  readonly coreCount?: number;
}

/** `NetworkInfo`: what max pods and the EFA capacity are computed from. */
export interface InstanceTypeNetwork {
  /** Index into `networkCards` of the card the VPC CNI uses. */
  readonly defaultNetworkCardIndex?: number;
  /** `NetworkCards[]`, in EC2's order: each card's `MaximumNetworkInterfaces`. */
  readonly networkCards: readonly {
    readonly index?: number;
    readonly maximumNetworkInterfaces?: number;
  }[];
  readonly maximumNetworkInterfaces?: number;
  readonly ipv4AddressesPerInterface?: number;
  readonly efaMaximumInterfaces?: number;
  readonly encryptionInTransitSupported?: boolean;
  /** `unsupported | supported | required` */
  readonly enaSupport?: string;
}

/**
 * One `DescribeInstanceTypes` entry (`InstanceTypeInfo`): the fields Karpenter derives its labels,
 * capacity and overhead from (pkg/providers/instancetype/types.go).
 */
export interface InstanceTypeInfo {
  readonly instanceType: string;
  /** `ProcessorInfo.SupportedArchitectures`, in EC2's order (`x86_64`, `arm64`, `i386`…). */
  readonly architectures: readonly string[];
  /** `SupportedVirtualizationTypes` (`hvm`, `paravirtual`). */
  readonly virtualizationTypes: readonly string[];
  readonly cpuManufacturer?: string;
  readonly sustainedClockSpeedGhz?: number;
  /** `VCpuInfo.DefaultVCpus`. */
  readonly vcpus?: number;
  readonly memoryMiB?: number;
  /** `nitro | xen` */
  readonly hypervisor?: string;
  readonly bareMetal?: boolean;
  /** `SupportedUsageClasses`: `on-demand`, `spot`, `capacity-block`. */
  readonly usageClasses: readonly string[];
  readonly gpus: readonly InstanceTypeGpu[];
  readonly inferenceAccelerators: readonly InstanceTypeAccelerator[];
  /** Undefined when the type has no `NeuronInfo`. */
  readonly neuronDevices?: readonly InstanceTypeNeuronDevice[];
  readonly network: InstanceTypeNetwork;
  /** `InstanceStorageInfo`: local disks. */
  readonly instanceStorage?: {
    readonly totalSizeGB?: number;
    /** `unsupported | supported | required` */
    readonly nvmeSupport?: string;
  };
  /** `EbsInfo`: `default | supported | unsupported` and the optimized bandwidth. */
  readonly ebs?: {
    readonly optimizedSupport?: string;
    readonly maximumBandwidthMbps?: number;
  };
}

export interface Role {
  readonly name: string;
  readonly arn: string;
  readonly path?: string;
  /** Trust policy document as JSON text (already URL-decoded). */
  readonly assumeRolePolicyDocument?: string;
  readonly permissionsBoundaryArn?: string;
  readonly attachedPolicyArns: readonly string[];
}

export interface InstanceProfile {
  readonly name: string;
  readonly arn: string;
  readonly path?: string;
  /** Names of the roles in the profile (IAM allows at most one). */
  readonly roleNames: readonly string[];
}

export interface AccessEntry {
  readonly principalArn: string;
  /** `STANDARD | EC2_LINUX | EC2_WINDOWS | FARGATE_LINUX | …` */
  readonly type?: string;
  readonly kubernetesGroups: readonly string[];
}

/** `aws-auth` ConfigMap `mapRoles` entry (CONFIG_MAP authentication modes). */
export interface AwsAuthRoleMapping {
  readonly roleArn: string;
  readonly groups: readonly string[];
}

/** Facts about one cluster from the EKS API (DescribeCluster, access entries) and aws-auth. */
export interface AwsClusterFacts {
  readonly accountId?: string;
  readonly arn?: string;
  readonly kubernetesVersion?: string;
  readonly endpoint?: string;
  readonly vpcId?: string;
  /** `API | API_AND_CONFIG_MAP | CONFIG_MAP` */
  readonly authenticationMode?: string;
  readonly accessEntries?: Slice<readonly AccessEntry[]>;
  readonly awsAuthRoleMappings?: Slice<readonly AwsAuthRoleMapping[]>;
}

/** Architectures Karpenter resolves AMIs for; images of any other architecture are ignored. */
export type ImageArchitecture = 'x86_64' | 'arm64';

/** EKS-optimized AMI variants an alias resolves (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/amifamily/ami.go). */
export type AmiVariant = 'standard' | 'nvidia' | 'neuron';

/** An image Karpenter selects: one per architecture (per architecture and variant for aliases). */
export interface SelectedImage {
  readonly image: Image;
  readonly architecture: ImageArchitecture;
  /** Set for alias-resolved images (the SSM parameter says which variant the id stands for). */
  readonly variant?: AmiVariant;
  /** `DeprecationTime <= now` at scan time; kept only when no non-deprecated image exists. */
  readonly deprecated: boolean;
}

export interface ImageQueryResult {
  readonly query: ImageQuery;
  /** Indexes into `spec.amiSelectorTerms` answered by this query (ids are batched into one). */
  readonly termIndexes: readonly number[];
  readonly images: readonly Image[];
  /** The winners among this query's images alone (names the term behind a finding). */
  readonly selected: readonly SelectedImage[];
}

/** Karpenter's selection over all queries of one NodeClass. */
export interface ImageSelection {
  readonly queries: readonly ImageQueryResult[];
  /** Distinct images returned by all queries (any architecture). */
  readonly matchCount: number;
  /** The winners, newest first. Empty: Karpenter reports `AMINotFound`. */
  readonly selected: readonly SelectedImage[];
}

/** One SSM GetParameter lookup: the value, `undefined` for ParameterNotFound, or unavailable. */
export interface SsmParameterLookup {
  readonly name: string;
  readonly value: Slice<string | undefined>;
}

export interface AliasParameterLookup extends SsmParameterLookup {
  readonly architecture: ImageArchitecture;
  /** Variants the image id stands for (the AL2 GPU AMI serves both nvidia and neuron). */
  readonly variants: readonly AmiVariant[];
}

export interface AliasResolution {
  /** The alias as written (`al2023@latest`). */
  readonly alias: string;
  /** Lower-case family (`al2023`, `al2`, `bottlerocket`, `windows2019`…). */
  readonly family: string;
  readonly version: string;
  readonly kubernetesVersion: string;
  /** Karpenter's `UnsupportedAlias` message when it refuses the alias for this Kubernetes version. */
  readonly unsupported?: string;
  /** Every parameter Karpenter reads, in its order; missing ones are skipped by Karpenter. */
  readonly parameters: readonly AliasParameterLookup[];
}

export interface SsmParameterTermLookup extends SsmParameterLookup {
  readonly termIndex: number;
}

export interface AmiFacts {
  readonly alias?: AliasResolution;
  /** Custom `ssmParameter` terms, in term order. */
  readonly ssmParameters: readonly SsmParameterTermLookup[];
  /** Karpenter's queries (`state=available`): what current Karpenter selects. */
  readonly available: Slice<ImageSelection>;
  /** The same queries without the state filter: what Karpenter < v1.2.2 selects (#7652). */
  readonly ignoringState: Slice<ImageSelection>;
}

export interface SubnetFacts {
  readonly queries: readonly FilterQuery[];
  /** Matched subnets, most free IPs first, then id (Karpenter's status order). */
  readonly subnets: readonly Subnet[];
}

export interface SecurityGroupFacts {
  readonly queries: readonly FilterQuery[];
  /** Matched security groups, by id. */
  readonly securityGroups: readonly SecurityGroup[];
}

export interface CapacityReservationFacts {
  readonly queries: readonly FilterQuery[];
  /** `state=active` reservations matched by the terms (end date not yet applied). */
  readonly reservations: readonly CapacityReservation[];
}

export interface InstanceTypeOfferingFacts {
  /** Every instance type offered in every zone of the region (one query per region). */
  readonly offerings: readonly InstanceTypeOffering[];
}

export interface InstanceTypeFacts {
  /** Every instance type Karpenter lists in the region (one paged query per region). */
  readonly types: readonly InstanceTypeInfo[];
}

export interface InstanceProfileFacts {
  /** The name looked up (the bare name when spec.instanceProfile is an ARN or path). */
  readonly name: string;
  /** Undefined: the profile does not exist. */
  readonly profile?: InstanceProfile;
}

export interface NodeRoleFacts {
  readonly source: 'spec.role' | 'instance-profile';
  /** Undefined when the instance profile does not exist or holds no role. */
  readonly name?: string;
  /** Undefined when there is no name, or the role does not exist. */
  readonly role?: Role;
}

/** `KeyMetadata` of KMS DescribeKey: what decides whether EC2 can use the key at launch. */
export interface KmsKey {
  readonly keyId: string;
  readonly arn: string;
  /** `Enabled | Disabled | PendingDeletion | PendingImport | PendingReplicaDeletion | Unavailable | Creating | Updating` */
  readonly state: string;
  /** `AWS` (AWS managed, such as alias/aws/ebs) or `CUSTOMER`. */
  readonly manager?: string;
  /** `ENCRYPT_DECRYPT`, `SIGN_VERIFY`, … (EBS needs ENCRYPT_DECRYPT). */
  readonly usage?: string;
  /** `SYMMETRIC_DEFAULT`, `RSA_2048`, … (EBS needs a symmetric key). */
  readonly spec?: string;
  readonly deletionDate?: string;
}

/** One KMS grant (ListGrants): it lets its grantee use the key whatever the key policy says. */
export interface KmsGrant {
  readonly grantId?: string;
  readonly granteePrincipal?: string;
  /** `Decrypt`, `CreateGrant`, `GenerateDataKeyWithoutPlaintext`, … */
  readonly operations: readonly string[];
  /** The grant applies only to requests with this encryption context (never EC2's launch in general). */
  readonly constrained: boolean;
  /** The constraint as ListGrants reports it (`EncryptionContextSubset {"aws:ebs:id":"vol-1"}`), when constrained. */
  readonly constraints?: string;
}

/**
 * A key as one reference (key id, key ARN, alias name or alias ARN) resolves: its metadata, and
 * for customer managed keys its policy (`default`) and grants, each unavailable when the scanner
 * may not read them.
 */
export interface KmsKeyLookup {
  readonly key: KmsKey;
  /** The key policy JSON. Absent for AWS managed keys (never needed: every account principal may use them through EC2). */
  readonly policy?: Slice<string>;
  readonly grants?: Slice<readonly KmsGrant[]>;
}

/** The account's EBS encryption settings in the region (GetEbsEncryptionByDefault, GetEbsDefaultKmsKeyId). */
export interface EbsEncryptionDefaults {
  readonly encryptedByDefault: boolean;
  /** The key EC2 uses when a volume is encrypted without a key: an ARN (alias/aws/ebs unless changed). */
  readonly defaultKmsKeyId: string;
}

/** One KMS key reference a NodeClass's volumes use, as read. */
export interface EbsKeyReadout {
  /** As written in `kmsKeyID`, or the account default's id. */
  readonly reference: string;
  /** Undefined: no such key (NotFoundException). */
  readonly lookup: Slice<KmsKeyLookup | undefined>;
}

/** What a NodeClass's EBS encryption depends on in the account. */
export interface EbsKeyFacts {
  /** Absent when the source does not record them (a world file without `kms.ebsEncryptionDefaults`). */
  readonly defaults?: Slice<EbsEncryptionDefaults>;
  /** Every key reference the class's volumes may use, each read once per scan. */
  readonly keys: readonly EbsKeyReadout[];
}

/**
 * Facts resolved for one NodeClass. Each field is a Slice: `unavailable` with the reason when the
 * source could not be read. Absent fields were not collected.
 */
export interface AwsNodeClassFacts {
  /** Unavailable only when resolution cannot start (alias without a known Kubernetes version). */
  readonly amis?: Slice<AmiFacts>;
  readonly subnets?: Slice<SubnetFacts>;
  readonly securityGroups?: Slice<SecurityGroupFacts>;
  /** Absent when the NodeClass has no capacityReservationSelectorTerms. */
  readonly capacityReservations?: Slice<CapacityReservationFacts>;
  /**
   * Absent unless a NodePool launches through this NodeClass, or when the source does not record
   * offerings (a world file without an `instanceTypeOfferings` section for its region).
   */
  readonly instanceTypeOfferings?: Slice<InstanceTypeOfferingFacts>;
  /**
   * The region's instance types (DescribeInstanceTypes). Absent unless a NodePool launches
   * through this NodeClass, or when the source does not record them (a world file without an
   * `instanceTypes` section for its region).
   */
  readonly instanceTypes?: Slice<InstanceTypeFacts>;
  /** Absent in role mode (Karpenter manages the profile). */
  readonly instanceProfile?: Slice<InstanceProfileFacts>;
  readonly nodeRole?: Slice<NodeRoleFacts>;
  /** The KMS keys its EBS volumes are encrypted with; absent when the source reads none. */
  readonly ebsKeys?: Slice<EbsKeyFacts>;
}
