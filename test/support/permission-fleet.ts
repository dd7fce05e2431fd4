// A healthy three-NodeClass fleet as Karpenter runs it at a given release, and a scan of its
// controller-* checks through the live IAM adapters over an independent policy engine.
import { createPermissionsEnricher } from '../../lambda/app/collect-permissions.js';
import type { FindingDraft } from '../../lambda/core/check.js';
import { controllerCanDiscover } from '../../lambda/core/checks/controller-can-discover.js';
import { controllerCanLaunch } from '../../lambda/core/checks/controller-can-launch.js';
import { controllerCanManageInstanceProfile } from '../../lambda/core/checks/controller-can-manage-instance-profile.js';
import { controllerCanPassNodeRole } from '../../lambda/core/checks/controller-can-pass-node-role.js';
import type { AwsNodeClassFacts } from '../../lambda/core/facts/aws.js';
import type { NamedPolicy } from '../../lambda/core/facts/permissions.js';
import { ok } from '../../lambda/core/facts/slice.js';
import type { SimulationCachePort } from '../../lambda/core/iam/simulation-cache.js';
import { emptyInventory, type Inventory, nodeClassKey } from '../../lambda/core/inventory.js';
import { parseNodePool } from '../../lambda/core/schema.js';
import { parseKarpenterVersion } from '../../lambda/core/version.js';
import { aNodeClassEntry, aNodeClassObject } from './builders.js';
import { type EngineRole, engineIam } from './engine-iam.js';
import { aCluster, aNodePool, CONTROLLER_ROLE, NODE_ROLE } from './permission-builders.js';

export const ACCOUNT = '111122223333';
export const SCOPE = {
  partition: 'aws',
  region: 'us-east-1',
  accountId: ACCOUNT,
  clusterName: 'demo',
};
const PERMISSION_CHECKS = [
  controllerCanLaunch,
  controllerCanPassNodeRole,
  controllerCanManageInstanceProfile,
  controllerCanDiscover,
];
const NOW = { now: new Date('2026-11-26T00:00:00Z') };
export const OTHER_NODE_ROLE = `arn:aws:iam::${ACCOUNT}:role/BatchNodeRole`;

const launchStatus = (image: string, subnets: string[], groups: string[]) => ({
  amis: [{ id: image }],
  subnets: subnets.map((id) => ({ id })),
  securityGroups: groups.map((id) => ({ id })),
});

/**
 * Three healthy NodeClasses as Karpenter runs them at `release`: two in role mode with their own
 * tags and NodePools, one in instanceProfile mode (with a capacity reservation where the release
 * has them).
 */
export function fleet(
  release: string,
  options: { batchRole?: string; batchTags?: Record<string, string> } = {}
): Inventory {
  const version = parseKarpenterVersion(release);
  const cluster = {
    ...aCluster(),
    ...(version === undefined ? {} : { karpenterVersion: version }),
  };
  const reservations = version !== undefined && version.minor >= 3;
  const objects = [
    aNodeClassObject({
      name: 'default',
      metadata: { uid: 'uid-default' },
      spec: { tags: { team: 'platform' } },
      status: {
        ...launchStatus('ami-0aaa', ['subnet-a', 'subnet-b'], ['sg-1']),
        instanceProfile: 'demo_111',
      },
    }),
    aNodeClassObject({
      name: 'batch',
      metadata: { uid: 'uid-batch' },
      spec: {
        tags: options.batchTags ?? { team: 'data', 'cost-center': 'analytics' },
        ...(options.batchRole === undefined ? {} : { role: options.batchRole.split('/').at(-1) }),
      },
      status: {
        ...launchStatus('ami-0bbb', ['subnet-c'], ['sg-1', 'sg-2']),
        instanceProfile: 'demo_222',
      },
    }),
    aNodeClassObject({
      name: 'pinned',
      spec: {
        role: undefined,
        instanceProfile: 'KarpenterNodeInstanceProfile-demo',
        amiSelectorTerms: [{ id: 'ami-0ccc' }],
      },
      status: {
        ...launchStatus('ami-0ccc', ['subnet-a'], ['sg-1']),
        ...(reservations ? { capacityReservations: [{ id: 'cr-0abc' }] } : {}),
        instanceProfile: 'KarpenterNodeInstanceProfile-demo',
      },
    }),
  ];
  const pinnedFacts: AwsNodeClassFacts = {
    nodeRole: ok({
      source: 'instance-profile',
      name: 'KarpenterNodeRole-demo',
      role: { name: 'KarpenterNodeRole-demo', arn: NODE_ROLE, path: '/', attachedPolicyArns: [] },
    }),
  };
  return emptyInventory({
    inputs: new Set(['spec', 'aws', 'cluster']),
    clusters: [cluster],
    nodeClasses: objects.map((raw) => aNodeClassEntry(raw, 'demo')),
    nodePools: [
      aNodePool('general', 'default'),
      aNodePool('batch', 'batch'),
      aNodePool('batch-spot', 'batch'),
      aNodePool('reserved', 'pinned'),
    ].map((raw) => {
      const name = (raw as { metadata: { name: string } }).metadata.name;
      return { cluster: 'demo', name, parsed: parseNodePool(raw) };
    }),
    awsFacts: new Map([[nodeClassKey('demo', 'pinned'), pinnedFacts]]),
  });
}

export interface Verdicts {
  /** `<check> <nodeclass>` → status. */
  readonly status: Record<string, string>;
  readonly findings: (FindingDraft & { readonly checkId: string })[];
}

/** The controller role's policies: attached managed policies, a boundary and the account's SCPs. */
export interface ControllerPolicies {
  readonly managed: readonly NamedPolicy[];
  readonly boundary?: NamedPolicy;
  readonly scps?: readonly NamedPolicy[];
}

/** The controller role as the engine-backed IAM client serves it. */
export function controllerEngineRole(role: ControllerPolicies): EngineRole {
  return {
    arn: CONTROLLER_ROLE,
    managed: role.managed,
    ...(role.boundary === undefined ? {} : { boundary: role.boundary }),
    ...(role.scps === undefined
      ? {}
      : { scps: role.scps.map((scp) => ({ id: scp.name, document: scp.document })) }),
  };
}

export async function scanWith(
  inventory: Inventory,
  role: ControllerPolicies,
  options: { readonly cache?: SimulationCachePort } = {}
): Promise<Verdicts & { readonly simulations: number }> {
  const iam = engineIam(controllerEngineRole(role));
  const enriched = await createPermissionsEnricher({
    simulator: iam.simulator,
    policies: iam.policies,
    ...(options.cache === undefined ? {} : { cache: { port: options.cache, ttlSeconds: 3600 } }),
  }).enrich(inventory);
  const findings = PERMISSION_CHECKS.flatMap((check) =>
    check.evaluate(enriched, NOW).map((draft) => ({ ...draft, checkId: check.id }))
  );
  const status: Record<string, string> = {};
  for (const finding of findings)
    status[`${finding.checkId} ${finding.resource?.name}`] = finding.status;
  return { status, findings, simulations: iam.simulations() };
}

export const failing = (verdicts: Verdicts) =>
  Object.entries(verdicts.status)
    .filter(([, status]) => status !== 'pass' && status !== 'not-applicable')
    .map(([key, status]) => `${key}: ${status}`)
    .sort();
