// InventoryEnricher 'permissions': finds each cluster's Karpenter controller role and simulates,
// per NodeClass, exactly what Karpenter will ask AWS for. Requests whose contexts differ only in
// values the role's policies test for presence alone are answered by one simulation, together with
// every other action and resource sharing that context (simulation-batches.ts). Throttling is
// retried by the SDK client, not here.

import type { Role } from '../core/facts/aws.js';
import type {
  ControllerRoleResolution,
  DryRunOutcome,
  PermissionFacts,
  PermissionNote,
  ReadPolicies,
  SimulationGap,
  SimulationOutcome,
  SimulationRequest,
  SimulationResult,
} from '../core/facts/permissions.js';
import { ok, type Slice, unavailable } from '../core/facts/slice.js';
import { accountOfArn, bareIamName } from '../core/iam/arns.js';
import { resolveControllerRole } from '../core/iam/controller-role.js';
import {
  permissionScopeOf,
  simulationInputOf,
  wildcardLaunchResources,
} from '../core/iam/nodeclass-inputs.js';
import {
  type ContextKeyUsage,
  contextKeyUsage,
  UNKNOWN_USAGE,
} from '../core/iam/policy-conditions.js';
import { policyConditionKeys } from '../core/iam/policy-statements.js';
import {
  buildSimulations,
  karpenterEc2Tags,
  type NodeClassSimulationInput,
  SPOT_SERVICE_LINKED_ROLE,
  spotServiceLinkedRoleRequest,
} from '../core/iam/request-context.js';
import {
  batchSimulations,
  memberResults,
  resultsByPair,
  type SimulationBatch,
  usesRepresentative,
} from '../core/iam/simulation-batches.js';
import type { RolePolicySet } from '../core/iam/simulation-cache.js';
import { type ClusterContext, clusterOf, factsKeyOf, type Inventory } from '../core/inventory.js';
import { allowsSpot } from '../core/nodepool-requirements.js';
import type { InventoryEnricher } from '../core/ports/objects.js';
import type {
  DryRunLaunch,
  DryRunPort,
  PolicySimulatorPort,
  RolePolicyPort,
} from '../core/ports/permissions.js';
import { mapLimited } from '../shared/concurrency.js';
import { SourceUnavailableError } from '../shared/errors.js';
import { createCachingSimulator, type SimulationCacheOptions } from './cached-simulator.js';
import { withEbsKmsKeyRequests } from './kms-permissions.js';

export interface PermissionsEnricherOptions {
  readonly simulator: PolicySimulatorPort;
  /**
   * Reads the controller role's policies. Without it (or when they cannot be read) every context
   * value counts, and only requests with equal contexts share a simulation.
   */
  readonly policies?: RolePolicyPort;
  /** Per-cluster controller role override (`--controller-role CLUSTER=ARN`). */
  readonly controllerRoles?: Readonly<Record<string, string>>;
  /** Simulations in flight at once. */
  readonly concurrency?: number;
  /** Opt-in EC2 DryRun of RunInstances/CreateFleet with an assumed role. */
  readonly dryRun?: DryRunPort;
  /**
   * Verdicts kept across scans (the Lambdas), keyed by the principal's policies as `policies`
   * reads them and the request: nothing is cached for a principal whose policies were not read.
   */
  readonly cache?: SimulationCacheOptions;
  /**
   * Where the verdicts come from when not the controller role's own policies (`--controller-policy`
   * documents): said in the evidence of every controller-* finding.
   */
  readonly policySource?: string;
  /**
   * Simulate the launch on wildcard ARNs of each resource type (`image/*`, `subnet/*`,
   * `security-group/*`) for a class with neither AWS facts nor status, instead of leaving the
   * launch unverified (manifests checked against `--controller-policy` documents). Said in the
   * launch finding.
   */
  readonly wildcardUnresolvedLaunch?: boolean;
}

/** Said in the launch finding of a class simulated on wildcard resource ARNs. */
const WILDCARD_LAUNCH_NOTE =
  "The class' image, subnets and security groups were not resolved (no AWS facts, no status), so the launch was simulated on wildcard ARNs of each type (image/*, subnet/*, security-group/*). A policy that allows only some images, subnets or security groups denies these; scan with --world or --aws to simulate the class' own resources.";

const ALL_GROUPS = [
  'launch',
  'pass-node-role',
  'manage-instance-profile',
  'discover',
  'spot-service-linked-role',
  'ebs-kms-key',
] as const;

async function simulateOnce(
  simulator: PolicySimulatorPort,
  request: SimulationRequest
): Promise<Slice<readonly SimulationResult[]>> {
  try {
    return ok(await simulator.simulate(request));
  } catch (error) {
    const reason = error instanceof SourceUnavailableError ? error.reason : 'unknown';
    const message = error instanceof Error ? error.message : String(error);
    return unavailable(reason, message);
  }
}

