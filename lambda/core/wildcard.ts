// Wildcard patterns (`*` any run of characters, empty included; `?` exactly one character), matched
// without regular expressions: a backtracking regex takes exponential time on patterns such as
// `*a*a*a*b`, while the greedy two-pointer match below is O(pattern × value) in the worst case.
// Characters are Unicode code points, so `?` matches one emoji as EC2 does.

export interface WildcardDialect {
  /** `\` makes the next character literal (EC2 filter values); IAM patterns have no escapes. */
  readonly escapes: boolean;
  /** IAM actions compare case-insensitively; EC2 filter values are case-sensitive. */
  readonly ignoreCase: boolean;
}

/** EC2 filter values: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Filter.html */
export const EC2_FILTER: WildcardDialect = { escapes: true, ignoreCase: false };
/** IAM policy patterns (actions are case-insensitive; ARNs are not, compare with IAM_ARN). */
export const IAM_ACTION: WildcardDialect = { escapes: false, ignoreCase: true };
export const IAM_ARN: WildcardDialect = { escapes: false, ignoreCase: false };

/** A pattern compiled once; `matches` never allocates per character. */
export interface WildcardMatcher {
  readonly pattern: string;
  /** True when the pattern has no wildcard: it matches exactly one string. */
  readonly literal: boolean;
  matches(value: string): boolean;
}

const STAR = -1;
const ANY = -2;

function codePointWidth(codePoint: number): number {
  return codePoint > 0xffff ? 2 : 1;
}

/** Pattern → code points, with STAR/ANY for unescaped wildcards and runs of `*` collapsed. */
function tokenize(pattern: string, dialect: WildcardDialect): number[] {
  const tokens: number[] = [];
  let i = 0;
  while (i < pattern.length) {
    let codePoint = pattern.codePointAt(i) as number;
    i += codePointWidth(codePoint);
    if (dialect.escapes && codePoint === 0x5c && i < pattern.length) {
      codePoint = pattern.codePointAt(i) as number;
      i += codePointWidth(codePoint);
      tokens.push(codePoint);
    } else if (codePoint === 0x2a) {
      if (tokens.at(-1) !== STAR) tokens.push(STAR);
    } else if (codePoint === 0x3f) {
      tokens.push(ANY);
    } else {
      tokens.push(codePoint);
    }
  }
  return tokens;
}

/**
 * Greedy match with backtracking to the last `*` only: on a mismatch the last star absorbs one more
 * character and matching resumes after it. Earlier stars never need revisiting because a later
 * star can absorb anything they would have, so each value position is retried at most once per
 * pattern position.
 */
function matchTokens(tokens: readonly number[], value: string): boolean {
  let t = 0;
  let v = 0;
  let starToken = -1;
  let starValue = 0;
  while (v < value.length) {
    const codePoint = value.codePointAt(v) as number;
    const token = tokens[t];
    if (token !== undefined && (token === ANY || token === codePoint)) {
      t++;
      v += codePointWidth(codePoint);
    } else if (token === STAR) {
      starToken = t;
      starValue = v;
      t++;
    } else if (starToken >= 0) {
      starValue += codePointWidth(value.codePointAt(starValue) as number);
      t = starToken + 1;
      v = starValue;
    } else {
      return false;
    }
  }
  while (tokens[t] === STAR) t++;
  return t === tokens.length;
}

export function compileWildcard(pattern: string, dialect: WildcardDialect): WildcardMatcher {
  const fold = dialect.ignoreCase ? (text: string) => text.toLowerCase() : (text: string) => text;
  const tokens = tokenize(fold(pattern), dialect);
  if (tokens.every((token) => token >= 0)) {
    const exact = tokens.map((token) => String.fromCodePoint(token)).join('');
    return { pattern, literal: true, matches: (value) => fold(value) === exact };
  }
  return { pattern, literal: false, matches: (value) => matchTokens(tokens, fold(value)) };
}

const CACHE_LIMIT = 10_000;
const caches = new Map<WildcardDialect, Map<string, WildcardMatcher>>();

/** The compiled matcher for a pattern, from a bounded per-dialect cache. */
export function wildcardMatcher(pattern: string, dialect: WildcardDialect): WildcardMatcher {
  let cache = caches.get(dialect);
  if (cache === undefined) {
    cache = new Map();
    caches.set(dialect, cache);
  }
  let matcher = cache.get(pattern);
  if (matcher === undefined) {
    matcher = compileWildcard(pattern, dialect);
    // Forget everything rather than grow without bound on a stream of distinct patterns.
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(pattern, matcher);
  }
  return matcher;
}

export function wildcardMatches(pattern: string, value: string, dialect: WildcardDialect): boolean {
  return wildcardMatcher(pattern, dialect).matches(value);
}
