// AWS facts as core types. Adapters (live SDK or world file) translate SDK shapes into these;
// checks never see SDK types. Tags are plain maps.
import type { Slice } from './slice.js';

export type Tags = Readonly<Record<string, string>>;

/** An EC2 filter, as DescribeImages/DescribeSubnets/… take it. */
export interface Ec2Filter {
  readonly name: string;
  readonly values: readonly string[];
}

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
  readonly tags: Tags;
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

/**
 * Facts resolved for one NodeClass by the AWS-backed checks issue (extend as needed). Each field is
 * a Slice: `unavailable` with the reason when the source could not be read.
 */
export interface AwsNodeClassFacts {
  readonly amis?: Slice<unknown>;
}
