// What a KMS key policy says about one principal's request. KMS is stricter than IAM's other
// resources: without a key policy statement that allows the principal, or the account (the root
// principal: "IAM policies decide"), no IAM policy can grant use of the key; grants are the only
// other way (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html,
// https://docs.aws.amazon.com/kms/latest/developerguide/determining-access.html). Only condition
// keys whose value the scanner knows for an EC2 launch are evaluated; any other leaves the verdict
// open, naming the key.

/** The request EC2 makes to KMS on a launching principal's behalf. */
export interface KmsPolicyRequest {
  /** The caller's IAM role ARN (the Karpenter controller role). */
  readonly principalArn: string;
  readonly accountId: string;
  readonly partition: string;
  readonly keyArn: string;
  /** `kms:Decrypt`, … */
  readonly action: string;
  /** Condition key (any case) → value. */
  readonly context: Readonly<Record<string, string>>;
}

export type KeyPolicyOutcome =
  /** A statement allows this principal (by ARN, or `*` under conditions that hold). */
  | 'allows-principal'
  /** Only a statement for the account (its root) applies: the principal's IAM policies decide. */
  | 'delegates-to-iam'
  /** A Deny statement applies. */
  | 'denied'
  /** No statement allows it: only a grant can. */
  | 'not-granted'
  /** A statement that could decide uses something the scanner cannot evaluate. */
  | 'unknown';

export interface KeyPolicyVerdict {
  readonly outcome: KeyPolicyOutcome;
  /** The deciding statement (`Sid`, or its position). */
  readonly statement?: string;
  /** What could not be evaluated: for `unknown`, and Allows that might still apply besides. */
  readonly open: readonly string[];
}

type Json = Record<string, unknown>;

const asList = (value: unknown): unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

function wildcardMatch(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .split('')
    .map((char) =>
      char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\/-]/g, '\\$&')
    )
    .join('');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

type Match = 'yes' | 'no' | { readonly open: string };

/** Whom the statement's Principal names: this principal directly, its account, or neither. */
function principalMatch(
  statement: Json,
  request: KmsPolicyRequest
): 'principal' | 'account' | 'no' | { readonly open: string } {
  if (statement.NotPrincipal !== undefined) return { open: 'NotPrincipal' };
  const principal = statement.Principal;
  if (principal === '*') return 'principal';
  if (typeof principal !== 'object' || principal === null) return 'no';
  const root = `arn:${request.partition}:iam::${request.accountId}:root`;
  let best: 'principal' | 'account' | 'no' = 'no';
  for (const value of asList((principal as Json).AWS)) {
    if (typeof value !== 'string') continue;
    if (value === '*' || value === request.principalArn) return 'principal';
    if (value === request.accountId || value === root) best = 'account';
  }
  return best;
}

function actionMatch(statement: Json, action: string): boolean {
  const matches = (patterns: unknown) =>
    asList(patterns).some(
      (pattern) => typeof pattern === 'string' && wildcardMatch(pattern, action, true)
    );
  if (statement.NotAction !== undefined) return !matches(statement.NotAction);
  return matches(statement.Action);
}

function resourceMatch(statement: Json, keyArn: string): boolean {
  const matches = (patterns: unknown) =>
    asList(patterns).some(
      (pattern) => typeof pattern === 'string' && wildcardMatch(pattern, keyArn, false)
    );
  if (statement.NotResource !== undefined) return !matches(statement.NotResource);
  // A key policy's Resource is `*` (the key itself); a missing one is read the same way.
  return statement.Resource === undefined || matches(statement.Resource);
}

const STRING_OPERATORS: Readonly<
  Record<string, (patterns: readonly string[], value: string) => boolean>
> = {
  stringequals: (patterns, value) => patterns.includes(value),
  stringequalsignorecase: (patterns, value) =>
    patterns.some((pattern) => pattern.toLowerCase() === value.toLowerCase()),
  stringlike: (patterns, value) => patterns.some((pattern) => wildcardMatch(pattern, value, false)),
  arnequals: (patterns, value) => patterns.includes(value),
  arnlike: (patterns, value) => patterns.some((pattern) => wildcardMatch(pattern, value, false)),
  bool: (patterns, value) => patterns.some((pattern) => pattern.toLowerCase() === value),
};
const NEGATED: Readonly<Record<string, string>> = {
  stringnotequals: 'stringequals',
  stringnotequalsignorecase: 'stringequalsignorecase',
  stringnotlike: 'stringlike',
  arnnotequals: 'arnequals',
  arnnotlike: 'arnlike',
};

