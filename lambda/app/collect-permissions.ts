// InventoryEnricher 'permissions': finds each cluster's Karpenter controller role and simulates,
// per NodeClass, exactly what Karpenter will ask AWS for. Identical simulations across NodeClasses
// run once; IAM's rate limits are unpublished, so calls are bounded and back off on throttling.
import type {
  ControllerRoleResolution,
  DryRunOutcome,
  PermissionFacts,
  SimulationGap,
  SimulationOutcome,
  SimulationRequest,
  SimulationResult,
} from '../core/facts/permissions.js';
import { ok, type Slice, unavailable } from '../core/facts/slice.js';
import { bareIamName } from '../core/iam/arns.js';
import { resolveControllerRole } from '../core/iam/controller-role.js';
import { permissionScopeOf, simulationInputOf } from '../core/iam/nodeclass-inputs.js';
import type { DryRunLaunch, DryRunPort, PolicySimulatorPort } from '../core/iam/ports.js';
import {
  buildSimulations,
  karpenterEc2Tags,
  type NodeClassSimulationInput,
} from '../core/iam/request-context.js';
import { type ClusterContext, clusterOf, factsKeyOf, type Inventory } from '../core/inventory.js';
import type { InventoryEnricher } from '../core/ports.js';
import { mapLimited } from '../shared/concurrency.js';
import { SourceUnavailableError } from '../shared/errors.js';

export interface PermissionsEnricherOptions {
  readonly simulator: PolicySimulatorPort;
  /** Per-cluster controller role override (`--controller-role CLUSTER=ARN`). */
  readonly controllerRoles?: Readonly<Record<string, string>>;
  /** Simulations in flight at once. */
  readonly concurrency?: number;
  /** Attempts per simulation when IAM throttles. */
  readonly maxAttempts?: number;
  /** First backoff delay; doubles per attempt. */
  readonly baseDelayMs?: number;
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** Opt-in EC2 DryRun of RunInstances/CreateFleet with an assumed role. */
  readonly dryRun?: DryRunPort;
}

const ALL_GROUPS = ['launch', 'pass-node-role', 'manage-instance-profile', 'discover'] as const;

const defaultSleep = (milliseconds: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, milliseconds));

async function simulateWithBackoff(
  simulator: PolicySimulatorPort,
  request: SimulationRequest,
  options: Required<Pick<PermissionsEnricherOptions, 'maxAttempts' | 'baseDelayMs' | 'sleep'>>
): Promise<Slice<readonly SimulationResult[]>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return ok(await simulator.simulate(request));
    } catch (error) {
      const reason = error instanceof SourceUnavailableError ? error.reason : 'unknown';
      const message = error instanceof Error ? error.message : String(error);
      if (reason !== 'throttled' || attempt >= options.maxAttempts) {
        return unavailable(reason, message);
      }
      await options.sleep(options.baseDelayMs * 2 ** (attempt - 1));
    }
  }
}

interface NodeClassPlan {
  readonly key: string;
  readonly controllerRole: ControllerRoleResolution;
  readonly requests: readonly SimulationRequest[];
  readonly gaps: readonly SimulationGap[];
  readonly input?: NodeClassSimulationInput;
}

function gapsForAll(reason: SimulationGap['reason'], message: string): SimulationGap[] {
  return ALL_GROUPS.map((group) => ({ group, reason, message }));
}

function planNodeClasses(
  inventory: Inventory,
  overrides: Readonly<Record<string, string>>
): NodeClassPlan[] {
  const roles = new Map<string, ControllerRoleResolution>();
  const roleOf = (cluster: ClusterContext) => {
    const cached = roles.get(cluster.name);
    if (cached) return cached;
    const resolved = resolveControllerRole(cluster, overrides[cluster.name]);
    roles.set(cluster.name, resolved);
    return resolved;
  };
  const plans: NodeClassPlan[] = [];
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const key = factsKeyOf(entry);
    const cluster = clusterOf(inventory, entry.cluster) ?? {
      name: entry.cluster,
      partition: 'aws',
    };
    const controllerRole = roleOf(cluster);
    if (controllerRole.status !== 'found') {
      plans.push({ key, controllerRole, requests: [], gaps: [] });
      continue;
    }
    const scope = permissionScopeOf(cluster, controllerRole);
    if (scope.status === 'unavailable') {
      plans.push({
        key,
        controllerRole,
        requests: [],
        gaps: gapsForAll(scope.reason, scope.message),
      });
      continue;
    }
    const input = simulationInputOf(
      inventory,
      entry,
      entry.parsed.value,
      scope.value,
      controllerRole
    );
    const plan = buildSimulations(input);
    plans.push({ key, controllerRole, requests: plan.requests, gaps: plan.gaps, input });
  }
  return plans;
}

