import type { AwsNodeClassFacts } from '../../lambda/core/facts/aws.js';
import type { ClusterState } from '../../lambda/core/facts/cluster.js';
import type {
  ControllerRoleFound,
  PermissionFacts,
  SimulationOutcome,
  SimulationRequest,
  SimulationResult,
} from '../../lambda/core/facts/permissions.js';
import { ok, unavailable } from '../../lambda/core/facts/slice.js';
import { resolveControllerRole } from '../../lambda/core/iam/controller-role.js';
import { permissionScopeOf, simulationInputOf } from '../../lambda/core/iam/nodeclass-inputs.js';
import { buildSimulations } from '../../lambda/core/iam/request-context.js';
import type { ClusterContext, Inventory } from '../../lambda/core/inventory.js';
import { clusterOf, emptyInventory, nodeClassKey } from '../../lambda/core/inventory.js';
import { parseNodePool } from '../../lambda/core/schema.js';
import { parseKarpenterVersion } from '../../lambda/core/version.js';
import { aNodeClassEntry, aNodeClassObject } from './builders.js';

const ACCOUNT = '111122223333';
export const CONTROLLER_ROLE = `arn:aws:iam::${ACCOUNT}:role/KarpenterController-demo`;
export const NODE_ROLE = `arn:aws:iam::${ACCOUNT}:role/KarpenterNodeRole-demo`;
export const GPU_NODE_ROLE = `arn:aws:iam::${ACCOUNT}:role/team/GpuNodeRole`;

export function aControllerRole(overrides: Partial<ControllerRoleFound> = {}): ControllerRoleFound {
  return {
    status: 'found',
    roleArn: CONTROLLER_ROLE,
    source: 'irsa',
    sessionTags: {},
    lookedAt: [],
    notes: [],
    ...overrides,
  };
}

/** Cluster state with the controller in kube-system/karpenter and the given identity wiring. */
export function aClusterState(
  options: {
    irsaRoleArn?: string;
    associations?: ClusterState['podIdentityAssociations'];
    clusterNameEnv?: string;
  } = {}
): ClusterState {
  return {
    read: ok({ nodeClassCount: 2 }),
    controller: ok({
      namespace: 'kube-system',
      serviceAccount: 'karpenter',
      ...(options.irsaRoleArn === undefined ? {} : { irsaRoleArn: options.irsaRoleArn }),
      ...(options.clusterNameEnv === undefined ? {} : { clusterNameEnv: options.clusterNameEnv }),
    }),
    podIdentityAssociations: options.associations ?? ok([]),
  };
}

export function aCluster(overrides: Partial<ClusterContext> = {}): ClusterContext {
  const version = parseKarpenterVersion('1.7.0');
  return {
    name: 'demo',
    region: 'us-east-1',
    partition: 'aws',
    ...(version ? { karpenterVersion: version } : {}),
    aws: ok({ accountId: ACCOUNT, arn: `arn:aws:eks:us-east-1:${ACCOUNT}:cluster/demo` }),
    state: aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
    ...overrides,
  };
}

/** Role mode: Karpenter status already resolved image, subnets, SGs and its own profile. */
export function aRoleModeNodeClass(): Record<string, unknown> {
  return aNodeClassObject({
    name: 'default',
    metadata: { uid: 'uid-default' },
    spec: { tags: { team: 'platform' } },
    status: {
      amis: [{ id: 'ami-0123456789abcdef0' }],
      subnets: [{ id: 'subnet-aaa' }, { id: 'subnet-bbb' }],
      securityGroups: [{ id: 'sg-111' }],
      instanceProfile: 'demo_1234567890',
    },
  });
}

/** instanceProfile mode, with an ssmParameter AMI term and a capacity reservation. */
function anInstanceProfileNodeClass(): Record<string, unknown> {
  return aNodeClassObject({
    name: 'gpu',
    spec: {
      role: undefined,
      instanceProfile: 'GpuNodeProfile',
      amiSelectorTerms: [{ ssmParameter: '/team/gpu/ami' }],
    },
    status: {
      amis: [{ id: 'ami-0fedcba9876543210' }],
      subnets: [{ id: 'subnet-ccc' }],
      securityGroups: [{ id: 'sg-222' }, { id: 'sg-333' }],
      capacityReservations: [{ id: 'cr-0abc' }],
      instanceProfile: 'GpuNodeProfile',
    },
  });
}

export function aNodePool(name: string, nodeClass: string): unknown {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
          // Required by the NodePool CRD: an object without it never reaches a cluster.
          requirements: [],
        },
      },
    },
  };
}

export const GPU_FACTS: AwsNodeClassFacts = {
  nodeRole: ok({
    source: 'instance-profile',
    name: 'GpuNodeRole',
    role: { name: 'GpuNodeRole', arn: GPU_NODE_ROLE, path: '/team/', attachedPolicyArns: [] },
  }),
};

/** Two NodeClasses in cluster `demo`: `default` (role mode, NodePool `general`) and `gpu`. */
export function aPermissionsInventory(overrides: Partial<Inventory> = {}): Inventory {
  const cluster = aCluster();
  const objects = [aRoleModeNodeClass(), anInstanceProfileNodeClass()];
  return emptyInventory({
    inputs: new Set(['spec', 'aws', 'cluster']),
    clusters: [cluster],
    nodeClasses: objects.map((raw) => aNodeClassEntry(raw, 'demo')),
    nodePools: [
      { cluster: 'demo', name: 'general', parsed: parseNodePool(aNodePool('general', 'default')) },
    ],
    awsFacts: new Map([[nodeClassKey('demo', 'gpu'), GPU_FACTS]]),
    ...overrides,
  });
}

export type Decide = (
  request: SimulationRequest,
  action: string,
  resource: string
) => Partial<SimulationResult> | 'unavailable';

/** The inventory with simulations built by core and answered by `decide` (default: allowed). */
export function withSimulations(
  inventory: Inventory,
  decide: Decide = () => ({}),
  extra: Partial<PermissionFacts> = {}
): Inventory {
  const permissions = new Map<string, PermissionFacts>();
  for (const entry of inventory.nodeClasses) {
    if (!entry.parsed.ok) continue;
    const cluster = clusterOf(inventory, entry.cluster) ?? aCluster();
    const controllerRole = resolveControllerRole(cluster);
    if (controllerRole.status !== 'found') {
      permissions.set(nodeClassKey(entry.cluster, entry.name), {
        controllerRole,
        simulations: [],
        gaps: [],
        ...extra,
      });
      continue;
    }
    const scope = permissionScopeOf(cluster, controllerRole);
    if (scope.status !== 'ok') throw new Error(scope.message);
    const plan = buildSimulations(
      simulationInputOf(inventory, entry, entry.parsed.value, scope.value, controllerRole)
    );
    const simulations: SimulationOutcome[] = plan.requests.map((request) => {
      const results: SimulationResult[] = [];
      for (const action of request.actions) {
        for (const resource of request.resourceArns) {
          const decided = decide(request, action, resource);
          if (decided === 'unavailable')
            return { request, results: unavailable('throttled', 'Rate exceeded') };
          results.push({
            action,
            resource,
            decision: 'allowed',
            matchedStatements: [],
            missingContextValues: [],
            ...decided,
          });
        }
      }
      return { request, results: ok(results) };
    });
    permissions.set(nodeClassKey(entry.cluster, entry.name), {
      controllerRole,
      simulations,
      gaps: plan.gaps,
      ...extra,
    });
  }
  return { ...inventory, inputs: new Set([...inventory.inputs, 'permissions']), permissions };
}
