// Whether `ignore-check.nodeclass-scanner/<check>` annotations may suppress findings at all (the
// `annotationSuppression` setting, the CLI's `--no-annotation-suppression`). It is a trust
// decision: whoever may edit an EC2NodeClass may otherwise accept its findings. Zod-free, because
// the Lambdas' environment parser (lambda/shared/env-config.ts) is in every bundle.
import { didYouMean } from './suggest.js';
import { IAM_ARN, wildcardMatches } from './wildcard.js';

/**
 * `allow`: every valid annotation suppresses; `deny`: none does (they are refused and the finding
 * stays open, saying so); a list of check ids or globs (`ami-*`): annotations of those checks only.
 */
export type AnnotationSuppression = 'allow' | 'deny' | readonly string[];

/** The default everywhere: annotations are trusted (and, in the service, every suppression alerts). */
export const DEFAULT_ANNOTATION_SUPPRESSION: AnnotationSuppression = 'allow';

/** A check id, or a glob over check ids (lowercase, digits, `-`, `*`, `?`). */
const CHECK_GLOB = /^[a-z0-9*?][a-z0-9*?-]*$/;

/** True when the policy lets an annotation of `checkId` suppress. */
export function annotationSuppressionAllows(
  policy: AnnotationSuppression,
  checkId: string
): boolean {
  if (policy === 'allow') return true;
  if (policy === 'deny') return false;
  return policy.some((pattern) => wildcardMatches(pattern, checkId, IAM_ARN));
}

/**
 * The text form (an environment variable, `-c key=value`): `allow`, `deny`, or check ids/globs
 * separated by commas. Empty is the default (`allow`).
 */
export function parseAnnotationSuppression(
  text: string
): { readonly value: AnnotationSuppression } | { readonly problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: DEFAULT_ANNOTATION_SUPPRESSION };
  if (trimmed === 'allow' || trimmed === 'deny') return { value: trimmed };
  const entries = trimmed
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const bad = entries.filter((entry) => !CHECK_GLOB.test(entry));
  if (entries.length === 0 || bad.length > 0) {
    return {
      problem: `expected allow, deny or check ids separated by commas${bad.length > 0 ? `, got "${bad[0]}"` : ''}`,
    };
  }
  return { value: entries };
}

/** The text form of a policy (inverse of `parseAnnotationSuppression`). */
export function annotationSuppressionText(policy: AnnotationSuppression): string {
  return typeof policy === 'string' ? policy : policy.join(',');
}

/** A problem of a policy; `index` names the list entry. */
export interface AnnotationSuppressionProblem {
  readonly index?: number;
  readonly message: string;
}

/**
 * Problems of a policy: an empty list (write `deny`), entries that are not check ids or globs and,
 * given the check catalog, entries that match no check.
 */
export function annotationSuppressionProblems(
  policy: AnnotationSuppression,
  knownCheckIds?: readonly string[]
): AnnotationSuppressionProblem[] {
  if (typeof policy === 'string') return [];
  if (policy.length === 0) return [{ message: 'an empty list allows no annotation: write deny' }];
  return policy.flatMap((entry, index) => {
    if (!CHECK_GLOB.test(entry))
      return [{ index, message: `"${entry}" is not a check id or glob` }];
    return knownCheckIds === undefined ||
      knownCheckIds.some((id) => wildcardMatches(entry, id, IAM_ARN))
      ? []
      : [
          {
            index,
            message: `unknown check id "${entry}"${didYouMean(entry, knownCheckIds)} (see \`nodeclass-scan checks\`)`,
          },
        ];
  });
}

/** `name[1]: message` (or `name: message`) for each problem. */
export function annotationSuppressionIssues(
  name: string,
  problems: readonly AnnotationSuppressionProblem[]
): string[] {
  return problems.map(
    (problem) =>
      `${name}${problem.index === undefined ? '' : `[${problem.index}]`}: ${problem.message}`
  );
}
