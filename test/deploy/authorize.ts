// IAM evaluation as AWS applies it to the deployed stack, for the policies a CDK template writes:
// an explicit Deny anywhere wins; otherwise a same-account principal needs an Allow in its identity
// policies or in the resource's policy (KMS keys are the exception: the key policy must allow,
// directly or by delegating to the account's IAM policies). Service principals (CloudWatch) have
// no identity policies, so only resource policies can admit them. A condition operator this file
// does not know fails the simulation rather than guessing.
import type { DeployedTemplate, PolicyStatement } from './template.js';

export type Principal =
  | { readonly kind: 'role'; readonly roleLogicalId: string; readonly arn: string }
  | { readonly kind: 'service'; readonly service: string };

export interface RequestContext {
  /** Condition keys of the request (`aws:SourceAccount`, `aws:SecureTransport`…). */
  readonly [key: string]: string | undefined;
}

export interface Decision {
  readonly allowed: boolean;
  readonly reason: string;
}

const asList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** IAM wildcard matching: `*` any run, `?` one character; actions match case-insensitively. */
export function wildcardMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const regex = new RegExp(
    `^${pattern
      .split('')
      .map((char) =>
        char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')
      )
      .join('')}$`,
    ignoreCase ? 'is' : 's'
  );
  return regex.test(value);
}

function conditionHolds(condition: PolicyStatement['Condition'], context: RequestContext): boolean {
  for (const [operator, entries] of Object.entries(condition ?? {})) {
    for (const [key, expected] of Object.entries(entries)) {
      const actual = context[key];
      const values = (Array.isArray(expected) ? expected : [expected]).map(String);
      const base = operator.replace(/IfExists$/, '');
      if (actual === undefined) {
        if (operator.endsWith('IfExists')) continue;
        if (base === 'Null') {
          if (values.includes('true')) continue;
          return false;
        }
        // A missing key fails every positive operator and satisfies the negated ones.
        if (/Not/.test(base)) continue;
        return false;
      }
      switch (base) {
        case 'Bool':
        case 'StringEquals':
        case 'ArnEquals':
          if (!values.includes(actual)) return false;
          break;
        case 'StringNotEquals':
        case 'ArnNotEquals':
          if (values.includes(actual)) return false;
          break;
        case 'StringLike':
        case 'ArnLike':
          if (!values.some((value) => wildcardMatch(value, actual))) return false;
          break;
        case 'StringNotLike':
        case 'ArnNotLike':
          if (values.some((value) => wildcardMatch(value, actual))) return false;
          break;
        case 'Null':
          if (values.includes('true')) return false;
          break;
        default:
          throw new Error(`authorize: condition operator ${operator} is not emulated`);
      }
    }
  }
  return true;
}

function principalMatches(
  statement: PolicyStatement,
  principal: Principal,
  accountId: string
): { matches: boolean; delegatesToIam: boolean } {
  const spec = statement.Principal;
  if (spec === undefined) return { matches: true, delegatesToIam: false };
  if (spec === '*') return { matches: true, delegatesToIam: false };
  if (principal.kind === 'service') {
    return { matches: asList(spec.Service).includes(principal.service), delegatesToIam: false };
  }
  if (asList(spec.AWS).includes('*')) return { matches: true, delegatesToIam: false };
  for (const entry of asList(spec.AWS)) {
    if (entry === principal.arn) return { matches: true, delegatesToIam: false };
    if (entry === accountId || entry.endsWith(`:iam::${accountId}:root`)) {
      return { matches: true, delegatesToIam: true };
    }
  }
  return { matches: false, delegatesToIam: false };
}

