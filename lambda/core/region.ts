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

// Two-letter geography (`us-east-1`) or a longer one (`eusc-de-east-1`, European Sovereign Cloud).
const REGION_PATTERN = /^[a-z]{2,4}(-[a-z]+)+-\d+$/;

export function isRegionName(value: string): boolean {
  return REGION_PATTERN.test(value);
}
