import { describe, expect, it } from 'vitest';
import {
  IMDS_IPV6_UNSUPPORTED_REGIONS,
  isIsoRegion,
  isRegionName,
  KNOWN_REGIONS,
  partitionDnsSuffix,
  partitionOf,
  regionProblem,
} from '../../lambda/core/region.js';

describe('partitionOf', () => {
  it.each([
    ['us-east-1', 'aws'],
    ['eu-west-3', 'aws'],
    ['ap-southeast-7', 'aws'],
    ['cn-north-1', 'aws-cn'],
    ['cn-northwest-1', 'aws-cn'],
    ['us-gov-west-1', 'aws-us-gov'],
    ['us-gov-east-1', 'aws-us-gov'],
    ['us-iso-east-1', 'aws-iso'],
    ['us-iso-west-1', 'aws-iso'],
    ['us-isob-east-1', 'aws-iso-b'],
    ['us-isob-west-1', 'aws-iso-b'],
    ['eu-isoe-west-1', 'aws-iso-e'],
    ['us-isof-south-1', 'aws-iso-f'],
    ['us-isof-east-1', 'aws-iso-f'],
    ['eusc-de-east-1', 'aws-eusc'],
  ])('%s is in %s', (region, partition) => {
    expect(partitionOf(region)).toBe(partition);
  });
});

describe('partitionDnsSuffix', () => {
  it.each([
    ['aws', 'amazonaws.com'],
    ['aws-us-gov', 'amazonaws.com'],
    ['aws-cn', 'amazonaws.com.cn'],
    ['aws-iso', 'c2s.ic.gov'],
    ['aws-iso-b', 'sc2s.sgov.gov'],
    ['aws-iso-e', 'cloud.adc-e.uk'],
    ['aws-iso-f', 'csp.hci.ic.gov'],
    ['aws-eusc', 'amazonaws.eu'],
  ] as const)('%s → %s', (partition, suffix) => {
    expect(partitionDnsSuffix(partition)).toBe(suffix);
  });
});

describe('ISO regions', () => {
  it('lists exactly the regions Karpenter strips httpProtocolIPv6 in (v1.9.0+)', () => {
    expect([...IMDS_IPV6_UNSUPPORTED_REGIONS].sort()).toEqual(
      [
        'us-iso-east-1',
        'us-iso-west-1',
        'us-isob-east-1',
        'us-isob-west-1',
        'us-isof-east-1',
        'us-isof-south-1',
      ].sort()
    );
    expect(IMDS_IPV6_UNSUPPORTED_REGIONS).not.toContain('eu-isoe-west-1');
  });

  it.each([
    ['us-iso-east-1', true],
    ['us-isob-west-1', true],
    ['eu-isoe-west-1', true],
    ['us-isof-south-1', true],
    ['us-gov-west-1', false],
    ['us-east-1', false],
    ['eusc-de-east-1', false],
  ])('isIsoRegion(%s) = %s', (region, expected) => {
    expect(isIsoRegion(region)).toBe(expected);
  });
});

describe('isRegionName', () => {
  it.each([
    'us-east-1',
    'ap-southeast-7',
    'us-gov-west-1',
    'us-isob-east-1',
    'eu-isoe-west-1',
    'eusc-de-east-1',
    'cn-northwest-1',
  ])('accepts %s', (region) => {
    expect(isRegionName(region)).toBe(true);
  });

  it.each(['', 'us-east', 'US-EAST-1', 'useast1', 'us-east-1a', 'iso-east', 'us_east_1'])(
    'rejects %s',
    (value) => {
      expect(isRegionName(value)).toBe(false);
    }
  );
});

describe('regionProblem (every place that takes a region)', () => {
  it('accepts every known region, of every partition, and a new one of the same shape', () => {
    for (const region of [...KNOWN_REGIONS, 'ap-southeast-9', 'eusc-de-east-2']) {
      expect(regionProblem(region), region).toBeUndefined();
    }
  });

  it('refuses a geography that is no AWS one', () => {
    expect(regionProblem('mars-east-1')).toMatch(/^"mars-east-1" is not an AWS region name/);
  });

  it.each([
    ['us-iso-east1', 'us-iso-east-1'],
    ['eu-west', 'eu-west-1'],
    ['eusc-de-east1', 'eusc-de-east-1'],
    ['mars-1', undefined],
    ['', undefined],
  ])('refuses %s, suggesting %s', (value, suggestion) => {
    const problem = regionProblem(value);
    expect(problem).toContain(`"${value}" is not an AWS region name`);
    if (suggestion === undefined) expect(problem).not.toContain('did you mean');
    else expect(problem).toContain(`(did you mean "${suggestion}"?)`);
  });
});
