// Config `ignore` rules: `{check, resource, reason, expires}` with `resource` a glob over
// `cluster/Kind/name`. Apart from the suppression itself so the Lambdas' config parser can
// validate the rules without loading the check catalog.
import * as z from 'zod';
import {
  type AnnotationSuppression,
  annotationSuppressionProblems,
  parseAnnotationSuppression,
} from './annotation-policy.js';
import type { ResourceKind, ResourceRef } from './model.js';
import { didYouMean } from './suggest.js';
import { IAM_ARN, wildcardMatches } from './wildcard.js';

/** One config rule. Validated by `ignoreRulesSchema` before use. */
export interface IgnoreRule {
  /** A check id, or a glob over check ids (`*` every check). */
  readonly check: string;
  /** A glob over `cluster/Kind/name`, e.g. `*\/EC2NodeClass/legacy-*`. */
  readonly resource: string;
  readonly reason: string;
  /** `YYYY-MM-DD` (through that day, UTC) or an ISO date-time with zone (through that instant). */
  readonly expires?: string | undefined;
}

const RESOURCE_KINDS: readonly ResourceKind[] = ['EC2NodeClass', 'NodePool', 'Cluster'];

/** `*` matches any run of characters, `?` exactly one; case-sensitive, no escapes. */
export function globMatches(pattern: string, text: string): boolean {
  return wildcardMatches(pattern, text, IAM_ARN);
}

/** Matched segment by segment, so a `*` never spans the `/` between cluster, kind and name. */
export function resourceMatches(pattern: string, resource: ResourceRef): boolean {
  const parts = pattern.split('/');
  if (parts.length !== 3) return false;
  const [cluster = '', kind = '', name = ''] = parts;
  return (
    globMatches(cluster, resource.cluster) &&
    globMatches(kind, resource.kind) &&
    globMatches(name, resource.name)
  );
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

function isCalendarDate(year: string, month: string, day: string): boolean {
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  return (
    date.getUTCFullYear() === Number(year) &&
    date.getUTCMonth() === Number(month) - 1 &&
    date.getUTCDate() === Number(day)
  );
}

/**
 * The first instant at which a rule with this `expires` no longer applies, or undefined when the
 * text is not a date. A date covers its whole day in UTC; a date-time covers up to that instant.
 */
export function expiryInstant(expires: string): number | undefined {
  const date = DATE.exec(expires);
  if (date) {
    const [, year = '', month = '', day = ''] = date;
    if (!isCalendarDate(year, month, day)) return undefined;
    return Date.UTC(Number(year), Number(month) - 1, Number(day) + 1);
  }
  const dateTime = DATE_TIME.exec(expires);
  if (dateTime) {
    const [, year = '', month = '', day = ''] = dateTime;
    if (!isCalendarDate(year, month, day)) return undefined;
    return Date.parse(expires) + 1;
  }
  return undefined;
}

/** True once `now` is past the rule's `expires`; a rule without one never expires. */
export function isExpired(rule: Pick<IgnoreRule, 'expires'>, now: Date): boolean {
  if (rule.expires === undefined) return false;
  const instant = expiryInstant(rule.expires);
  return instant === undefined || now.getTime() >= instant;
}

/**
 * One `ignore` rule. With `knownCheckIds` (the check catalog), a check id or glob that names no
 * check is an issue; without, only the shape is checked. A resource glob that is not
 * `cluster/Kind/name`, a missing reason or an unreadable `expires` is an issue on its field.
 */
export function ignoreRuleSchema(knownCheckIds?: readonly string[]) {
  // Each field validates itself, so every problem of a rule is reported at once.
  const text = (what: string) =>
    z
      .string({
        error: (issue) => (issue.input === undefined ? `required: ${what}` : `expected ${what}`),
      })
      .trim()
      .min(1, `required: ${what}`);
  return z.strictObject({
    check: text('a check id (see `nodeclass-scan checks`) or a glob such as *').refine(
      (check) => knownCheckIds === undefined || knownCheckIds.some((id) => globMatches(check, id)),
      {
        error: (issue) =>
          `unknown check id "${String(issue.input)}"${didYouMean(String(issue.input), knownCheckIds ?? [])} (see \`nodeclass-scan checks\`)`,
      }
    ),
    resource: text('a glob over cluster/Kind/name such as */EC2NodeClass/legacy-*').superRefine(
      (resource, context) => {
        const parts = resource.split('/');
        const kind = parts[1] ?? '';
        if (parts.length !== 3 || parts.some((part) => part === '')) {
          context.addIssue({
            code: 'custom',
            message: `"${resource}" is not cluster/Kind/name (use * for any part, e.g. */EC2NodeClass/legacy-*)`,
          });
        } else if (!RESOURCE_KINDS.some((known) => globMatches(kind, known))) {
          context.addIssue({
            code: 'custom',
            message: `"${kind}" matches no kind (${RESOURCE_KINDS.join(', ')})`,
          });
        }
      }
    ),
    reason: text('the reason the finding is accepted'),
    expires: text('a date (YYYY-MM-DD) or an ISO date-time with a zone')
      .refine((expires) => expiryInstant(expires) !== undefined, {
        error: (issue) =>
          `"${String(issue.input)}" is not a date (YYYY-MM-DD) or an ISO date-time with a zone`,
      })
      .optional(),
  });
}

/** The `ignore` list (see `ignoreRuleSchema`). */
export function ignoreRulesSchema(knownCheckIds?: readonly string[]) {
  return z.array(ignoreRuleSchema(knownCheckIds));
}

/**
 * The `annotationSuppression` setting: `allow`, `deny`, or a list of check ids or globs (a YAML or
 * JSON list, or text `a,b` as `-c key=a,b` gives it). With `knownCheckIds`, an entry matching no
 * check is an issue.
 */
export function annotationSuppressionSchema(knownCheckIds?: readonly string[]) {
  return z.unknown().transform((input, context): AnnotationSuppression => {
    let policy: AnnotationSuppression;
    if (typeof input === 'string') {
      const parsed = parseAnnotationSuppression(input);
      if ('problem' in parsed) {
        context.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      }
      policy = parsed.value;
    } else if (Array.isArray(input) && input.every((entry) => typeof entry === 'string')) {
      policy = input.map((entry: string) => entry.trim());
    } else {
      context.addIssue({
        code: 'custom',
        message: 'expected allow, deny or a list of check ids (see `nodeclass-scan checks`)',
      });
      return z.NEVER;
    }
    const problems = annotationSuppressionProblems(policy, knownCheckIds);
    for (const problem of problems) {
      context.addIssue({
        code: 'custom',
        message: problem.message,
        ...(problem.index === undefined ? {} : { path: [problem.index] }),
      });
    }
    return problems.length > 0 ? z.NEVER : policy;
  });
}

/** `ignore[2].check` style, for messages that name the rule. */
export function issuePath(root: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, segment) =>
      typeof segment === 'number' ? `${out}[${segment}]` : `${out}.${String(segment)}`,
    root
  );
}
