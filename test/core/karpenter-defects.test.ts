import { describe, expect, it } from 'vitest';
import { isAffected, KARPENTER_DEFECTS } from '../../lambda/core/karpenter-defects.js';
import { parseKarpenterVersion } from '../../lambda/core/version.js';

function defect(id: string) {
  const found = KARPENTER_DEFECTS.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no defect ${id}`);
  return found;
}

function affected(id: string, raw: string): boolean {
  const version = parseKarpenterVersion(raw);
  if (!version) throw new Error(`bad version ${raw}`);
  return isAffected(defect(id), version);
}

describe('karpenter-defects', () => {
  it.each([
    ['1.1.2', true],
    ['1.2.1', true],
    ['1.2.2', false],
    ['1.2.5', false],
    ['1.3.0-rc.1', true],
    ['1.3.0', false],
    ['v1.14.1', false],
  ])('pending-AMI selection (fixed 1.2.2 and 1.3.0): %s affected = %s', (raw, expected) => {
    expect(affected('pending-ami-selected', raw)).toBe(expected);
  });

  it.each([
    ['1.2.2', false],
    ['1.3.0', true],
    ['1.3.1', false],
  ])('RunInstances dry-run without subnet (1.3.0 only): %s affected = %s', (raw, expected) => {
    expect(affected('dry-run-without-subnet', raw)).toBe(expected);
  });

  it.each([
    ['1.6.4', true],
    ['1.7.0', false],
  ])('ISO IPv6 metadata (fixed 1.7.0): %s affected = %s', (raw, expected) => {
    expect(affected('imds-ipv6-iso-region', raw)).toBe(expected);
  });

  it('treats a defect without a released fix as affecting every release since it appeared', () => {
    expect(affected('instance-profile-arn-silent', '1.14.1')).toBe(true);
    expect(affected('dry-run-412-noise', '1.2.9')).toBe(false);
    expect(affected('dry-run-412-noise', '1.3.0')).toBe(true);
  });

  it('has unique ids and valid version literals', () => {
    const ids = KARPENTER_DEFECTS.map((entry) => entry.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const entry of KARPENTER_DEFECTS) {
      for (const literal of [entry.introduced, ...entry.fixedIn]) {
        expect(parseKarpenterVersion(literal)).toBeDefined();
      }
    }
  });
});
