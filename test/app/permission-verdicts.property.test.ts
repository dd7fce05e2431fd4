// Property: over generated controller policies (Karpenter's v1.14.1 reference policy with random
// Denies, narrowed Allows, boundaries and SCPs), the scanner's verdict per NodeClass and check —
// through grouping, presence-only batching, the SCP recheck and the cross-scan cache — equals an
// independent engine's verdict for Karpenter's exact requests of that NodeClass, each simulated
// alone: `pass` when every action on every resource is allowed, `fail` otherwise.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { simulatePrincipalPolicy } from '../../lambda/adapters/iam-engine/simulate-principal-policy.js';
import type { NamedPolicy, PermissionGroup } from '../../lambda/core/facts/permissions.js';
import { resolveControllerRole } from '../../lambda/core/iam/controller-role.js';
import { permissionScopeOf, simulationInputOf } from '../../lambda/core/iam/nodeclass-inputs.js';
import { buildSimulations } from '../../lambda/core/iam/request-context.js';
import { cacheKeyId, type SimulationCachePort } from '../../lambda/core/iam/simulation-cache.js';
import { clusterOf, type Inventory } from '../../lambda/core/inventory.js';
import { engineDocuments } from '../support/engine-iam.js';
import {
  policyVariants,
  referenceControllerPolicies,
} from '../support/karpenter-controller-policy.js';
import { NODE_ROLE } from '../support/permission-builders.js';
import {
  ACCOUNT,
  type ControllerPolicies,
  controllerEngineRole,
  fleet,
  OTHER_NODE_ROLE,
  SCOPE,
  scanWith,
} from '../support/permission-fleet.js';

const CHECK_OF_GROUP: Record<PermissionGroup, string> = {
  launch: 'controller-can-launch',
  'pass-node-role': 'controller-can-pass-node-role',
  'manage-instance-profile': 'controller-can-manage-instance-profile',
  discover: 'controller-can-discover',
  'spot-service-linked-role': 'nodepool-spot-service-linked-role',
  'ebs-kms-key': 'ebs-kms-key-usable',
};

type Edit = (policies: NamedPolicy[]) => NamedPolicy[];
const subnet = (id: string) => `arn:aws:ec2:us-east-1:${ACCOUNT}:subnet/${id}`;

const editArb: fc.Arbitrary<{ name: string; edit: Edit }> = fc.oneof(
  fc.constantFrom(NODE_ROLE, OTHER_NODE_ROLE).map((role) => ({
    name: `passRoleOnlyTo(${role})`,
    edit: (p: NamedPolicy[]) => policyVariants.passRoleOnlyTo(p, role),
  })),
  fc.constantFrom('default', 'batch', 'pinned').map((nodeClass) => ({
    name: `denyNodeClassByTag(${nodeClass})`,
    edit: (p: NamedPolicy[]) => policyVariants.denyNodeClassByTag(p, nodeClass),
  })),
  fc
    .record({
      value: fc.constantFrom('platform', 'data', '*', 'p*'),
      operator: fc.constantFrom('StringEquals' as const, 'StringLike' as const),
    })
    .map(({ value, operator }) => ({
      name: `requireRequestTag(team ${operator} ${value})`,
      edit: (p: NamedPolicy[]) =>
        policyVariants.requireRequestTag(p, { key: 'team', value, operator }),
    })),
  fc.constantFrom('cost-*', 'team', 'x*').map((pattern) => ({
    name: `denyTagKeys(${pattern})`,
    edit: (p: NamedPolicy[]) => policyVariants.denyTagKeys(p, pattern),
  })),
  fc.constantFrom('us-east-1', 'eu-west-1').map((region) => ({
    name: `runInstancesOnlyIn(${region})`,
    edit: (p: NamedPolicy[]) => policyVariants.runInstancesOnlyIn(p, region),
  })),
  fc.subarray(['subnet-a', 'subnet-b', 'subnet-c']).map((allowed) => ({
    name: `denyEc2OutsideSubnets(${allowed.join(',')})`,
    edit: (p: NamedPolicy[]) =>
      policyVariants.denyEc2OutsideSubnets(p, {
        partition: 'aws',
        region: 'us-east-1',
        allowedSubnetArns: allowed.map(subnet),
      }),
  }))
);