/** Each batch simulated once; every member's own results (or why there are none), by key. */
async function simulateBatches(
  simulator: PolicySimulatorPort,
  batches: readonly SimulationBatch[],
  concurrency: number
): Promise<Map<string, Slice<readonly SimulationResult[]>>> {
  const outcomes = await mapLimited(batches, concurrency, (batch) =>
    simulateOnce(simulator, batch.request)
  );
  // A request larger than one call is answered by several: its results are theirs together, and
  // it is unavailable when any of them failed. Members of a single batch read its results as is.
  const gathered = new Map<
    string,
    {
      member: SimulationRequest;
      byPair?: Map<string, SimulationResult>;
      failed?: Slice<readonly SimulationResult[]>;
    }
  >();
  batches.forEach((batch, index) => {
    const outcome = outcomes[index] ?? unavailable('unknown', 'not simulated');
    const batchPairs = outcome.status === 'ok' ? resultsByPair(outcome.value) : undefined;
    for (const member of batch.members) {
      const entry = gathered.get(member.key);
      if (entry === undefined) {
        gathered.set(
          member.key,
          batchPairs === undefined ? { member, failed: outcome } : { member, byPair: batchPairs }
        );
      } else if (outcome.status !== 'ok') entry.failed ??= outcome;
      else entry.byPair = resultsByPair(outcome.value, new Map(entry.byPair));
    }
  });
  const byKey = new Map<string, Slice<readonly SimulationResult[]>>();
  for (const [key, { member, byPair, failed }] of gathered) {
    if (failed !== undefined || byPair === undefined) {
      byKey.set(key, failed ?? unavailable('unknown', 'not simulated'));
      continue;
    }
    const own = memberResults(member, byPair);
    byKey.set(
      key,
      own.ok
        ? ok(own.results)
        : unavailable('unknown', `The simulation returned no result for ${own.missing}.`)
    );
  }
  return byKey;
}

interface PrincipalPolicies {
  readonly usage: ContextKeyUsage;
  /** Undefined when unread (or the reader cannot tell the boundary apart). */
  readonly policies?: RolePolicySet;
  /** The documents with their names, for the checks to see which statements decide. */
  readonly read?: ReadPolicies;
  /** The condition keys they use (lower-cased → as written). */
  readonly keys?: ReadonlyMap<string, string>;
}

function principalPolicies(
  usage: ContextKeyUsage,
  read: ReadPolicies,
  policies?: RolePolicySet
): PrincipalPolicies {
  const keys = policyConditionKeys(read);
  return {
    usage,
    read,
    ...(policies === undefined ? {} : { policies }),
    ...(keys === undefined ? {} : { keys }),
  };
}

/** Names as IAM reports them where the reader knows them, else by position. */
function namedPolicies(set: RolePolicySet): ReadPolicies {
  const identity = set.identity.map((document, index) => ({
    name: set.identityNames?.[index] ?? `identity policy ${index + 1}`,
    document,
  }));
  return set.boundary === undefined
    ? { identity }
    : {
        identity,
        boundary: { name: set.boundaryName ?? 'permissions boundary', document: set.boundary },
      };
}

/** Node roles the AWS facts already read, by account and name: a controller role among them is not read again. */
function rolesRead(inventory: Inventory): Map<string, Role> {
  const roles = new Map<string, Role>();
  for (const facts of inventory.awsFacts.values()) {
    const role = facts.nodeRole?.status === 'ok' ? facts.nodeRole.value.role : undefined;
    if (role !== undefined) roles.set(`${accountOfArn(role.arn)} ${role.name}`, role);
  }
  return roles;
}

async function policiesByPrincipal(
  policies: RolePolicyPort | undefined,
  principals: readonly string[],
  concurrency: number,
  known: ReadonlyMap<string, Role>
): Promise<Map<string, PrincipalPolicies>> {
  if (policies === undefined) return new Map();
  const read = await mapLimited(principals, concurrency, async (principal) => {
    try {
      if (policies.policySet === undefined) {
        // Identity and boundary come as one list: statements cannot be told apart by place.
        const documents = await policies.documents(principal);
        return principalPolicies(
          contextKeyUsage(documents),
          namedPolicies({ identity: documents })
        );
      }
      const role = known.get(`${accountOfArn(principal)} ${bareIamName(principal)}`);
      const set = await policies.policySet(principal, role);
      const documents = set.boundary === undefined ? set.identity : [...set.identity, set.boundary];
      return principalPolicies(contextKeyUsage(documents), namedPolicies(set), set);
    } catch {
      // Unreadable policies: every value counts (exact, just more calls), and nothing is cached.
      return { usage: UNKNOWN_USAGE };
    }
  });
  return new Map(
    principals.map((principal, index) => [principal, read[index] ?? { usage: UNKNOWN_USAGE }])
  );
}

