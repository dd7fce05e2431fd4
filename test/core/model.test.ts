import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  findingId,
  isAtOrAbove,
  isSeverity,
  type ResourceRef,
  SEVERITIES,
  StableHasher,
  severityRank,
  stableHash,
} from '../../lambda/core/model.js';

const resource: ResourceRef = { cluster: 'prod', kind: 'EC2NodeClass', name: 'default' };

describe('stableHash', () => {
  it('is 64-bit FNV-1a as 16 hex digits (published test vectors)', () => {
    expect(stableHash('')).toBe('cbf29ce484222325');
    expect(stableHash('a')).toBe('af63dc4c8601ec8c');
    expect(stableHash('foobar')).toBe('85944171f73967e8');
  });

  it('is deterministic and sensitive to every character', () => {
    expect(stableHash('nodeclass')).toBe(stableHash('nodeclass'));
    expect(stableHash('nodeclass')).not.toBe(stableHash('nodeclasS'));
    expect(stableHash('ab')).not.toBe(stableHash('ba'));
  });

  it('hashes characters outside Latin-1 and pads to 16 digits', () => {
    const hash = stableHash('ノード🚀');
    expect(hash).toMatch(/^[0-9a-f]{16}$/);
    expect(hash).not.toBe(stableHash('ノード'));
  });
});

function referenceFnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const char of text) {
    hash ^= BigInt(char.codePointAt(0) ?? 0);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

describe('stableHash against a BigInt reference', () => {
  it('agrees on arbitrary unicode strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        expect(stableHash(text)).toBe(referenceFnv1a64(text));
      }),
      { numRuns: 500 }
    );
  });
});

describe('StableHasher', () => {
  it('hashes text given in parts as the whole text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 20 }), { maxLength: 5 }),
        (parts) => {
          const hasher = new StableHasher();
          for (const part of parts) hasher.add(part);
          expect(hasher.digest()).toBe(stableHash(parts.join('')));
        }
      ),
      { numRuns: 200 }
    );
  });

  it('adds a value as JSON.stringify writes it', () => {
    for (const value of [
      'plain',
      'a"b\\c\n',
      '\u0001',
      '\ud800',
      'ノ🚀',
      1,
      null,
      undefined,
      ['x'],
    ])
      expect(new StableHasher().addJson(value).digest()).toBe(
        stableHash(JSON.stringify(value) ?? 'null')
      );
  });
});

describe('findingId', () => {
  it('is stable for the same check, resource and discriminator', () => {
    expect(findingId('role-is-name', resource)).toBe(findingId('role-is-name', { ...resource }));
    expect(findingId('role-is-name', resource)).toBe(findingId('role-is-name', resource, ''));
  });

  it.each([
    ['check', findingId('tags-not-restricted', resource)],
    ['cluster', findingId('role-is-name', { ...resource, cluster: 'staging' })],
    ['kind', findingId('role-is-name', { ...resource, kind: 'NodePool' })],
    ['name', findingId('role-is-name', { ...resource, name: 'gpu' })],
    ['discriminator', findingId('role-is-name', resource, 'spec.role')],
  ])('changes with the %s', (_part, other) => {
    expect(other).not.toBe(findingId('role-is-name', resource));
  });

  it('does not confuse field boundaries', () => {
    const a = findingId('x', { cluster: 'ab', kind: 'EC2NodeClass', name: 'c' });
    const b = findingId('x', { cluster: 'a', kind: 'EC2NodeClass', name: 'bc' });
    expect(a).not.toBe(b);
  });
});

describe('severities', () => {
  it('orders severities most severe first', () => {
    expect(SEVERITIES.map(severityRank)).toEqual([0, 1, 2, 3, 4]);
    expect(isAtOrAbove('critical', 'high')).toBe(true);
    expect(isAtOrAbove('high', 'high')).toBe(true);
    expect(isAtOrAbove('medium', 'high')).toBe(false);
  });

  it.each([
    ['high', true],
    ['info', true],
    ['warning', false],
    ['HIGH', false],
  ])('isSeverity(%s) = %s', (value, expected) => {
    expect(isSeverity(value)).toBe(expected);
  });
});
