// Offline PolicySimulatorPort: answers simulations from the world file's `iam.permissions` table.
import type { SimulationRequest, SimulationResult } from '../../core/facts/permissions.js';
import type { PolicySimulatorPort } from '../../core/ports/permissions.js';
import { IAM_ACTION, IAM_ARN, wildcardMatches as matchWildcard } from '../../core/wildcard.js';
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

/** Every action × resource of the request, decided by the first matching row. */
export function createWorldPolicySimulator(world: World): PolicySimulatorPort {
  const rows = world.iam.permissions;
  return {
    async simulate(request: SimulationRequest): Promise<readonly SimulationResult[]> {
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