interface NodeClassPlan {
  readonly key: string;
  readonly cluster: string;
  readonly controllerRole: ControllerRoleResolution;
  readonly requests: readonly SimulationRequest[];
  readonly gaps: readonly SimulationGap[];
  readonly input?: NodeClassSimulationInput;
  readonly notes?: readonly PermissionNote[];
}

function gapsForAll(reason: SimulationGap['reason'], message: string): SimulationGap[] {
  return ALL_GROUPS.map((group) => ({ group, reason, message }));
}

/** Each cluster's controller role, resolved once. */
function controllerRoles(
  overrides: Readonly<Record<string, string>>
): (cluster: ClusterContext) => ControllerRoleResolution {
  const roles = new Map<string, ControllerRoleResolution>();
  return (cluster) => {
    const cached = roles.get(cluster.name);
    if (cached) return cached;
    const resolved = resolveControllerRole(cluster, overrides[cluster.name]);
    roles.set(cluster.name, resolved);
    return resolved;
  };
}

const clusterOfEntry = (inventory: Inventory, entry: Inventory['nodeClasses'][number]) =>
  clusterOf(inventory, entry.cluster) ?? { name: entry.cluster, partition: 'aws' as const };

/** The controller roles that will be simulated: found, in a cluster whose scope is known. */
function principalsToSimulate(
  inventory: Inventory,
  roleOf: (cluster: ClusterContext) => ControllerRoleResolution
): string[] {
  const principals = new Set<string>();
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const cluster = clusterOfEntry(inventory, entry);
    const role = roleOf(cluster);
    if (role.status === 'found' && permissionScopeOf(cluster, role).status === 'ok')
      principals.add(role.roleArn);
  }
  return [...principals].sort();
}

function planNodeClasses(
  inventory: Inventory,
  roleOf: (cluster: ClusterContext) => ControllerRoleResolution,
  policyKeysOf: (principal: string) => ReadonlyMap<string, string> | undefined,
  wildcardUnresolvedLaunch: boolean
): NodeClassPlan[] {
  const plans: NodeClassPlan[] = [];
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const key = factsKeyOf(entry);
    const cluster = clusterOfEntry(inventory, entry);
    const controllerRole = roleOf(cluster);
    if (controllerRole.status !== 'found') {
      plans.push({ key, cluster: cluster.name, controllerRole, requests: [], gaps: [] });
      continue;
    }
    const scope = permissionScopeOf(cluster, controllerRole);
    if (scope.status === 'unavailable') {
      plans.push({
        key,
        cluster: cluster.name,
        controllerRole,
        requests: [],
        gaps: gapsForAll(scope.reason, scope.message),
      });
      continue;
    }
    const policyKeys = policyKeysOf(controllerRole.roleArn);
    const resolved = simulationInputOf(
      inventory,
      entry,
      entry.parsed.value,
      scope.value,
      controllerRole
    );
    // Nothing resolved the class' resources: unavailable launch resources and no AWS facts at all.
    const wildcard =
      wildcardUnresolvedLaunch &&
      resolved.launch.status === 'unavailable' &&
      !inventory.awsFacts.has(key);
    const input = {
      ...resolved,
      ...(wildcard ? { launch: ok(wildcardLaunchResources(entry.parsed.value)) } : {}),
      ...(policyKeys === undefined ? {} : { policyKeys }),
    };
    const plan = buildSimulations(input);
    plans.push({
      key,
      cluster: cluster.name,
      controllerRole,
      requests: plan.requests,
      gaps: plan.gaps,
      input,
      ...(wildcard ? { notes: [{ group: 'launch' as const, message: WILDCARD_LAUNCH_NOTE }] } : {}),
    });
  }
  return plans;
}

/**
 * Whether EC2 Spot's service-linked role exists, read once when some NodePool allows Spot, recorded
 * on the NodeClasses such NodePools launch through; and, where it is absent, whether their
 * controller may create it (the simulation, identical across them, is made once). The role is the
 * account's, so the reader's account is the clusters' (one account per scan).
 */
