import { describe, expect, it } from 'vitest';
import {
  ec2WildcardMatches,
  escapeEc2FilterValue,
  matchesFilters,
  tagFilters,
  tagsMatchTerm,
  UnsupportedFilterError,
} from '../../../lambda/core/selectors/ec2-filter.js';

describe('ec2WildcardMatches', () => {
  it.each([
    ['team-node-*', 'team-node-2026', true],
    ['team-node-*', 'team-node-', true],
    ['team-node-*', 'Team-node-1', false],
    ['node-?', 'node-1', true],
    ['node-?', 'node-', false],
    ['node-?', 'node-12', false],
    ['*', '', true],
    ['a.b', 'axb', false],
    ['\\*amazon\\?\\\\', '*amazon?\\', true],
    ['\\*amazon', 'xamazon', false],
    ['(x)[y]+', '(x)[y]+', true],
  ])('%s vs %s → %s', (pattern, value, expected) => {
    expect(ec2WildcardMatches(pattern, value)).toBe(expected);
  });

  it('escapes a literal so it only matches itself', () => {
    const literal = 'a*b?c\\';
    expect(ec2WildcardMatches(escapeEc2FilterValue(literal), literal)).toBe(true);
    expect(ec2WildcardMatches(escapeEc2FilterValue(literal), 'aXXbYc\\')).toBe(false);
  });
});

describe('tag filters', () => {
  it('builds tag-key for * and tag:<k> otherwise, in key order', () => {
    expect(tagFilters({ b: '*', a: 'x' })).toEqual([
      { name: 'tag:a', values: ['x'] },
      { name: 'tag-key', values: ['b'] },
    ]);
  });

  it('ANDs filters and ORs values', () => {
    const tags = { env: 'prod', team: 'a' };
    const attribute = () => undefined;
    expect(
      matchesFilters('x', [{ name: 'tag:env', values: ['dev', 'prod'] }], tags, attribute)
    ).toBe(true);
    expect(
      matchesFilters(
        'x',
        [
          { name: 'tag:env', values: ['prod'] },
          { name: 'tag:team', values: ['b'] },
        ],
        tags,
        attribute
      )
    ).toBe(false);
  });

  it('refuses filters it does not implement instead of matching silently', () => {
    expect(() =>
      matchesFilters('images', [{ name: 'platform', values: ['windows'] }], {}, () => undefined)
    ).toThrow(UnsupportedFilterError);
  });

  it('matches term tags with EC2 semantics', () => {
    expect(
      tagsMatchTerm({ 'karpenter.sh/discovery': 'demo' }, { 'karpenter.sh/discovery': 'de*' })
    ).toBe(true);
    expect(tagsMatchTerm({ 'karpenter.sh/discovery': 'demo' }, { 'karpenter.sh/*': '*' })).toBe(
      true
    );
    expect(tagsMatchTerm({ other: 'demo' }, { 'karpenter.sh/discovery': '*' })).toBe(false);
  });
});
