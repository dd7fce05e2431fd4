// EC2 `Filter` semantics, shared by the query builders and the offline world adapter so the two
// can never disagree: filters are ANDed, a filter's values are ORed, values are case-sensitive,
// `*` matches any run of characters, `?` exactly one, and `\` escapes the next character.
import type { Ec2Filter, Tags } from '../facts/aws.js';

const patternCache = new Map<string, RegExp>();

function compileWildcard(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (char === '\\' && i + 1 < pattern.length) {
      i++;
      source += escapeRegExp(pattern[i] as string);
    } else if (char === '*') {
      source += '[\\s\\S]*';
    } else if (char === '?') {
      source += '[\\s\\S]';
    } else {
      source += escapeRegExp(char);
    }
  }
  return new RegExp(`^${source}$`, 'u');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when `value` matches the EC2 filter value `pattern` (wildcards and escapes included). */
export function ec2WildcardMatches(pattern: string, value: string): boolean {
  let regex = patternCache.get(pattern);
  if (!regex) {
    regex = compileWildcard(pattern);
    if (patternCache.size < 10_000) patternCache.set(pattern, regex);
  }
  return regex.test(value);
}

/** Escapes `*`, `?` and `\` so a literal value can be used as a filter value. */
export function escapeEc2FilterValue(value: string): string {
  return value.replace(/[\\*?]/g, '\\$&');
}

function anyValueMatches(filter: Ec2Filter, candidates: readonly string[]): boolean {
  return filter.values.some((pattern) =>
    candidates.some((candidate) => ec2WildcardMatches(pattern, candidate))
  );
}

/**
 * Karpenter's tag terms as filters, in key order: a value of `*` means "has the key" (`tag-key`),
 * anything else is `tag:<key>=<value>`.
 */
export function tagFilters(tags: Tags | undefined): Ec2Filter[] {
  return Object.keys(tags ?? {})
    .sort()
    .map((key) => {
      const value = (tags as Tags)[key] as string;
      return value === '*'
        ? { name: 'tag-key', values: [key] }
        : { name: `tag:${key}`, values: [value] };
    });
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
      const value = tags[filter.name.slice('tag:'.length)];
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
      return Object.keys(resourceTags).some((actualKey) => ec2WildcardMatches(key, actualKey));
    }
    const actual = resourceTags[key];
    return actual !== undefined && ec2WildcardMatches(value, actual);
  });
}