async function planSpotServiceLinkedRole(
  inventory: Inventory,
  plans: readonly NodeClassPlan[],
  policies: RolePolicyPort | undefined
): Promise<{ plans: NodeClassPlan[]; exists: ReadonlyMap<string, Slice<boolean>> }> {
  // The NodeClasses Spot NodePools launch through, by facts key: those the answer is recorded on.
  const spotClasses = new Set(
    inventory.nodePools.flatMap((entry) => {
      if (!entry.parsed.ok || !allowsSpot(entry.parsed.value)) return [];
      const ref = entry.parsed.value.spec.template.spec.nodeClassRef.name;
      return inventory.nodeClasses
        .filter((nodeClass) => nodeClass.cluster === entry.cluster && nodeClass.name === ref)
        .map(factsKeyOf);
    })
  );
  if (spotClasses.size === 0) return { plans: [...plans], exists: new Map() };
  let exists: Slice<boolean>;
  if (policies?.roleExists === undefined) {
    exists = unavailable(
      'unknown',
      `Whether ${SPOT_SERVICE_LINKED_ROLE} exists was not read (no IAM reader for this scan).`
    );
  } else {
    try {
      exists = ok(await policies.roleExists(SPOT_SERVICE_LINKED_ROLE));
    } catch (error) {
      const reason = error instanceof SourceUnavailableError ? error.reason : 'unknown';
      const message = error instanceof Error ? error.message : String(error);
      exists = unavailable(reason, `iam:GetRole ${SPOT_SERVICE_LINKED_ROLE}: ${message}`);
    }
  }
  const byClass = new Map([...spotClasses].map((key) => [key, exists]));
  if (exists.status !== 'ok' || exists.value) return { plans: [...plans], exists: byClass };
  return {
    exists: byClass,
    plans: plans.map((plan) => {
      if (!spotClasses.has(plan.key) || plan.input === undefined) return plan;
      const request = spotServiceLinkedRoleRequest(plan.input.scope, plan.input.controller);
      return { ...plan, requests: [...plan.requests, request] };
    }),
  };
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
  const concurrency = options.concurrency ?? 4;
  return {
    input: 'permissions',
    async enrich(inventory: Inventory): Promise<Inventory> {
      const roleOf = controllerRoles(options.controllerRoles ?? {});
      const read = await policiesByPrincipal(
        options.policies,
        principalsToSimulate(inventory, roleOf),
        concurrency,
        rolesRead(inventory)
      );
      const spot = await planSpotServiceLinkedRole(
        inventory,
        planNodeClasses(
          inventory,
          roleOf,
          (principal) => read.get(principal)?.keys,
          options.wildcardUnresolvedLaunch === true
        ),
        options.policies
      );
      const plans = withEbsKmsKeyRequests(inventory, spot.plans);
      const requests = plans.flatMap((plan) => plan.requests);
      const batches = batchSimulations(
        requests,
        (principal) => read.get(principal)?.usage ?? UNKNOWN_USAGE
      );
      const cached =
        options.cache === undefined
          ? undefined
          : createCachingSimulator(
              options.simulator,
              options.cache,
              (principal) => read.get(principal)?.policies
            );
      const simulator = cached ?? options.simulator;
      await cached?.prefetch(batches.map((batch) => batch.request));
      const resultsByKey = await simulateBatches(simulator, batches, concurrency);
      // SCPs cannot be read, and one may compare a value the role's own policies do not: in an
      // account of an organization (IAM then reports OrganizationsDecisionDetail), requests
      // simulated with another NodeClass' values are simulated again with their own.
      const recheck = batches.flatMap((batch) =>
        batch.members.filter((member) => {
          const outcome = resultsByKey.get(member.key);
          return (
            outcome?.status === 'ok' &&
            usesRepresentative(batch, member) &&
            outcome.value.some((result) => result.allowedByOrganizations !== undefined)
          );
        })
      );
      if (recheck.length > 0) {
        const exact = batchSimulations(recheck, () => UNKNOWN_USAGE);
        await cached?.prefetch(exact.map((batch) => batch.request));
        for (const [key, outcome] of await simulateBatches(simulator, exact, concurrency))
          resultsByKey.set(key, outcome);
      }
      await cached?.flush();

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
        const principal =
          plan.controllerRole.status === 'found' ? plan.controllerRole.roleArn : undefined;
        const controllerPolicies = principal === undefined ? undefined : read.get(principal)?.read;
        const notes: PermissionNote[] = [
          ...(options.policySource === undefined ? [] : [{ message: options.policySource }]),
          ...(plan.notes ?? []),
        ];
        const facts: PermissionFacts = {
          controllerRole: plan.controllerRole,
          ...(controllerPolicies === undefined ? {} : { controllerPolicies }),
          simulations,
          gaps: plan.gaps,
          ...(dryRun === undefined ? {} : { dryRun }),
          ...(notes.length === 0 ? {} : { notes }),
        };
        const spotRole = spot.exists.get(plan.key);
        permissions.set(
          plan.key,
          spotRole === undefined ? facts : { ...facts, spotServiceLinkedRole: spotRole }
        );
      }
      return {
        ...inventory,
        inputs: new Set([...inventory.inputs, 'permissions']),
        permissions,
      };
    },
  };
}
