// iam:SimulatePrincipalPolicy answered by an independent policy engine, @cloud-copilot/iam-simulate
// (AGPL-3.0). Bundled product code reaches this module only through load.ts (a dynamic import),
// so the CLI runs without the package unless a world file gives policy documents.
//
// iam-simulate's runSimulation refuses requests IAM's simulator evaluates (ARNs with no account,
// such as public SSM parameters; ec2:CreateFleet on network-interface/*; `*` for a resource-scoped
// action), reads wildcards in the requested ARN as overlapping the policies', and drops context
// keys it does not list for the action. IAM's simulator matches the ARN as written and evaluates
// every supplied key. So runSimulation only validates the policies and the action, and each
// action × resource is evaluated by runUnsafeSimulation; the boundary, the SCPs and single
// statements are evaluated on their own for what IAM reports beside the decision.
import type {
  ContextEntry,
  EvaluationResult,
  PolicyEvaluationDecisionType,
  PolicySourceType,
  ResourceSpecificResult,
  SimulatePrincipalPolicyCommandInput,
  SimulatePrincipalPolicyCommandOutput,
  Statement,
} from '@aws-sdk/client-iam';
import {
  isConditionKeyArray,
  runSimulation,
  runUnsafeSimulation,
  type Simulation,
  typeForContextKey,
} from '@cloud-copilot/iam-simulate';

/** An identity policy of the principal: inline (by name) or managed (by ARN and name). */
export interface IdentityPolicyDocument {
  readonly name: string;
  readonly arn?: string;
  readonly type: 'inline' | 'managed';
  /** The policy JSON (not URL-encoded). */
  readonly document: string;
}

/** Everything IAM evaluates for a principal: its identity policies, boundary and SCPs. */
export interface PrincipalPolicyDocuments {
  /** In IAM's order: inline policies, then attached managed policies. */
  readonly identity: readonly IdentityPolicyDocument[];
  /**
   * `arn`: a managed policy's (its type, AWS or customer managed, follows from it); `name`: the
   * policy's name as IAM reports it, by default the last part of the ARN.
   */
  readonly boundary?: { readonly arn?: string; readonly name?: string; readonly document: string };
  /** The SCPs that apply to the principal's account, evaluated as one level of the organization. */
  readonly scps?: readonly { readonly id: string; readonly document: string }[];
}

type Decision = PolicyEvaluationDecisionType;
type Json = Record<string, unknown>;

interface Source {
  readonly id: string;
  readonly type: PolicySourceType;
}

/** A parsed policy with its statements, each runnable alone (the policy's Version kept). */
interface Parsed {
  readonly name: string;
  readonly source: Source;
  readonly policy: Json;
  readonly statements: readonly { readonly effect: unknown; readonly alone: Json }[];
}

const ALLOW_ALL = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }],
};

/** An ARN no resource type has: validation then stops after the policies and the action. */
const VALIDATION_RESOURCE = 'arn:aws:iam-simulate:::validation';

/** Validation errors past these mean the action and policies are fine; the ARN is IAM's business. */
const RESOURCE_SHAPE_ERRORS = new Set([
  'no.resource.types',
  'multiple.resource.types',
  'must.use.wildcard',
]);

/**
 * iam-simulate reads `*` and `?` in a requested ARN as wildcards overlapping the policies' patterns
 * (an Allow on `instance/i-1` would allow `instance/*`); IAM's simulator matches the ARN as
 * written. Private-use characters in their place are matched only by a policy's own wildcards.
 */
function literal(resource: string): string {
  return resource.replaceAll('*', '\uE000').replaceAll('?', '\uE001');
}