/** DryRun needs one image, one subnet and the profile name, as Karpenter's own validation uses. */
function dryRunLaunchOf(input: NodeClassSimulationInput): DryRunLaunch | string {
  if (input.launch.status !== 'ok')
    return `the class' resources are unknown (${input.launch.message})`;
  const { imageIds, subnetIds, securityGroupIds } = input.launch.value;
  const { spec, status } = input.nodeClass;
  const profile = spec.instanceProfile ?? status?.instanceProfile;
  const imageId = imageIds[0];
  const subnetId = subnetIds[0];
  if (imageId === undefined || subnetId === undefined)
    return 'the class resolved no image or no subnet';
  if (profile === undefined)
    return 'role mode and Karpenter has not created the instance profile yet (status.instanceProfile)';
  return {
    nodeClassName: input.nodeClassName,
    imageId,
    subnetId,
    securityGroupIds,
    instanceProfile: bareIamName(profile),
    tags: karpenterEc2Tags(input.scope, input.nodeClassName, '', spec.tags),
  };
}

async function runDryRun(
  dryRun: DryRunPort,
  input: NodeClassSimulationInput
): Promise<DryRunOutcome[]> {
  const launch = dryRunLaunchOf(input);
  if (typeof launch === 'string') {
    return (['RunInstances', 'CreateFleet'] as const).map((operation) => ({
      operation,
      outcome: 'skipped' as const,
      message: launch,
    }));
  }
  try {
    return [...(await dryRun.probe(launch))];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return (['RunInstances', 'CreateFleet'] as const).map((operation) => ({
      operation,
      outcome: 'unavailable' as const,
      message,
    }));
  }
}

export function createPermissionsEnricher(options: PermissionsEnricherOptions): InventoryEnricher {
  const retry = {
    maxAttempts: options.maxAttempts ?? 5,
    baseDelayMs: options.baseDelayMs ?? 500,
    sleep: options.sleep ?? defaultSleep,
  };
  return {
    input: 'permissions',
    async enrich(inventory: Inventory): Promise<Inventory> {
      const plans = planNodeClasses(inventory, options.controllerRoles ?? {});
      const unique = new Map<string, SimulationRequest>();
      for (const plan of plans) {
        for (const request of plan.requests)
          if (!unique.has(request.key)) unique.set(request.key, request);
      }
      const requests = [...unique.values()];
      const outcomes = await mapLimited(requests, options.concurrency ?? 4, (request) =>
        simulateWithBackoff(options.simulator, request, retry)
      );
      const resultsByKey = new Map(
        requests.map((request, index) => [request.key, outcomes[index]])
      );

      const permissions = new Map(inventory.permissions);
      for (const plan of plans) {
        const simulations: SimulationOutcome[] = plan.requests.map((request) => ({
          request,
          results: resultsByKey.get(request.key) ?? unavailable('unknown', 'not simulated'),
        }));
        const dryRun =
          options.dryRun !== undefined && plan.input !== undefined
            ? await runDryRun(options.dryRun, plan.input)
            : undefined;
        const facts: PermissionFacts = {
          controllerRole: plan.controllerRole,
          simulations,
          gaps: plan.gaps,
          ...(dryRun === undefined ? {} : { dryRun }),
        };
        permissions.set(plan.key, facts);
      }
      return {
        ...inventory,
        inputs: new Set([...inventory.inputs, 'permissions']),
        permissions,
      };
    },
  };
}
