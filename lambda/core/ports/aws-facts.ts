import type {
  CapacityReservation,
  EbsEncryptionDefaults,
  Image,
  InstanceProfile,
  InstanceTypeInfo,
  InstanceTypeOffering,
  KmsKeyLookup,
  Role,
  SecurityGroup,
  Subnet,
} from '../facts/aws.js';
import type { FilterQuery, ImageQuery } from '../facts/queries.js';

export type { FilterQuery, ImageQuery } from '../facts/queries.js';

/**
 * Port: the AWS facts the scanner reads. Implemented by the live SDK adapter and by the offline
 * world-file adapter, with the same semantics. Methods throw `SourceUnavailableError` (reason
 * `access-denied`, `throttled`, …) when the source cannot be read; "not found" is a value.
 */
/** Names per `getParameters` call: GetParameters accepts at most 10 names per request. */
export const PARAMETERS_PER_REQUEST = 10;

export interface AwsFactsPort {
  /** DescribeImages, all pages. */
  describeImages(query: ImageQuery): Promise<readonly Image[]>;
  describeSubnets(query: FilterQuery): Promise<readonly Subnet[]>;
  describeSecurityGroups(query: FilterQuery): Promise<readonly SecurityGroup[]>;
  describeCapacityReservations(query: FilterQuery): Promise<readonly CapacityReservation[]>;
  /**
   * DescribeInstanceTypeOfferings (location type `availability-zone`), all pages: every offering
   * of the port's region. Undefined when the source does not record offerings (world files only).
   */
  describeInstanceTypeOfferings(): Promise<readonly InstanceTypeOffering[] | undefined>;
  /**
   * DescribeInstanceTypes with Karpenter's filters (HVM; x86_64 or arm64), all pages: every
   * instance type Karpenter considers in the port's region. Undefined when the source does not
   * record them (world files only).
   */
  describeInstanceTypes(): Promise<readonly InstanceTypeInfo[] | undefined>;
  /** SSM GetParameter value; undefined for ParameterNotFound. */
  getParameter(name: string): Promise<string | undefined>;
  /**
   * Several SSM values at once (GetParameters, 10 names a request): each name's value exactly as
   * `getParameter` would answer it. Optional: without it, names are read one by one.
   */
  getParameters?(names: readonly string[]): Promise<ReadonlyMap<string, string | undefined>>;
  /** IAM GetInstanceProfile; undefined for NoSuchEntity. */
  getInstanceProfile(name: string): Promise<InstanceProfile | undefined>;
  /** IAM GetRole + ListAttachedRolePolicies; undefined for NoSuchEntity. */
  getRole(name: string): Promise<Role | undefined>;
  /**
   * EC2 GetEbsEncryptionByDefault + GetEbsDefaultKmsKeyId of the port's region. Undefined when the
   * source does not record them (world files only). Optional: a port without it reads no EBS
   * encryption facts.
   */
  getEbsEncryptionDefaults?(): Promise<EbsEncryptionDefaults | undefined>;
  /**
   * KMS DescribeKey of a key id, key ARN, alias name or alias ARN, then GetKeyPolicy and ListGrants
   * of a customer managed key (each unavailable on its own when it cannot be read). Undefined for
   * NotFoundException. Optional, like `getEbsEncryptionDefaults`.
   */
  describeKmsKey?(reference: string): Promise<KmsKeyLookup | undefined>;
}