function parsePolicy(name: string, source: Source, document: string): Parsed {
  let policy: unknown;
  try {
    policy = JSON.parse(document);
  } catch (error) {
    throw new Error(
      `policy ${name} is not JSON (${error instanceof Error ? error.message : String(error)})`
    );
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) {
    throw new Error(`policy ${name} is not a JSON object`);
  }
  const json = policy as Json;
  const statements = [json.Statement ?? []].flat() as unknown[];
  return {
    name,
    source,
    policy: json,
    statements: statements.map((statement) => ({
      effect: (statement as Json | null)?.Effect,
      alone: {
        ...(json.Version === undefined ? {} : { Version: json.Version }),
        Statement: [statement],
      },
    })),
  };
}

/** The policy's name, the last part of its ARN (`…:policy/path/Name`). */
function nameOfArn(arn: string): string {
  return arn.split('/').at(-1) ?? arn;
}

/** AWS managed policies live in the `aws` account (`arn:aws:iam::aws:policy/…`). */
function managedType(arn: string | undefined): PolicySourceType {
  return arn?.split(':')[4] === 'aws' ? 'aws-managed' : 'user-managed';
}

/**
 * Condition keys of every statement of the policies, as first written, once each (case-insensitive).
 * IAM reports them all as missing when not supplied, whichever statement applies:
 * https://github.com/aws/aws-sdk-java-v2/issues/1751, https://github.com/boto/boto3/issues/3111.
 */
function conditionKeys(policies: readonly Parsed[]): string[] {
  const keys = new Map<string, string>();
  for (const { statements } of policies) {
    for (const { alone } of statements) {
      const condition = (alone.Statement as unknown[])[0] as Json | null;
      const operators = condition?.Condition;
      if (typeof operators !== 'object' || operators === null) continue;
      for (const block of Object.values(operators as Json)) {
        if (typeof block !== 'object' || block === null) continue;
        for (const key of Object.keys(block)) {
          if (!keys.has(key.toLowerCase())) keys.set(key.toLowerCase(), key);
        }
      }
    }
  }
  return [...keys.values()];
}

/**
 * ContextEntries as iam-simulate reads them: list types as arrays, the rest as strings. A key
 * iam-simulate knows is shaped by its known type (`aws:TagKeys` sent as `string` is still a list).
 */
async function contextVariablesOf(
  entries: readonly ContextEntry[]
): Promise<Record<string, string | string[]>> {
  const variables: Record<string, string | string[]> = {};
  for (const entry of entries) {
    const name = entry.ContextKeyName;
    if (name === undefined) continue;
    const values = entry.ContextKeyValues ?? [];
    let list = (entry.ContextKeyType ?? 'string').endsWith('List');
    try {
      list = isConditionKeyArray(await typeForContextKey(name));
    } catch {
      // A key iam-simulate does not know: compared as the request typed it.
    }
    if (list) variables[name] = [...values];
    else if (values.length === 1 && values[0] !== undefined) variables[name] = values[0];
    else if (values.length > 1) variables[name] = [...values];
  }
  return variables;
}

function decisionOf(result: string): Decision {
  return result === 'Allowed'
    ? 'allowed'
    : result === 'ExplicitlyDenied'
      ? 'explicitDeny'
      : 'implicitDeny';
}

/** explicitDeny if any is, else implicitDeny if any is, else allowed (IAM's aggregate). */
function aggregate(decisions: readonly Decision[]): Decision {
  if (decisions.includes('explicitDeny')) return 'explicitDeny';
  return decisions.includes('implicitDeny') ? 'implicitDeny' : 'allowed';
}

function distinctStatements(statements: readonly Statement[]): Statement[] {
  const seen = new Map<string, Statement>();
  for (const statement of statements) {
    seen.set(`${statement.SourcePolicyType} ${statement.SourcePolicyId}`, statement);
  }
  return [...seen.values()];
}

interface PairResult {
  readonly decision: Decision;
  readonly matched: Statement[];
  readonly allowedByBoundary?: boolean;
  readonly allowedByOrganizations?: boolean;
}

