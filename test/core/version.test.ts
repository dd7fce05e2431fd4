import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  isAtLeast,
  type KarpenterVersion,
  parseKarpenterVersion,
} from '../../lambda/core/version.js';

function version(raw: string): KarpenterVersion {
  const parsed = parseKarpenterVersion(raw);
  if (!parsed) throw new Error(`test version ${raw} must parse`);
  return parsed;
}

describe('parseKarpenterVersion', () => {
  it.each([
    ['1.2.1', { major: 1, minor: 2, patch: 1 }],
    ['v1.7.0', { major: 1, minor: 7, patch: 0 }],
    ['1.7.0-rc.1', { major: 1, minor: 7, patch: 0, prerelease: 'rc.1' }],
    ['v0.37.7', { major: 0, minor: 37, patch: 7 }],
    ['1.14', { major: 1, minor: 14, patch: 0 }],
    ['1.3.0+build.5', { major: 1, minor: 3, patch: 0 }],
    [' 1.4.0 ', { major: 1, minor: 4, patch: 0 }],
  ])('parses %s', (raw, expected) => {
    const parsed = parseKarpenterVersion(raw);
    expect(parsed).toMatchObject(expected);
    expect(parsed?.raw).toBe(raw.trim());
  });

  it('has no prerelease field for a release', () => {
    expect(parseKarpenterVersion('1.7.0')).not.toHaveProperty('prerelease');
  });

  it.each([
    undefined,
    '',
    'latest',
    'main',
    '1',
    'v',
    '1.x.0',
    '1.2.3.4',
    'version 1.2.3',
    '1.2.3-',
    '-1.2.3',
  ])('returns undefined for %s', (raw) => {
    expect(parseKarpenterVersion(raw)).toBeUndefined();
  });
});

describe('compareVersions', () => {
  it.each([
    ['1.2.1', '1.2.2', -1],
    ['1.2.2', '1.3.0', -1],
    ['0.37.0', '1.0.0', -1],
    ['1.10.0', '1.9.9', 1],
    ['v1.7.0', '1.7.0', 0],
    ['1.7.0-rc.1', '1.7.0', -1],
    ['1.7.0-rc.1', '1.7.0-rc.2', -1],
    ['1.7.0-rc.2', '1.7.0-rc.10', -1],
    ['1.7.0-alpha', '1.7.0-beta', -1],
    ['1.7.0-1', '1.7.0-alpha', -1],
    ['1.7.0-rc', '1.7.0-rc.1', -1],
    ['1.7.0-rc.1', '1.6.9', 1],
    ['1.3.0+build.1', '1.3.0+build.2', 0],
    ['1.7.0-rc.01', '1.7.0-rc.1', 0],
  ])('%s vs %s → %i', (a, b, sign) => {
    expect(Math.sign(compareVersions(version(a), version(b)))).toBe(sign);
    expect(Math.sign(compareVersions(version(b), version(a)))).toBe(-sign || 0);
  });
});

describe('isAtLeast', () => {
  it.each([
    ['1.6.9', false],
    ['1.7.0-rc.1', false],
    ['1.7.0', true],
    ['v1.7.0', true],
    ['1.7.1', true],
    ['2.0.0', true],
  ])('%s is at least 1.7.0: %s', (raw, expected) => {
    expect(isAtLeast(version(raw), '1.7.0')).toBe(expected);
  });

  it('rejects an invalid minimum literal (a programming error)', () => {
    expect(() => isAtLeast(version('1.0.0'), 'one')).toThrow(RangeError);
  });
});
