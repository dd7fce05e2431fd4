import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeEc2FilterValue } from '../../lambda/core/selectors/ec2-filter.js';
import {
  compileWildcard,
  EC2_FILTER,
  IAM_ACTION,
  IAM_ARN,
  type WildcardDialect,
  wildcardMatcher,
  wildcardMatches,
} from '../../lambda/core/wildcard.js';

type Token = { readonly kind: 'star' } | { readonly kind: 'one' } | { readonly char: string };

/** Reference semantics, written independently: tokens, then memoized recursion over code points. */
function referenceMatches(pattern: string, value: string, dialect: WildcardDialect): boolean {
  const fold = (text: string) => (dialect.ignoreCase ? text.toLowerCase() : text);
  const chars = Array.from(fold(pattern));
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string;
    if (dialect.escapes && char === '\\' && i + 1 < chars.length)
      tokens.push({ char: chars[++i] as string });
    else if (char === '*') tokens.push({ kind: 'star' });
    else if (char === '?') tokens.push({ kind: 'one' });
    else tokens.push({ char });
  }
  const text = Array.from(fold(value));
  const memo = new Map<string, boolean>();
  const at = (t: number, v: number): boolean => {
    const key = `${t},${v}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const token = tokens[t];
    let result: boolean;
    if (token === undefined) result = v === text.length;
    else if ('kind' in token && token.kind === 'star')
      result = at(t + 1, v) || (v < text.length && at(t, v + 1));
    else if ('kind' in token) result = v < text.length && at(t + 1, v + 1);
    else result = v < text.length && text[v] === token.char && at(t + 1, v + 1);
    memo.set(key, result);
    return result;
  };
  return at(0, 0);
}

const ALPHABET = ['a', 'b', 'A', '*', '?', '\\', '😀', '\n'];
const text = (maxLength: number) =>
  fc.array(fc.constantFrom(...ALPHABET), { maxLength }).map((chars) => chars.join(''));
const dialects = fc.constantFrom(EC2_FILTER, IAM_ACTION, IAM_ARN);

describe('wildcard matching', () => {
  it.each([
    ['team-node-*', 'team-node-2026', true],
    ['team-node-*', 'team-node-', true],
    ['team-node-*', 'Team-node-1', false],
    ['node-?', 'node-1', true],
    ['node-?', 'node-', false],
    ['node-?', 'node-12', false],
    ['*', '', true],
    ['', '', true],
    ['', 'a', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYcZc', true],
    ['a*b*c', 'aXbYcZ', false],
    ['?', '😀', true],
    ['??', '😀', false],
    ['*\\', 'ab\\', true],
    ['\\*amazon\\?\\\\', '*amazon?\\', true],
    ['\\*amazon', 'xamazon', false],
    ['(x)[y]+.', '(x)[y]+.', true],
  ])('EC2 %j vs %j → %s', (pattern, value, expected) => {
    expect(wildcardMatches(pattern, value, EC2_FILTER)).toBe(expected);
  });

  it('treats IAM backslashes as literal and compares actions without case', () => {
    expect(wildcardMatches('ec2:Describe*', 'EC2:describeimages', IAM_ACTION)).toBe(true);
    expect(wildcardMatches('ec2:Describe*', 'EC2:describeimages', IAM_ARN)).toBe(false);
    expect(wildcardMatches('a\\*', 'a\\bc', IAM_ARN)).toBe(true);
    expect(wildcardMatches('a\\*', 'a*', EC2_FILTER)).toBe(true);
    expect(wildcardMatches('a\\*', 'a\\bc', EC2_FILTER)).toBe(false);
  });

  it('agrees with the reference semantics on every small pattern and value', () => {
    fc.assert(
      fc.property(text(8), text(10), dialects, (pattern, value, dialect) => {
        expect(wildcardMatches(pattern, value, dialect)).toBe(
          referenceMatches(pattern, value, dialect)
        );
      }),
      { numRuns: 3000 }
    );
  });

  it('matches every value built from the pattern by filling its wildcards', () => {
    const filled = fc
      .array(
        fc.oneof(
          fc.record({ kind: fc.constant('star' as const), fill: text(4) }),
          fc.record({ kind: fc.constant('one' as const), fill: fc.constantFrom(...ALPHABET) }),
          fc.record({ kind: fc.constant('literal' as const), fill: fc.constantFrom(...ALPHABET) })
        ),
        { maxLength: 8 }
      )
      .map((parts) => ({
        pattern: parts
          .map((part) =>
            part.kind === 'star' ? '*' : part.kind === 'one' ? '?' : escapeEc2FilterValue(part.fill)
          )
          .join(''),
        value: parts.map((part) => part.fill).join(''),
      }));
    fc.assert(
      fc.property(filled, ({ pattern, value }) => {
        expect(wildcardMatches(pattern, value, EC2_FILTER)).toBe(true);
      }),
      { numRuns: 2000 }
    );
  });

  it('compiles a pattern once and reuses the compiled matcher', () => {
    const first = wildcardMatcher('team-*', EC2_FILTER);
    expect(wildcardMatcher('team-*', EC2_FILTER)).toBe(first);
    expect(wildcardMatcher('team-*', IAM_ARN)).not.toBe(first);
    expect(compileWildcard('a\\*b', EC2_FILTER).literal).toBe(true);
    expect(compileWildcard('a*b', EC2_FILTER).literal).toBe(false);
  });

  it('rejects quickly when a backtracking regex would not return', () => {
    const pattern = `${'*a'.repeat(30)}*b`;
    expect(wildcardMatches(pattern, 'a'.repeat(5000), EC2_FILTER)).toBe(false);
    expect(wildcardMatches(pattern, `${'a'.repeat(5000)}b`, EC2_FILTER)).toBe(true);
  }, 20_000);
});