/**
 * Answers `input` for a principal whose policies are `policies`, as IAM's SimulatePrincipalPolicy
 * would: one EvaluationResult per action, with ResourceSpecificResults when ResourceArns were
 * given. Throws when iam-simulate rejects a policy or an action.
 */
export async function simulatePrincipalPolicy(
  policies: PrincipalPolicyDocuments,
  input: SimulatePrincipalPolicyCommandInput
): Promise<SimulatePrincipalPolicyCommandOutput> {
  const principal = input.PolicySourceArn;
  if (principal === undefined || principal === '') throw new Error('PolicySourceArn is required');
  for (const unsupported of [
    'PolicyInputList',
    'PermissionsBoundaryPolicyInputList',
    'PolicyExclusionList',
    'ResourcePolicy',
    'CallerArn',
  ] as const) {
    if (input[unsupported] !== undefined) {
      throw new Error(`SimulatePrincipalPolicy ${unsupported} is not supported by this engine`);
    }
  }
  // With no ResourceOwner, resources belong to the principal's account (same-account requests).
  const accountId = principal.split(':')[4] ?? '';
  const identity = policies.identity.map((policy) =>
    parsePolicy(
      policy.name,
      policy.type === 'inline'
        ? { id: policy.name, type: 'role' }
        : { id: policy.name, type: managedType(policy.arn) },
      policy.document
    )
  );
  const boundaryName =
    policies.boundary?.name ?? nameOfArn(policies.boundary?.arn ?? 'permissions-boundary');
  const boundary =
    policies.boundary === undefined
      ? undefined
      : parsePolicy(
          boundaryName,
          { id: boundaryName, type: managedType(policies.boundary.arn) },
          policies.boundary.document
        );
  const scps = policies.scps?.map((scp) =>
    parsePolicy(scp.id, { id: scp.id, type: 'none' }, scp.document)
  );
  const entries = input.ContextEntries ?? [];
  const supplied = new Set(entries.flatMap((entry) => entry.ContextKeyName?.toLowerCase() ?? []));
  const missing = conditionKeys(boundary ? [...identity, boundary] : identity).filter(
    (key) => !supplied.has(key.toLowerCase())
  );
  const contextVariables = await contextVariablesOf(entries);

  const named = (list: readonly Parsed[]) =>
    list.map((policy) => ({ name: policy.name, policy: policy.policy }));
  /** One evaluation: `identity` alone, or with the boundary and SCPs given. */
  const simulation = (
    action: string,
    resource: string,
    layers: {
      readonly identity: Simulation['identityPolicies'];
      readonly boundary?: Parsed;
      readonly scps?: readonly Parsed[];
      readonly context?: Simulation['request']['contextVariables'];
    }
  ): Simulation => ({
    request: {
      principal,
      action,
      resource: { resource, accountId },
      contextVariables: layers.context ?? contextVariables,
    },
    identityPolicies: layers.identity,
    ...(layers.boundary ? { permissionBoundaryPolicies: named([layers.boundary]) } : {}),
    serviceControlPolicies: layers.scps
      ? [{ orgIdentifier: accountId, policies: named(layers.scps) }]
      : [],
    resourceControlPolicies: [],
  });
  const everything = {
    identity: named(identity),
    ...(boundary ? { boundary } : {}),
    ...(scps ? { scps } : {}),
  };

  /** Policies and action as iam-simulate validates them; an ARN it has no type for is fine. */
  async function validate(action: string): Promise<void> {
    const checked = await runSimulation(
      simulation(action, VALIDATION_RESOURCE, { ...everything, context: {} }),
      {}
    );
    if (checked.resultType === 'error' && !RESOURCE_SHAPE_ERRORS.has(checked.errors.message)) {
      throw new Error(`iam-simulate cannot evaluate ${action}: ${JSON.stringify(checked.errors)}`);
    }
  }

  function evaluate(action: string, resource: string, layers: Parameters<typeof simulation>[2]) {
    try {
      return runUnsafeSimulation(simulation(action, literal(resource), layers), {});
    } catch (error) {
      throw new Error(
        `iam-simulate failed on ${action} for ${resource}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error }
      );
    }
  }

  /**
   * The policies of `from` with a statement of `effect` that applies to the request. Evaluated as
   * the only policy: an allowed pair has no applying Deny anywhere, so a policy alone allows it
   * exactly when one of its Allow statements applies; alone it denies exactly when one of its Deny
   * statements applies. One evaluation per policy, not per statement.
   */
  function applying(action: string, resource: string, from: readonly Parsed[], effect: string) {
    const expected = effect === 'Allow' ? 'Allowed' : 'ExplicitlyDenied';
    return from.flatMap((policy) =>
      policy.statements.some((statement) => statement.effect === effect) &&
      evaluate(action, resource, { identity: [{ name: policy.name, policy: policy.policy }] }) ===
        expected
        ? [{ SourcePolicyId: policy.source.id, SourcePolicyType: policy.source.type }]
        : []
    );
  }

  function pair(action: string, resource: string): PairResult {
    const decision = decisionOf(evaluate(action, resource, everything));
    // The boundary allows what it would allow as the only identity policy; the SCPs what they
    // allow behind an allow-all identity policy.
    const allowedByBoundary = boundary
      ? evaluate(action, resource, { identity: named([boundary]) }) === 'Allowed'
      : undefined;
    const allowedByOrganizations = scps
      ? evaluate(action, resource, {
          identity: [{ name: 'allow-all', policy: ALLOW_ALL }],
          scps,
        }) === 'Allowed'
      : undefined;
    const matched =
      decision === 'allowed'
        ? applying(action, resource, identity, 'Allow')
        : decision === 'explicitDeny'
          ? applying(action, resource, boundary ? [...identity, boundary] : identity, 'Deny')
          : [];
    return {
      decision,
      matched,
      ...(allowedByBoundary === undefined ? {} : { allowedByBoundary }),
      ...(allowedByOrganizations === undefined ? {} : { allowedByOrganizations }),
    };
  }

  const actions = input.ActionNames ?? [];
  const resources = input.ResourceArns ?? [];
  for (const action of new Set(actions)) await validate(action);
  const results: EvaluationResult[] = actions.map((action) => {
    const pairs = (resources.length > 0 ? resources : ['*']).map((resource) => ({
      resource,
      result: pair(action, resource),
    }));
    const boundaryDetail = pairs.every(({ result }) => result.allowedByBoundary !== false);
    const organizationsDetail = pairs.every(
      ({ result }) => result.allowedByOrganizations !== false
    );
    const perResource: ResourceSpecificResult[] = pairs.map(({ resource, result }) => ({
      EvalResourceName: resource,
      EvalResourceDecision: result.decision,
      MatchedStatements: result.matched,
      MissingContextValues: [...missing],
      ...(boundary
        ? {
            PermissionsBoundaryDecisionDetail: {
              AllowedByPermissionsBoundary: result.allowedByBoundary ?? true,
            },
          }
        : {}),
    }));
    return {
      EvalActionName: action,
      EvalResourceName: '*',
      EvalDecision: aggregate(pairs.map(({ result }) => result.decision)),
      MatchedStatements: distinctStatements(pairs.flatMap(({ result }) => result.matched)),
      MissingContextValues: [...missing],
      ...(scps
        ? { OrganizationsDecisionDetail: { AllowedByOrganizations: organizationsDetail } }
        : {}),
      ...(boundary
        ? { PermissionsBoundaryDecisionDetail: { AllowedByPermissionsBoundary: boundaryDetail } }
        : {}),
      ...(resources.length > 0 ? { ResourceSpecificResults: perResource } : {}),
    };
  });
  return { EvaluationResults: results, IsTruncated: false, $metadata: {} };
}
