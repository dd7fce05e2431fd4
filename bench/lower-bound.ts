// The fewest AWS calls a fleet needs: every distinct query, counted once, computed from the fleet
// itself with core's query builders (not from the memo's own count). Each DescribeImages plan is
// needed twice (as Karpenter queries it, and without the state filter to tell "no image" from
// "image not available"); both collapse when they are the same query.
import { RESOURCE_ARN_CHUNK_SIZE } from '../lambda/adapters/aws/iam-simulator.js';
import type { World } from '../lambda/adapters/world/schema.js';
import { parameterNamesOf } from '../lambda/adapters/world/world-facts.js';
import { aliasParameters, parseAlias, unsupportedAliasMessage } from '../lambda/core/ami/alias.js';
import {
  aliasImageQuery,
  imageQueriesForTerms,
  withoutStateFilter,
} from '../lambda/core/ami/queries.js';
import type { Ec2Filter } from '../lambda/core/facts/aws.js';
import { bareIamName } from '../lambda/core/iam/arns.js';
import { resolveControllerRole } from '../lambda/core/iam/controller-role.js';
import { permissionScopeOf, simulationInputOf } from '../lambda/core/iam/nodeclass-inputs.js';
import { buildSimulations } from '../lambda/core/iam/request-context.js';
import { clusterOf, type Inventory } from '../lambda/core/inventory.js';
import { capacityReservationQueries } from '../lambda/core/selectors/capacity-reservations.js';
import { securityGroupQueries } from '../lambda/core/selectors/security-groups.js';
import { subnetQueries } from '../lambda/core/selectors/subnets.js';

/** Order-insensitive identity of a query (EC2 ANDs filters and ORs values). */
export function canonicalQuery(query: {
  readonly filters: readonly Ec2Filter[];
  readonly owners?: readonly string[];
  readonly ids?: readonly string[];
  readonly includeDeprecated?: boolean;
}): string {
  const filters = query.filters
    .map((filter) => `${filter.name}=${[...filter.values].sort().join('\u0001')}`)
    .sort();
  return JSON.stringify([
    filters,
    [...(query.owners ?? [])].sort(),
    [...(query.ids ?? [])].sort(),
    query.includeDeprecated ?? null,
  ]);
}

function parameterValue(world: World, name: string): string | undefined {
  for (const candidate of parameterNamesOf(name)) {
    const value = world.ssm.parameters[candidate];
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Distinct AWS operations the AWS-facts enricher needs, by `service:Operation`. */
export function awsFactsLowerBound(world: World, inventory: Inventory): Record<string, number> {
  const keys = {
    'ec2:DescribeImages': new Set<string>(),
    'ec2:DescribeSubnets': new Set<string>(),
    'ec2:DescribeSecurityGroups': new Set<string>(),
    'ec2:DescribeCapacityReservations': new Set<string>(),
    'ssm:GetParameter': new Set<string>(),
    'iam:GetInstanceProfile': new Set<string>(),
    'iam:GetRole': new Set<string>(),
    'iam:ListAttachedRolePolicies': new Set<string>(),
  };
  const roleExists = (name: string) =>
    world.iam.roles.some((role) => role.RoleName === name) ||
    world.iam.instanceProfiles.some((p) => (p.Roles ?? []).some((r) => r.RoleName === name));
  const needRole = (name: string) => {
    keys['iam:GetRole'].add(name);
    if (roleExists(name)) keys['iam:ListAttachedRolePolicies'].add(name);
  };

  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const spec = entry.parsed.value.spec;
    for (const query of subnetQueries(spec.subnetSelectorTerms))
      keys['ec2:DescribeSubnets'].add(canonicalQuery(query));
    for (const query of securityGroupQueries(spec.securityGroupSelectorTerms))
      keys['ec2:DescribeSecurityGroups'].add(canonicalQuery(query));
    for (const query of capacityReservationQueries(spec.capacityReservationSelectorTerms ?? []))
      keys['ec2:DescribeCapacityReservations'].add(canonicalQuery(query));

    const terms = spec.amiSelectorTerms;
    const aliasIndex = terms.findIndex((term) => term.alias);
    const plans = [];
    if (aliasIndex >= 0) {
      const cluster = clusterOf(inventory, entry.cluster);
      const k8s = cluster?.aws?.status === 'ok' ? cluster.aws.value.kubernetesVersion : undefined;
      const alias = parseAlias(terms[aliasIndex]?.alias ?? '');
      if (k8s !== undefined && alias !== undefined && !unsupportedAliasMessage(alias, k8s)) {
        const resolved = [];
        for (const parameter of aliasParameters(alias, k8s)) {
          keys['ssm:GetParameter'].add(parameter.name);
          const value = parameterValue(world, parameter.name);
          if (value !== undefined) resolved.push({ imageId: value, variants: parameter.variants });
        }
        const plan = aliasImageQuery(resolved, aliasIndex);
        if (plan) plans.push(plan);
      }
    } else {
      const values = new Map<number, string>();
      terms.forEach((term, index) => {
        if (term.id || !term.ssmParameter) return;
        keys['ssm:GetParameter'].add(term.ssmParameter);
        const value = parameterValue(world, term.ssmParameter);
        if (value !== undefined) values.set(index, value);
      });
      plans.push(...imageQueriesForTerms(terms, values));
    }
    for (const plan of plans) {
      keys['ec2:DescribeImages'].add(canonicalQuery(plan.query));
      keys['ec2:DescribeImages'].add(canonicalQuery(withoutStateFilter(plan.query)));
    }

    if (spec.instanceProfile !== undefined) {
      const name = bareIamName(spec.instanceProfile);
      keys['iam:GetInstanceProfile'].add(name);
      const profile = world.iam.instanceProfiles.find((p) => p.InstanceProfileName === name);
      const role = profile?.Roles?.[0]?.RoleName;
      if (role !== undefined) needRole(role);
    } else if (spec.role !== undefined) {
      needRole(bareIamName(spec.role));
    }
  }
  return Object.fromEntries(
    Object.entries(keys)
      .filter(([, set]) => set.size > 0)
      .map(([operation, set]) => [operation, set.size])
  );
}

/**
 * SimulatePrincipalPolicy calls the permissions enricher needs: each distinct simulation once,
 * split into chunks of RESOURCE_ARN_CHUNK_SIZE resource ARNs as the live adapter sends them.
 */
export function simulationLowerBound(inventory: Inventory): {
  readonly requests: number;
  readonly calls: number;
} {
  const requests = new Map<string, number>();
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const cluster = clusterOf(inventory, entry.cluster);
    if (!cluster) continue;
    const controller = resolveControllerRole(cluster);
    if (controller.status !== 'found') continue;
    const scope = permissionScopeOf(cluster, controller);
    if (scope.status !== 'ok') continue;
    const input = simulationInputOf(inventory, entry, entry.parsed.value, scope.value, controller);
    for (const request of buildSimulations(input).requests) {
      requests.set(
        request.key,
        Math.max(1, Math.ceil(request.resourceArns.length / RESOURCE_ARN_CHUNK_SIZE))
      );
    }
  }
  let calls = 0;
  for (const chunks of requests.values()) calls += chunks;
  return { requests: requests.size, calls };
}
