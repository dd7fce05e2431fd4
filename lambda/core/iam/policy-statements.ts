// The statements of the controller role's identity policies and permissions boundary as the scanner
// read them, and which of them can decide one action on one resource. IAM's simulator lists as
// missing every condition key the policies reference, whatever statement it sits in
// (https://docs.aws.amazon.com/IAM/latest/APIReference/API_ResourceSpecificResult.html), so a
// missing key matters only when a statement that applies to the pair uses it.
// Element semantics: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements.html
import * as z from 'zod';
import type { NamedPolicy, ReadPolicies } from '../facts/permissions.js';
import { IAM_ACTION, IAM_ARN, wildcardMatches } from '../wildcard.js';

const oneOrMany = z.union([z.string(), z.array(z.string())]);
const conditionValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.array(z.union([z.string(), z.number(), z.boolean()])),
]);

export const StatementSchema = z.looseObject({
  Sid: z.string().optional(),
  Effect: z.string(),
  Condition: z.record(z.string(), z.record(z.string(), conditionValue)).optional(),
  Action: oneOrMany.optional(),
  NotAction: oneOrMany.optional(),
  Resource: oneOrMany.optional(),
  NotResource: oneOrMany.optional(),
});

const PolicySchema = z.looseObject({
  Statement: z.union([StatementSchema, z.array(StatementSchema)]),
});

export type ConditionValue = z.infer<typeof conditionValue>;

export interface PolicyStatementRef {
  readonly policy: string;
  readonly sid?: string;
  /** Where the statement sits: an identity policy or the permissions boundary. */
  readonly place: 'identity' | 'boundary';
}

export interface ParsedStatement extends PolicyStatementRef {
  readonly effect: 'Allow' | 'Deny';
  readonly action?: readonly string[];
  readonly notAction?: readonly string[];
  readonly resource?: readonly string[];
  readonly notResource?: readonly string[];
  /** Condition keys as written, lower-cased (key names are case-insensitive). */
  readonly conditionKeys: ReadonlySet<string>;
  /**
   * Keys whose condition holds when the key is absent (`…IfExists`, negated operators such as
   * `StringNotEquals`, `Null`, `ForAllValues:`): a statement may match in simulation only because
   * such a key was missing, and stop matching once AWS sets it.
   */
  readonly absenceKeys: ReadonlySet<string>;
}

/**
 * Operators that evaluate to true for an absent key
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).
 */
function holdsWhenAbsent(operator: string): boolean {
  if (operator.startsWith('ForAllValues:')) return true;
  const bare = operator.replace(/^ForAnyValue:/, '');
  return bare.endsWith('IfExists') || bare === 'Null' || /Not(Equals|Like|IpAddress)/.test(bare);
}

const asList = (value: string | readonly string[] | undefined): readonly string[] | undefined =>
  value === undefined ? undefined : typeof value === 'string' ? [value] : value;

/** A parsed document's statements, or undefined when it is not JSON or not a policy. */
export function statementsOfDocument(
  document: string
): z.infer<typeof StatementSchema>[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(document);
  } catch {
    return undefined;
  }
  const parsed = PolicySchema.safeParse(json);
  if (!parsed.success) return undefined;
  const statement = parsed.data.Statement;
  return Array.isArray(statement) ? statement : [statement];
}

/** Keys a statement substitutes as policy variables (`${aws:username}`, `${aws:PrincipalTag/t, 'x'}`). */
function variableKeysOf(statement: object): string[] {
  return [...JSON.stringify(statement).matchAll(/\$\{([^}]+)\}/g)]
    .map((match) => (match[1] ?? '').split(',')[0]?.trim() ?? '')
    .filter((key) => key.includes(':'));
}

function parseOne(
  policy: NamedPolicy,
  place: 'identity' | 'boundary'
): ParsedStatement[] | undefined {
  const statements = statementsOfDocument(policy.document);
  if (statements === undefined) return undefined;
  return statements.map((statement) => {
    const keys = new Set<string>();
    const absenceKeys = new Set<string>();
    for (const [operator, block] of Object.entries(statement.Condition ?? {}))
      for (const key of Object.keys(block)) {
        keys.add(key.toLowerCase());
        if (holdsWhenAbsent(operator)) absenceKeys.add(key.toLowerCase());
      }
    // A key substituted as `${aws:PrincipalTag/team}` decides as much as a condition key.
    for (const key of variableKeysOf(statement)) keys.add(key.toLowerCase());
    const action = asList(statement.Action);
    const notAction = asList(statement.NotAction);
    const resource = asList(statement.Resource);
    const notResource = asList(statement.NotResource);
    return {
      policy: policy.name,
      ...(statement.Sid === undefined || statement.Sid === '' ? {} : { sid: statement.Sid }),
      place,
      effect: statement.Effect === 'Deny' ? 'Deny' : 'Allow',
      ...(action === undefined ? {} : { action }),
      ...(notAction === undefined ? {} : { notAction }),
      ...(resource === undefined ? {} : { resource }),
      ...(notResource === undefined ? {} : { notResource }),
      conditionKeys: keys,
      absenceKeys,
    };
  });
}

