import { describe, expect, it } from 'vitest';
import { nodePoolSpotServiceLinkedRole } from '../../../lambda/core/checks/nodepool-spot-service-linked-role.js';
import type { PermissionFacts, SimulationResult } from '../../../lambda/core/facts/permissions.js';
import { ok, type Slice, unavailable } from '../../../lambda/core/facts/slice.js';
import { spotServiceLinkedRoleRequest } from '../../../lambda/core/iam/request-context.js';
import type { Inventory } from '../../../lambda/core/inventory.js';
import { parseNodePool } from '../../../lambda/core/schema.js';
import {
  aNodePool,
  aPermissionsInventory,
  withSimulations,
} from '../../support/permission-builders.js';

const now = new Date('2026-11-01T00:00:00Z');
const SCOPE = { partition: 'aws', region: 'us-east-1', accountId: '111122223333' } as const;
const SPOT_ROLE_ARN =
  'arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot';

function aSpotNodePool(name: string, values: readonly string[]): unknown {
  const pool = aNodePool(name, 'default') as {
    spec: { template: { spec: { requirements: unknown[] } } };
  };
  pool.spec.template.spec.requirements = [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values },
  ];
  return pool;
}

/** NodePools `general` (no capacity-type requirement), `spot` and `on-demand`, all on class `default`. */
function inventoryWith(
  exists: Slice<boolean> | undefined,
  create?: Partial<SimulationResult> | 'unavailable'
): Inventory {
  const base = aPermissionsInventory();
  const inventory = withSimulations({
    ...base,
    nodePools: [
      ...base.nodePools,
      { cluster: 'demo', name: 'spot', parsed: parseNodePool(aSpotNodePool('spot', ['spot'])) },
      {
        cluster: 'demo',
        name: 'on-demand',
        parsed: parseNodePool(aSpotNodePool('on-demand', ['on-demand'])),
      },
    ],
  });
  const permissions = new Map<string, PermissionFacts>();
  for (const [key, facts] of inventory.permissions) {
    const controller = facts.controllerRole;
    const simulations =
      create === undefined || controller.status !== 'found'
        ? facts.simulations
        : [
            ...facts.simulations,
            {
              request: spotServiceLinkedRoleRequest(
                { ...SCOPE, clusterName: 'demo', eksClusterName: 'demo' },
                controller
              ),
              results:
                create === 'unavailable'
                  ? unavailable<readonly SimulationResult[]>('throttled', 'Rate exceeded')
                  : ok([
                      {
                        action: 'iam:CreateServiceLinkedRole',
                        resource: SPOT_ROLE_ARN,
                        decision: 'allowed' as const,
                        matchedStatements: [],
                        missingContextValues: [],
                        ...create,
                      },
                    ]),
            },
          ];
    permissions.set(key, {
      ...facts,
      simulations,
      ...(exists === undefined ? {} : { spotServiceLinkedRole: exists }),
    });
  }
  return { ...inventory, permissions };
}

function byPool(inventory: Inventory) {
  return Object.fromEntries(
    nodePoolSpotServiceLinkedRole
      .evaluate(inventory, { now })
      .map((finding) => [finding.resource.name, finding])
  );
}

describe('nodepool-spot-service-linked-role', () => {
  it('does not apply to NodePools without Spot: no capacity-type requirement means on-demand', () => {
    const findings = byPool(inventoryWith(ok(true)));

    expect(findings.general?.status).toBe('not-applicable');
    expect(findings['on-demand']?.status).toBe('not-applicable');
    expect(findings.spot?.status).toBe('pass');
  });

  it('passes when the account has AWSServiceRoleForEC2Spot', () => {
    const finding = byPool(inventoryWith(ok(true))).spot;

    expect(finding?.message).toContain('has EC2 Spot');
    expect(finding?.evidence).toMatchObject({ reason: 'role-exists' });
  });

  it('passes when the role is absent and the controller may create it', () => {
    const finding = byPool(inventoryWith(ok(false), {})).spot;

    expect(finding?.status).toBe('pass');
    expect(finding?.message).toContain('the first Spot launch creates it');
  });

  it('fails when the role is absent and the controller may not create it', () => {
    const finding = byPool(inventoryWith(ok(false), { decision: 'implicitDeny' })).spot;

    expect(finding?.status).toBe('fail');
    expect(finding?.message).toContain('ServiceLinkedRoleCreationNotPermitted');
    expect(finding?.remediation).toContain(
      'aws iam create-service-linked-role --aws-service-name spot.amazonaws.com'
    );
    expect(finding?.evidence).toMatchObject({
      reason: 'not-creatable',
      denials: [{ action: 'iam:CreateServiceLinkedRole', deniedBy: 'no-allow' }],
    });
    expect(finding?.location?.path).toBe('spec.template.spec.requirements[0]');
  });

  it('reports an error when the role could not be read, or the simulation failed', () => {
    expect(byPool(inventoryWith(unavailable('access-denied', 'GetRole denied'))).spot?.status).toBe(
      'error'
    );
    expect(byPool(inventoryWith(ok(false), 'unavailable')).spot?.status).toBe('error');
    expect(byPool(inventoryWith(undefined)).spot?.status).toBe('error');
  });

  it('reports an error caused by controller-role-found when the absent role has no known creator', () => {
    const inventory = inventoryWith(ok(false));
    const permissions = new Map(
      [...inventory.permissions].map(([key, facts]) => [
        key,
        {
          ...facts,
          controllerRole: { status: 'not-found' as const, lookedAt: [], notes: [] },
        },
      ])
    );

    const finding = byPool({ ...inventory, permissions }).spot;

    expect(finding?.status).toBe('error');
    expect(finding?.causedBy?.checkId).toBe('controller-role-found');
  });
});
