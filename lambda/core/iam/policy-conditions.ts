// Which request-context keys a role's policies compare by value, and which only test for presence.
// Simulations whose contexts differ only in presence-tested values get the same verdicts, so one
// simulation answers them all. Condition operators and key semantics:
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html
import type { ContextEntry } from '../facts/permissions.js';
import { type ConditionValue, statementsOfDocument } from './policy-statements.js';

/**
 * What the policies test. `unknown` (a policy unreadable or not understood): every key counts by
 * value. Keys are lower-cased: condition key names are case-insensitive.
 */
export type ContextKeyUsage =
  | { readonly kind: 'known'; readonly valueKeys: ReadonlySet<string> }
  | { readonly kind: 'unknown' };

export const UNKNOWN_USAGE: ContextKeyUsage = { kind: 'unknown' };

const asList = (value: ConditionValue): string[] =>
  (Array.isArray(value) ? value : [value]).map(String);

/**
 * True when the operator's outcome cannot depend on the value of a present single-valued key:
 * `Null`, and `StringLike`/`StringNotLike` with a bare `*` pattern (Karpenter's reference policy
 * tests its tags this way). Set operators (`ForAnyValue:`/`ForAllValues:`) on lists count by value.
 */
function presenceOnly(operator: string, values: readonly string[]): boolean {
  const bare = operator.replace(/IfExists$/, '');
  if (bare === 'Null') return true;
  return (bare === 'StringLike' || bare === 'StringNotLike') && values.includes('*');
}

/** `${aws:PrincipalTag/team}` in any string: that key's value is substituted, so it counts. */
function variableKeys(text: string): string[] {
  return [...text.matchAll(/\$\{([^}]+)\}/g)]
    .map((match) => match[1] ?? '')
    .filter((key) => key !== '*' && key !== '?' && key !== '$')
    .map((key) => key.split(',')[0]?.trim() ?? key);
}

/** Keys one policy document compares by value, or undefined when it cannot be understood. */
export function valueKeysOfPolicy(document: string): Set<string> | undefined {
  const statements = statementsOfDocument(document);
  if (statements === undefined) return undefined;
  const keys = new Set<string>(variableKeys(document).map((key) => key.toLowerCase()));
  for (const statement of statements) {
    for (const [operator, block] of Object.entries(statement.Condition ?? {})) {
      for (const [key, value] of Object.entries(block)) {
        // A key named through a variable could be any key.
        if (key.includes('${') || key.includes('*')) return undefined;
        const setOperator =
          operator.startsWith('ForAnyValue:') || operator.startsWith('ForAllValues:');
        if (setOperator || !presenceOnly(operator, asList(value))) keys.add(key.toLowerCase());
      }
    }
  }
  return keys;
}

/** Usage over all of a role's policies (identity and boundary); undefined documents: unknown. */
export function contextKeyUsage(documents: readonly string[] | undefined): ContextKeyUsage {
  if (documents === undefined) return UNKNOWN_USAGE;
  const valueKeys = new Set<string>();
  for (const document of documents) {
    const keys = valueKeysOfPolicy(document);
    if (keys === undefined) return UNKNOWN_USAGE;
    for (const key of keys) valueKeys.add(key);
  }
  return { kind: 'known', valueKeys };
}

export function comparesValue(usage: ContextKeyUsage, key: string): boolean {
  return usage.kind === 'unknown' || usage.valueKeys.has(key.toLowerCase());
}

/**
 * The context as the policies see it: values of keys tested only for presence are blanked (the key
 * stays, so presence and `missingContextValues` are unchanged). Empty strings and the number of
 * values are kept: IAM may treat an empty value or list as absent.
 */
export function relevantContext(
  context: readonly ContextEntry[],
  usage: ContextKeyUsage
): ContextEntry[] {
  return context.map((entry) => ({
    key: entry.key,
    type: entry.type,
    values: comparesValue(usage, entry.key)
      ? entry.values
      : entry.values.map((value) => (value === '' ? '' : '\u0000')),
  }));
}
