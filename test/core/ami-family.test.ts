import { describe, expect, it } from 'vitest';
import {
  aliasAmiFamily,
  defaultRootDevices,
  effectiveAmiFamily,
  splitAlias,
} from '../../lambda/core/ami-family.js';
import type { EC2NodeClassSpec } from '../../lambda/core/schema.js';

function spec(fields: Partial<EC2NodeClassSpec>): EC2NodeClassSpec {
  return {
    subnetSelectorTerms: [],
    securityGroupSelectorTerms: [],
    amiSelectorTerms: [],
    ...fields,
  };
}

describe('AMI families', () => {
  it.each([
    ['al2023@v20251001', { family: 'al2023', version: 'v20251001' }],
    ['windows2022@latest', { family: 'windows2022', version: 'latest' }],
    ['al2023', { family: 'al2023' }],
    ['@x', { family: '', version: 'x' }],
  ])('splits %s as the CRD does', (alias, expected) => {
    expect(splitAlias(alias)).toEqual(expected);
  });

  it.each([
    ['al2@latest', 'AL2'],
    ['bottlerocket@v1.30.0', 'Bottlerocket'],
    ['windows2025@latest', 'Windows2025'],
    ['AL2023@latest', undefined],
    ['ubuntu@22.04', undefined],
    ['constructor@x', undefined],
  ])('maps alias %s to family %s', (alias, family) => {
    expect(aliasAmiFamily(alias)).toBe(family);
  });

  it('prefers spec.amiFamily over the alias, and ignores an unknown family', () => {
    const alias = [{ alias: 'al2023@latest' }];
    expect(effectiveAmiFamily(spec({ amiFamily: 'Custom', amiSelectorTerms: alias }))).toBe(
      'Custom'
    );
    expect(effectiveAmiFamily(spec({ amiSelectorTerms: alias }))).toBe('AL2023');
    expect(effectiveAmiFamily(spec({ amiFamily: 'Ubuntu' }))).toBeUndefined();
    expect(effectiveAmiFamily(spec({ amiSelectorTerms: [{ id: 'ami-0abc' }] }))).toBeUndefined();
  });

  it.each([
    ['AL2', ['/dev/xvda']],
    ['AL2023', ['/dev/xvda']],
    ['Bottlerocket', ['/dev/xvda', '/dev/xvdb']],
    ['Windows2019', ['/dev/sda1']],
    ['Windows2025', ['/dev/sda1']],
    ['Custom', []],
    [undefined, []],
  ] as const)("knows Karpenter's default root devices of %s", (family, devices) => {
    expect(defaultRootDevices(family)).toEqual(devices);
  });
});
