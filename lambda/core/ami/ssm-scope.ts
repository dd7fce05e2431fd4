// Which SSM parameters the scanner may read, and which of their values it may show. Parameters
// under /aws/service/ are AWS's public ones: always readable, values public. Any other parameter
// may hold a secret: it is read only under a configured prefix, and its value is never shown
// unless it is the id of an image the account can describe.
import type { AmiFacts, SsmParameterLookup } from '../facts/aws.js';
import { ssmParameterPath } from '../iam/arns.js';
import type { ImageQuery } from '../ports/aws-facts.js';

/** AWS's public parameters (aliases resolve through these); nobody else can create names here. */
export const PUBLIC_PARAMETER_PREFIX = '/aws/service/';

/** The characters SSM allows in a parameter name. */
const PARAMETER_PATH = /^\/[A-Za-z0-9_.\-/]+$/;

/** Longest prefix accepted (SSM names may be longer, but a prefix this long is a mistake). */
const MAX_PREFIX_CHARS = 256;

/**
 * The path IAM matches a parameter by: its ARN's resource after `parameter` (`/team/ami`). A bare
 * name without a leading slash gains one, as in its ARN (`golden` → `/golden`).
 */
export function parameterResourcePath(nameOrArn: string): string {
  return `/${ssmParameterPath(nameOrArn).replace(/^\/+/, '')}`;
}

/** A public AWS parameter: its value is published by AWS for everyone. */
export function isPublicParameter(nameOrArn: string): boolean {
  return parameterResourcePath(nameOrArn).startsWith(PUBLIC_PARAMETER_PREFIX);
}

/** Where reading is restricted: the allowed prefixes and the setting that lists them. */
export interface SsmParameterScope {
  /** Path prefixes (plain string prefixes, as IAM's `parameter<prefix>*` resources match). */
  readonly prefixes: readonly string[];
  /** How a user changes `prefixes` (`the ssmParameterPrefixes CDK context key`). */
  readonly setting: string;
}

/** Whether the scanner may read the parameter; without a scope, every parameter is readable. */
export function parameterInScope(nameOrArn: string, scope: SsmParameterScope | undefined): boolean {
  if (scope === undefined || isPublicParameter(nameOrArn)) return true;
  const path = parameterResourcePath(nameOrArn);
  return scope.prefixes.some((prefix) => path.startsWith(prefix));
}

/** Why a parameter outside the scope was not read, and how to allow it. */
export function outsideScopeMessage(nameOrArn: string, scope: SsmParameterScope): string {
  const allowed =
    scope.prefixes.length === 0 ? 'none is configured' : `it allows ${scope.prefixes.join(', ')}`;
  return (
    `the scanner reads only SSM parameters under ${PUBLIC_PARAMETER_PREFIX} and the prefixes of ${scope.setting} ` +
    `(${allowed}); add a prefix of ${parameterResourcePath(nameOrArn)} to ${scope.setting} to check this term`
  );
}

/** Problem with one configured prefix, or undefined when it is usable. */
export function ssmPrefixProblem(prefix: string): string | undefined {
  if (!prefix.startsWith('/')) return `"${prefix}" must start with / (a parameter path)`;
  if (prefix.length < 2 || prefix.length > MAX_PREFIX_CHARS) {
    return `"${prefix.slice(0, 40)}" must name a path of 1 to ${MAX_PREFIX_CHARS - 1} characters after /`;
  }
  if (!PARAMETER_PATH.test(prefix)) {
    // `*` and `?` would widen the IAM grant; SSM names never contain them.
    return `"${prefix}" may contain only letters, digits and _ . - /`;
  }
  // SSM refuses names beginning with aws or ssm (any case): only AWS's own live there.
  if (/^\/(aws|ssm)/i.test(prefix)) {
    return `"${prefix}" is reserved by AWS (${PUBLIC_PARAMETER_PREFIX} is always readable)`;
  }
  return undefined;
}

/** The form of an EC2 image id. */
const IMAGE_ID = /^ami-[0-9a-f]{8,17}$/;

/**
 * Ids of every image DescribeImages listed for the NodeClass's queries (state or not), or undefined
 * when neither selection could be read.
 */
export function visibleImageIds(amis: AmiFacts): ReadonlySet<string> | undefined {
  const selections = [amis.available, amis.ignoringState].flatMap((slice) =>
    slice.status === 'ok' ? [slice.value] : []
  );
  if (selections.length === 0) return undefined;
  const ids = new Set<string>();
  for (const selection of selections) {
    for (const result of selection.queries) for (const image of result.images) ids.add(image.id);
  }
  return ids;
}

/**
 * The parameter's value when it may be shown: the id of an image the account can describe (not a
 * secret of the parameter), or an image id held by a public parameter. Anything else: undefined.
 */
export function shownParameterValue(
  nameOrArn: string,
  value: string,
  visible: ReadonlySet<string> | undefined
): string | undefined {
  if (visible?.has(value)) return value;
  return isPublicParameter(nameOrArn) && IMAGE_ID.test(value) ? value : undefined;
}

/**
 * The queries with every `image-id` value that came from a non-public parameter and is not a
 * visible image replaced by a placeholder naming the parameter (evidence may show the queries).
 */
export function withHiddenParameterValues(
  queries: readonly ImageQuery[],
  lookups: readonly SsmParameterLookup[],
  visible: ReadonlySet<string> | undefined,
  explicitIds: ReadonlySet<string>
): ImageQuery[] {
  const hidden = new Map<string, string>();
  for (const { name, value } of lookups) {
    if (value.status !== 'ok' || value.value === undefined) continue;
    // An id also written as an `id` term is the NodeClass's own text, not the parameter's secret.
    if (explicitIds.has(value.value)) continue;
    if (shownParameterValue(name, value.value, visible) !== undefined) continue;
    if (!hidden.has(value.value)) {
      hidden.set(value.value, `(value of SSM parameter ${name}, not shown)`);
    }
  }
  if (hidden.size === 0) return [...queries];
  return queries.map((query) => ({
    ...query,
    filters: query.filters.map((filter) =>
      filter.name === 'image-id'
        ? { ...filter, values: filter.values.map((value) => hidden.get(value) ?? value) }
        : filter
    ),
  }));
}