const parsedCache = new WeakMap<ReadPolicies, readonly ParsedStatement[] | null>();

/** Every statement of the role's policies; undefined when one document cannot be understood. */
export function parseStatements(policies: ReadPolicies): readonly ParsedStatement[] | undefined {
  const cached = parsedCache.get(policies);
  if (cached !== undefined) return cached ?? undefined;
  const parts = [
    ...policies.identity.map((policy) => parseOne(policy, 'identity')),
    ...(policies.boundary === undefined ? [] : [parseOne(policies.boundary, 'boundary')]),
  ];
  const statements = parts.every((part) => part !== undefined) ? parts.flat() : undefined;
  parsedCache.set(policies, statements ?? null);
  return statements;
}

/** A policy variable (`${aws:username}`) may stand for anything: it matches as a wildcard. */
const variablesAsWildcards = (pattern: string): string => pattern.replace(/\$\{[^}]*\}/g, '*');

function anyActionMatches(patterns: readonly string[], action: string): boolean {
  return patterns.some((pattern) =>
    wildcardMatches(variablesAsWildcards(pattern), action, IAM_ACTION)
  );
}

/**
 * Whether a resource pattern may name the simulated resource. The simulated ARN can itself be a
 * pattern (`instance/*`, `*`): then it may name what the statement names when either matches the other.
 */
function resourceMayMatch(pattern: string, resource: string): boolean {
  const wide = variablesAsWildcards(pattern);
  if (wildcardMatches(wide, resource, IAM_ARN)) return true;
  return resource.includes('*') && wildcardMatches(resource, wide, IAM_ARN);
}

/**
 * Whether the statement may apply to the action on the resource, conditions aside. It errs on the
 * side of applying (a `NotResource` against a simulated pattern applies unless the pattern is fully
 * excluded), so no statement that could decide is overlooked.
 */
export function mayApply(statement: ParsedStatement, action: string, resource: string): boolean {
  const actionApplies =
    statement.action !== undefined
      ? anyActionMatches(statement.action, action)
      : statement.notAction !== undefined
        ? !anyActionMatches(statement.notAction, action)
        : false;
  if (!actionApplies) return false;
  if (statement.resource !== undefined)
    return statement.resource.some((pattern) => resourceMayMatch(pattern, resource));
  // A NotResource pattern holding a policy variable may exclude nothing (its value is unknown).
  if (statement.notResource !== undefined)
    return !statement.notResource.some(
      (pattern) => !pattern.includes('${') && wildcardMatches(pattern, resource, IAM_ARN)
    );
  return false;
}

/** `Sid` in `policy` (or the policy alone for a statement without one), for messages. */
export function describeStatement(ref: PolicyStatementRef): string {
  const where = ref.place === 'boundary' ? `permissions boundary ${ref.policy}` : ref.policy;
  return ref.sid === undefined ? `a statement without Sid in ${where}` : `${ref.sid} in ${where}`;
}

/**
 * Every condition key the policies use, in conditions or as `${…}` variables (lower-cased → as
 * first written); undefined when one document cannot be understood.
 */
export function policyConditionKeys(
  policies: ReadPolicies
): ReadonlyMap<string, string> | undefined {
  const keys = new Map<string, string>();
  const documents = [...policies.identity, ...(policies.boundary ? [policies.boundary] : [])];
  for (const { document } of documents) {
    const statements = statementsOfDocument(document);
    if (statements === undefined) return undefined;
    for (const statement of statements) {
      const written = [
        ...Object.values(statement.Condition ?? {}).flatMap((block) => Object.keys(block)),
        ...variableKeysOf(statement),
      ];
      for (const key of written) if (!keys.has(key.toLowerCase())) keys.set(key.toLowerCase(), key);
    }
  }
  return keys;
}
