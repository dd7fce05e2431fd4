import { nearest } from './suggest.js';

export type Partition =
  | 'aws'
  | 'aws-cn'
  | 'aws-us-gov'
  | 'aws-iso'
  | 'aws-iso-b'
  | 'aws-iso-e'
  | 'aws-iso-f'
  | 'aws-eusc';

/**
 * Regions where EC2 rejects `HttpProtocolIpv6` in metadata options. Karpenter v1.7.0+ omits the
 * field there (#8404); `eu-isoe-west-1` was dropped from Karpenter's list in v1.9.0 (#8631).
 */
export const IMDS_IPV6_UNSUPPORTED_REGIONS: readonly string[] = [
  'us-iso-east-1',
  'us-iso-west-1',
  'us-isob-east-1',
  'us-isob-west-1',
  'us-isof-south-1',
  'us-isof-east-1',
];

const PARTITION_PREFIXES: readonly (readonly [string, Partition])[] = [
  ['us-isob-', 'aws-iso-b'],
  ['us-isof-', 'aws-iso-f'],
  ['eu-isoe-', 'aws-iso-e'],
  ['us-iso-', 'aws-iso'],
  ['us-gov-', 'aws-us-gov'],
  ['cn-', 'aws-cn'],
  ['eusc-', 'aws-eusc'],
];

export function partitionOf(region: string): Partition {
  for (const [prefix, partition] of PARTITION_PREFIXES) {
    if (region.startsWith(prefix)) return partition;
  }
  return 'aws';
}

/** DNS suffix of service endpoints and service principals in a partition. */
export function partitionDnsSuffix(partition: Partition): string {
  switch (partition) {
    case 'aws-cn':
      return 'amazonaws.com.cn';
    case 'aws-iso':
      return 'c2s.ic.gov';
    case 'aws-iso-b':
      return 'sc2s.sgov.gov';
    case 'aws-iso-e':
      return 'cloud.adc-e.uk';
    case 'aws-iso-f':
      return 'csp.hci.ic.gov';
    case 'aws-eusc':
      return 'amazonaws.eu';
    default:
      return 'amazonaws.com';
  }
}

export function isIsoRegion(region: string): boolean {
  return partitionOf(region).startsWith('aws-iso');
}

/**
 * Regions AWS lists today, by partition, for "did you mean". A name not listed is still accepted
 * when it has a region's shape (new regions open every year); see `regionProblem`.
 * https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html
 */
export const KNOWN_REGIONS: readonly string[] = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'af-south-1',
  'ap-east-1',
  'ap-east-2',
  'ap-south-1',
  'ap-south-2',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ca-central-1',
  'ca-west-1',
  'eu-central-1',
  'eu-central-2',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-south-1',
  'eu-south-2',
  'eu-north-1',
  'il-central-1',
  'me-south-1',
  'me-central-1',
  'mx-central-1',
  'sa-east-1',
  'cn-north-1',
  'cn-northwest-1',
  'us-gov-east-1',
  'us-gov-west-1',
  'us-iso-east-1',
  'us-iso-west-1',
  'us-isob-east-1',
  'us-isob-west-1',
  'us-isof-south-1',
  'us-isof-east-1',
  'eu-isoe-west-1',
  'eusc-de-east-1',
];

// A two-letter geography (`us-`, or `eusc-` for the European Sovereign Cloud), optional
// partition or country parts (`gov`, `iso`, `isob`, `de`), a compass direction and a number.
const REGION_PATTERN =
  /^(?:[a-z]{2}|eusc)-(?:[a-z]+-)*(?:north|south|east|west|central|northeast|northwest|southeast|southwest)-\d+$/;

/** A region name of any partition: every place that takes a region uses this (or regionProblem). */
export function isRegionName(value: string): boolean {
  return REGION_PATTERN.test(value);
}

/**
 * Why `value` is not a usable region, with the nearest known region when it looks like a typo
 * (`us-iso-east1` → us-iso-east-1); undefined for a region name.
 */
export function regionProblem(value: string): string | undefined {
  if (isRegionName(value)) return undefined;
  const near = nearest(value.toLowerCase(), KNOWN_REGIONS);
  return (
    `"${value}" is not an AWS region name such as eu-west-1` +
    (near === undefined ? '' : ` (did you mean "${near}"?)`)
  );
}