/** One condition block: every operator and key must hold (values of one key are ORed). */
function conditionMatch(statement: Json, context: Readonly<Record<string, string>>): Match {
  const condition = statement.Condition;
  if (condition === undefined) return 'yes';
  if (typeof condition !== 'object' || condition === null) return { open: 'Condition' };
  const known = new Map(Object.entries(context).map(([key, value]) => [key.toLowerCase(), value]));
  const open: string[] = [];
  for (const [rawOperator, block] of Object.entries(condition as Json)) {
    // Single-valued keys: ForAnyValue/ForAllValues compare the one value.
    const operator = rawOperator.toLowerCase().replace(/^for(any|all)value:/, '');
    const ifExists = operator.endsWith('ifexists');
    const base = ifExists ? operator.slice(0, -'ifexists'.length) : operator;
    if (typeof block !== 'object' || block === null) return { open: `Condition ${rawOperator}` };
    for (const [key, expected] of Object.entries(block as Json)) {
      const patterns = asList(expected).map(String);
      const value = known.get(key.toLowerCase());
      if (base === 'null') {
        if (value === undefined) {
          open.push(key);
          continue;
        }
        if (!patterns.some((pattern) => pattern.toLowerCase() === 'false')) return 'no';
        continue;
      }
      const negatedOf = NEGATED[base];
      const compare = STRING_OPERATORS[negatedOf ?? base];
      if (compare === undefined) {
        open.push(`${key} (${rawOperator})`);
        continue;
      }
      if (value === undefined) {
        // Absent keys: an …IfExists test holds; anything else the scanner cannot tell.
        if (!ifExists) open.push(key);
        continue;
      }
      const held = compare(patterns, value);
      if (negatedOf === undefined ? !held : held) return 'no';
    }
  }
  return open.length === 0 ? 'yes' : { open: open.join(', ') };
}

function statementName(statement: Json, index: number): string {
  return typeof statement.Sid === 'string' && statement.Sid !== ''
    ? statement.Sid
    : `statement ${index + 1}`;
}

/** The key policy's answer for one action; `undefined` when the document is not a policy. */
export function evaluateKeyPolicy(
  document: string,
  request: KmsPolicyRequest
): KeyPolicyVerdict | undefined {
  let policy: unknown;
  try {
    policy = JSON.parse(document);
  } catch {
    return undefined;
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) return undefined;
  const statements = asList((policy as Json).Statement).filter(
    (statement): statement is Json => typeof statement === 'object' && statement !== null
  );
  const context = { ...request.context, 'aws:PrincipalArn': request.principalArn };
  let allowsPrincipal: string | undefined;
  let delegates: string | undefined;
  const openAllows: string[] = [];
  const openDenies: string[] = [];
  for (const [index, statement] of statements.entries()) {
    const name = statementName(statement, index);
    if (!actionMatch(statement, request.action) || !resourceMatch(statement, request.keyArn))
      continue;
    const principal = principalMatch(statement, request);
    if (principal === 'no') continue;
    const condition = conditionMatch(statement, context);
    if (condition === 'no') continue;
    const openWhy =
      typeof principal === 'object'
        ? principal.open
        : typeof condition === 'object'
          ? condition.open
          : undefined;
    if (statement.Effect === 'Deny') {
      // A Deny for the account applies to every principal in it.
      if (openWhy === undefined) return { outcome: 'denied', statement: name, open: [] };
      openDenies.push(`${name}: ${openWhy}`);
    } else if (statement.Effect === 'Allow') {
      if (openWhy !== undefined) openAllows.push(`${name}: ${openWhy}`);
      else if (principal === 'principal') allowsPrincipal ??= name;
      else delegates ??= name;
    }
  }
  if (openDenies.length > 0) return { outcome: 'unknown', open: openDenies };
  if (allowsPrincipal !== undefined)
    return { outcome: 'allows-principal', statement: allowsPrincipal, open: [] };
  if (delegates !== undefined)
    return { outcome: 'delegates-to-iam', statement: delegates, open: openAllows };
  if (openAllows.length > 0) return { outcome: 'unknown', open: openAllows };
  return { outcome: 'not-granted', open: [] };
}