function statementApplies(
  statement: PolicyStatement,
  action: string,
  resource: string,
  context: RequestContext
): boolean {
  const actionOk =
    statement.Action !== undefined
      ? asList(statement.Action).some((pattern) => wildcardMatch(pattern, action, true))
      : !asList(statement.NotAction).some((pattern) => wildcardMatch(pattern, action, true));
  if (!actionOk) return false;
  const resourceOk =
    statement.Resource !== undefined
      ? asList(statement.Resource).some((pattern) => wildcardMatch(pattern, resource))
      : statement.NotResource !== undefined
        ? !asList(statement.NotResource).some((pattern) => wildcardMatch(pattern, resource))
        : true;
  return resourceOk && conditionHolds(statement.Condition, context);
}

function describe(statement: PolicyStatement, where: string): string {
  return `${statement.Effect} ${statement.Sid ?? ''} in ${where}`.replace(/\s+/g, ' ');
}

export class TemplateAuthorizer {
  private readonly resourcePolicies: Map<string, PolicyStatement[]>;
  private readonly identityCache = new Map<string, PolicyStatement[]>();

  constructor(private readonly template: DeployedTemplate) {
    this.resourcePolicies = template.resourcePolicies();
  }

  /** A resource's own policy from outside the template: a KMS key of the scanned account's world. */
  setResourcePolicy(resource: string, statements: readonly PolicyStatement[]): void {
    this.resourcePolicies.set(resource, [...statements]);
  }

  private identityStatements(principal: Principal): PolicyStatement[] {
    if (principal.kind === 'service') return [];
    let statements = this.identityCache.get(principal.roleLogicalId);
    if (statements === undefined) {
      statements = this.template.roleStatements(principal.roleLogicalId);
      this.identityCache.set(principal.roleLogicalId, statements);
    }
    return statements;
  }

  /** Whether `principal` may call `action` on `resource`, with the statement that decided it. */
  authorize(
    principal: Principal,
    action: string,
    resource: string,
    extraContext: RequestContext = {}
  ): Decision {
    const accountId = this.template.account.id;
    const context: RequestContext = {
      'aws:SecureTransport': 'true',
      ...(principal.kind === 'role' ? { 'aws:PrincipalArn': principal.arn } : {}),
      ...extraContext,
    };
    const identity = this.identityStatements(principal).filter((statement) =>
      statementApplies(statement, action, resource, context)
    );
    const onResource = (this.resourcePolicies.get(resource) ?? []).flatMap((statement) => {
      const { matches, delegatesToIam } = principalMatches(statement, principal, accountId);
      return matches && statementApplies(statement, action, resource, context)
        ? [{ statement, delegatesToIam }]
        : [];
    });
    const deny =
      identity.find((statement) => statement.Effect === 'Deny') ??
      onResource.find(({ statement }) => statement.Effect === 'Deny')?.statement;
    if (deny) return { allowed: false, reason: `explicit deny: ${describe(deny, resource)}` };

    const identityAllow = identity.find((statement) => statement.Effect === 'Allow');
    const resourceAllows = onResource.filter(({ statement }) => statement.Effect === 'Allow');
    const isKey = resource.includes(':kms:');
    if (isKey) {
      // A key policy must admit the caller: by name, or by delegating to the account's IAM.
      if (resourceAllows.some(({ delegatesToIam }) => !delegatesToIam)) {
        return { allowed: true, reason: 'key policy names the principal' };
      }
      if (identityAllow && resourceAllows.some(({ delegatesToIam }) => delegatesToIam)) {
        return { allowed: true, reason: 'identity policy, delegated by the key policy' };
      }
      return {
        allowed: false,
        reason: identityAllow
          ? 'the key policy does not delegate to IAM'
          : 'neither the key policy nor an identity policy allows it',
      };
    }
    if (identityAllow) return { allowed: true, reason: 'identity policy' };
    // Naming the account root in a resource policy only delegates to the account's IAM.
    if (resourceAllows.some(({ delegatesToIam }) => !delegatesToIam)) {
      return { allowed: true, reason: 'resource policy' };
    }
    return { allowed: false, reason: 'no statement allows it (implicit deny)' };
  }
}
