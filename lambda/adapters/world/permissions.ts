// Offline PolicySimulatorPort: a role whose policy documents the world gives (inline
// `RolePolicyList`, attached or boundary documents in `iam.policies`) is simulated by the IAM
// policy engine over them and the world's SCPs; any other principal is answered from the
// `iam.permissions` decision table. RolePolicyPort: the same documents, as live IAM reads them.
import type { SimulationRequest, SimulationResult } from '../../core/facts/permissions.js';
import { accountOfArn, bareIamName } from '../../core/iam/arns.js';
import type { RolePolicySet } from '../../core/iam/simulation-cache.js';
import type { PolicySimulatorPort, RolePolicyPort } from '../../core/ports/permissions.js';
import { IAM_ACTION, IAM_ARN, wildcardMatches as matchWildcard } from '../../core/wildcard.js';
import { SourceUnavailableError } from '../../shared/errors.js';
import { simulateWithEngine } from '../iam-engine/document-permissions.js';
import { IAM_ENGINE_PACKAGE, type IamEngine } from '../iam-engine/load.js';
import type { PrincipalPolicyDocuments } from '../iam-engine/simulate-principal-policy.js';
import type { World, WorldPermission } from './schema.js';

/** IAM-style wildcard match: `*` any run of characters, `?` one character, no escapes. */
export function wildcardMatches(pattern: string, value: string, ignoreCase = false): boolean {
  return matchWildcard(pattern, value, ignoreCase ? IAM_ACTION : IAM_ARN);
}

/** A row's principal may be the role ARN, the role name, or a pattern over the ARN. */
function principalMatches(pattern: string, principalArn: string): boolean {
  const roleName = principalArn.split('/').at(-1) ?? principalArn;
  return pattern === roleName || wildcardMatches(pattern, principalArn);
}

function resultOf(
  action: string,
  resource: string,
  row: WorldPermission | undefined,
  fallback: World['iam']['permissionsDefault']
): SimulationResult {
  if (row === undefined) {
    return {
      action,
      resource,
      decision: fallback,
      matchedStatements: [],
      missingContextValues: [],
    };
  }
  const deniedBy = row.decision === 'allowed' ? undefined : row.deniedBy;
  return {
    action,
    resource,
    decision: row.decision,
    ...(deniedBy === 'scp' ? { allowedByOrganizations: false } : {}),
    ...(deniedBy === 'permissions-boundary' ? { allowedByPermissionsBoundary: false } : {}),
    matchedStatements:
      deniedBy === undefined || deniedBy === 'scp' || deniedBy === 'permissions-boundary'
        ? []
        : [{ sourcePolicyId: deniedBy, sourcePolicyType: 'world-file' }],
    missingContextValues: row.missingContextValues ?? [],
  };
}

type WorldRole = World['iam']['roles'][number];

/** The world's role a principal ARN names (by ARN, or by name within the world's account). */
function roleOf(world: World, principalArn: string): WorldRole | undefined {
  const roles = [
    ...world.iam.roles,
    ...world.iam.instanceProfiles.flatMap((profile) => profile.Roles ?? []),
  ];
  const sameAccount =
    !principalArn.startsWith('arn:') || accountOfArn(principalArn) === world.account;
  return (
    roles.find((role) => role.Arn === principalArn) ??
    (sameAccount ? roles.find((role) => role.RoleName === bareIamName(principalArn)) : undefined)
  );
}

/**
 * The policies IAM evaluates for the principal, from the world's documents: inline policies, then
 * attached ones, the boundary, the SCPs. Undefined when the world gives none of the role's
 * documents (its simulations come from the table); throws when it gives some but not an attached
 * policy's or the boundary's.
 */
export function principalPolicyDocuments(
  world: World,
  principalArn: string
): PrincipalPolicyDocuments | undefined {
  const role = roleOf(world, principalArn);
  if (role === undefined) return undefined;
  const managed = new Map((world.iam.policies ?? []).map((policy) => [policy.Arn, policy]));
  const attached = (role.AttachedPolicies ?? []).flatMap((policy) =>
    policy.PolicyArn === undefined ? [] : [policy.PolicyArn]
  );
  const boundaryArn = role.PermissionsBoundary?.PermissionsBoundaryArn;
  const referenced = boundaryArn === undefined ? attached : [...attached, boundaryArn];
  const inline = role.RolePolicyList ?? [];
  if (inline.length === 0 && !referenced.some((arn) => managed.has(arn))) return undefined;
  const documentOf = (arn: string) => {
    const policy = managed.get(arn);
    if (policy === undefined) {
      throw new SourceUnavailableError(
        'iam:GetPolicyVersion',
        'not-found',
        `The world file gives policy documents for role ${role.RoleName} but not the document of ${arn} (add it to iam.policies).`
      );
    }
    return policy;
  };
  const scps = world.organizations?.scps ?? [];
  return {
    identity: [
      ...inline.map((policy) => ({
        name: policy.PolicyName,
        type: 'inline' as const,
        document: policy.PolicyDocument,
      })),
      ...attached.map((arn) => {
        const policy = documentOf(arn);
        return {
          name: policy.PolicyName,
          arn,
          type: 'managed' as const,
          document: policy.Document,
        };
      }),
    ],
    ...(boundaryArn === undefined
      ? {}
      : { boundary: { arn: boundaryArn, document: documentOf(boundaryArn).Document } }),
    ...(scps.length === 0
      ? {}
      : { scps: scps.map((scp) => ({ id: scp.Id, document: scp.Document })) }),
  };
}

