// EC2 `Filter` semantics, shared by the query builders and the offline world adapter so the two
// can never disagree: filters are ANDed, a filter's values are ORed, values are case-sensitive,
// `*` matches any run of characters, `?` exactly one, and `\` escapes the next character.
import type { Ec2Filter, Tags } from '../facts/aws.js';
import { EC2_FILTER, wildcardMatcher, wildcardMatches } from '../wildcard.js';
import { tagValue } from './tag-map.js';

/** True when `value` matches the EC2 filter value `pattern` (wildcards and escapes included). */
export function ec2WildcardMatches(pattern: string, value: string): boolean {
  return wildcardMatches(pattern, value, EC2_FILTER);
}

/** Escapes `*`, `?` and `\` so a literal value can be used as a filter value. */
export function escapeEc2FilterValue(value: string): string {
  return value.replace(/[\\*?]/g, '\\$&');
}

function anyValueMatches(filter: Ec2Filter, candidates: readonly string[]): boolean {
  return filter.values.some((pattern) => {
    const matcher = wildcardMatcher(pattern, EC2_FILTER);
    return candidates.some((candidate) => matcher.matches(candidate));
  });
}

/**
 * Karpenter's tag terms as filters, in key order: a value of `*` means "has the key" (`tag-key`),
 * anything else is `tag:<key>=<value>`.
 */
export function tagFilters(tags: Tags | undefined): Ec2Filter[] {
  return Object.entries(tags ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) =>
      value === '*' ? { name: 'tag-key', values: [key] } : { name: `tag:${key}`, values: [value] }
    );
}

/** Thrown for a filter the offline matcher does not implement (never silently "matches"). */
export class UnsupportedFilterError extends Error {
  public constructor(resource: string, filterName: string) {
    super(`Filter "${filterName}" is not supported for ${resource} by the offline matcher.`);
    this.name = 'UnsupportedFilterError';
  }
}

/**
 * Applies EC2 filters to one resource. `attribute` returns the values of a named attribute filter
 * (undefined when the name is not supported); tag filters are handled here.
 */
export function matchesFilters(
  resource: string,
  filters: readonly Ec2Filter[],
  tags: Tags,
  attribute: (name: string) => readonly (string | undefined)[] | undefined
): boolean {
  return filters.every((filter) => {
    if (filter.name === 'tag-key') return anyValueMatches(filter, Object.keys(tags));
    if (filter.name.startsWith('tag:')) {
      const value = tagValue(tags, filter.name.slice('tag:'.length));
      return value !== undefined && anyValueMatches(filter, [value]);
    }
    const values = attribute(filter.name);
    if (values === undefined) throw new UnsupportedFilterError(resource, filter.name);
    return anyValueMatches(
      filter,
      values.filter((value): value is string => value !== undefined)
    );
  });
}

/**
 * True when every `key: value` of a selector term's tags holds: `*` means some tag key matches
 * `key` (EC2 applies wildcards to `tag-key` values), otherwise the tag `key` exists and its value
 * matches `value`.
 */
export function tagsMatchTerm(resourceTags: Tags, termTags: Tags | undefined): boolean {
  return Object.entries(termTags ?? {}).every(([key, value]) => {
    if (value === '*') {
      const matcher = wildcardMatcher(key, EC2_FILTER);
      return Object.keys(resourceTags).some((actualKey) => matcher.matches(actualKey));
    }
    const actual = tagValue(resourceTags, key);
    return actual !== undefined && ec2WildcardMatches(value, actual);
  });
}