const caseArb = fc.record({
  edits: fc.array(editArb, { maxLength: 3 }),
  boundary: fc.boolean(),
  scp: fc.option(fc.constantFrom('platform', 'data'), { nil: undefined }),
  batchRole: fc.option(fc.constant(OTHER_NODE_ROLE), { nil: undefined }),
  // Same tag keys as `default` (team only): the two share simulations where values do not count.
  batchTags: fc.constantFrom<Record<string, string>>(
    { team: 'data', 'cost-center': 'analytics' },
    { team: 'data' },
    { team: 'platform' }
  ),
});

/** The independent verdicts: each NodeClass' exact requests, one engine call each, no grouping. */
async function engineVerdicts(
  inventory: Inventory,
  role: ControllerPolicies
): Promise<Record<string, string>> {
  const documents = engineDocuments(controllerEngineRole(role));
  const verdicts: Record<string, string> = {};
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const cluster = clusterOf(inventory, entry.cluster);
    if (cluster === undefined) throw new Error('no cluster');
    const controller = resolveControllerRole(cluster);
    if (controller.status !== 'found') throw new Error('no controller role');
    const scope = permissionScopeOf(cluster, controller);
    if (scope.status !== 'ok') throw new Error(scope.message);
    const plan = buildSimulations(
      simulationInputOf(inventory, entry, entry.parsed.value, scope.value, controller)
    );
    for (const request of plan.requests) {
      const output = await simulatePrincipalPolicy(documents, {
        PolicySourceArn: request.principalArn,
        ActionNames: [...request.actions],
        ResourceArns: [...request.resourceArns],
        ContextEntries: request.context.map((entry) => ({
          ContextKeyName: entry.key,
          ContextKeyValues: [...entry.values],
          ContextKeyType: entry.type,
        })),
      });
      const allowed = (output.EvaluationResults ?? []).every((result) =>
        (result.ResourceSpecificResults ?? []).every(
          (resource) => resource.EvalResourceDecision === 'allowed'
        )
      );
      const key = `${CHECK_OF_GROUP[request.group]} ${entry.name}`;
      if (!allowed || verdicts[key] === undefined) verdicts[key] = allowed ? 'pass' : 'fail';
    }
  }
  return verdicts;
}

/** An in-memory verdict store: the second scan answers from it. */
function memoryCache(): SimulationCachePort {
  const entries = new Map<
    string,
    readonly import('../../lambda/core/facts/permissions.js').SimulationResult[]
  >();
  return {
    async get(keys) {
      return new Map(
        keys.flatMap((key) => {
          const found = entries.get(cacheKeyId(key));
          return found === undefined ? [] : [[cacheKeyId(key), found] as const];
        })
      );
    },
    async put(items) {
      for (const item of items) entries.set(cacheKeyId(item.key), item.results);
    },
  };
}

describe('permission verdicts equal the engine on exact per-NodeClass requests', () => {
  it('over generated policies, boundaries and SCPs, with grouping and the cache', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ edits, boundary, scp, batchRole, batchTags }) => {
        let managed = referenceControllerPolicies('v1.14.1', SCOPE);
        for (const { edit } of edits) managed = edit(managed);
        const role = {
          managed,
          ...(boundary ? { boundary: policyVariants.boundaryWithoutPassRole() } : {}),
          ...(scp === undefined
            ? {}
            : { scps: [policyVariants.scpDenyRunInstancesForTag(scp, 'team')] }),
        };
        const inventory = fleet('1.14.1', {
          batchTags,
          ...(batchRole === undefined ? {} : { batchRole }),
        });
        const expected = await engineVerdicts(inventory, role);
        const cache = memoryCache();
        const first = await scanWith(inventory, role, { cache });
        const second = await scanWith(inventory, role, { cache });
        const applicable = (status: Record<string, string>) =>
          Object.fromEntries(
            Object.entries(status).filter(([, value]) => value !== 'not-applicable')
          );

        expect(applicable(first.status)).toEqual(expected);
        expect(applicable(second.status)).toEqual(expected);
        // The second scan answered from the cache.
        expect(second.simulations).toBe(0);
      }),
      // Each case costs about a second of CPU: 12 cases by default, 60 under test:thorough.
      { numRuns: process.env.FC_THOROUGH === '1' ? 60 : 12 }
    );
    // Each case runs two scans and the per-request oracle through the engine.
  }, 180_000);
});