/** True when some role's simulations would need the policy engine. */
export function worldHasPolicyDocuments(world: World): boolean {
  const managed = new Set((world.iam.policies ?? []).map((policy) => policy.Arn));
  return [
    ...world.iam.roles,
    ...world.iam.instanceProfiles.flatMap((profile) => profile.Roles ?? []),
  ].some(
    (role) =>
      (role.RolePolicyList ?? []).length > 0 ||
      (role.AttachedPolicies ?? []).some((policy) => managed.has(policy.PolicyArn ?? '')) ||
      managed.has(role.PermissionsBoundary?.PermissionsBoundaryArn ?? '')
  );
}

export interface WorldPolicySimulatorOptions {
  /** Evaluates roles' policy documents; without it such a role's simulations fail as not installed. */
  readonly engine?: IamEngine;
}

/**
 * Every action × resource of the request: by the engine over the principal's documents when the
 * world gives them, otherwise decided by the first matching table row.
 */
export function createWorldPolicySimulator(
  world: World,
  options: WorldPolicySimulatorOptions = {}
): PolicySimulatorPort {
  const rows = world.iam.permissions;
  // One scan simulates thousands of requests of a few principals: their documents are looked up
  // once (a lookup that throws is not kept, so it throws again).
  const documentsByPrincipal = new Map<string, PrincipalPolicyDocuments | undefined>();
  const documentsOf = (principalArn: string) => {
    if (documentsByPrincipal.has(principalArn)) return documentsByPrincipal.get(principalArn);
    const documents = principalPolicyDocuments(world, principalArn);
    documentsByPrincipal.set(principalArn, documents);
    return documents;
  };
  return {
    async simulate(request: SimulationRequest): Promise<readonly SimulationResult[]> {
      const documents = documentsOf(request.principalArn);
      if (documents !== undefined) {
        if (options.engine === undefined) {
          throw new SourceUnavailableError(
            'iam:SimulatePrincipalPolicy',
            'not-installed',
            `The world file has policy documents for ${request.principalArn}; evaluating them needs the optional package ${IAM_ENGINE_PACKAGE}.`
          );
        }
        return simulateWithEngine(options.engine, documents, request);
      }
      const candidates = rows.filter((row) =>
        principalMatches(row.principal, request.principalArn)
      );
      return request.actions.flatMap((action) =>
        request.resourceArns.map((resource) =>
          resultOf(
            action,
            resource,
            candidates.find(
              (row) =>
                wildcardMatches(row.action, action, true) && wildcardMatches(row.resource, resource)
            ),
            world.iam.permissionsDefault
          )
        )
      );
    },
  };
}

/**
 * RolePolicyPort over the world's documents, in the order live IAM reads them (inline, then
 * attached; the boundary apart). A role without documents is unreadable, as its policies are
 * unknown: every context value then counts.
 */
export function createWorldRolePolicyReader(world: World): RolePolicyPort {
  const policySet = async (roleArn: string): Promise<RolePolicySet> => {
    const documents = principalPolicyDocuments(world, roleArn);
    if (documents === undefined) {
      throw new SourceUnavailableError(
        'iam:GetRolePolicy',
        'not-found',
        `The world file gives no policy documents for ${roleArn}.`
      );
    }
    const identity = documents.identity.map((policy) => policy.document);
    const identityNames = documents.identity.map((policy) => policy.name);
    return documents.boundary === undefined
      ? { identity, identityNames }
      : {
          identity,
          identityNames,
          boundary: documents.boundary.document,
          boundaryName: bareIamName(documents.boundary.arn ?? documents.boundary.name ?? ''),
        };
  };
  return {
    policySet,
    async documents(roleArn) {
      const { identity, boundary } = await policySet(roleArn);
      return boundary === undefined ? identity : [...identity, boundary];
    },
    // As GetRole answers over the world: a role is there when `iam.roles` lists it.
    async roleExists(roleName) {
      return world.iam.roles.some((role) => role.RoleName === roleName);
    },
  };
}

/** A simulation result as a world `iam.permissions` row: replaying the row gives the same verdict. */
export function permissionRowOf(principalArn: string, result: SimulationResult): WorldPermission {
  const deniedBy =
    result.decision === 'allowed'
      ? undefined
      : result.allowedByOrganizations === false
        ? 'scp'
        : result.allowedByPermissionsBoundary === false
          ? 'permissions-boundary'
          : result.matchedStatements[0]?.sourcePolicyId;
  return {
    principal: principalArn,
    action: result.action,
    resource: result.resource,
    decision: result.decision,
    ...(deniedBy === undefined ? {} : { deniedBy }),
    ...(result.missingContextValues.length === 0
      ? {}
      : { missingContextValues: [...result.missingContextValues] }),
  };
}

/**
 * Wraps a live simulator for `snapshot`: every result it returns is kept as a permission row (one
 * per principal, action and resource; the first wins, as the world simulator's first match does).
 */
export function createRecordingSimulator(inner: PolicySimulatorPort): {
  readonly simulator: PolicySimulatorPort;
  rows(): WorldPermission[];
} {
  const rows = new Map<string, WorldPermission>();
  return {
    simulator: {
      async simulate(request) {
        const results = await inner.simulate(request);
        for (const result of results) {
          const key = `${request.principalArn}\u0000${result.action}\u0000${result.resource}`;
          if (!rows.has(key)) rows.set(key, permissionRowOf(request.principalArn, result));
        }
        return results;
      },
    },
    rows: () => [...rows.values()],
  };
}
