// Every IAM action each Lambda's adapters call, by handler and adapter. Each function's CDK role is
// built from its entry and a test keeps the two equal: add your adapter's `…Actions` export to the
// handlers that build that adapter (lambda/handlers/*.ts, lambda/handlers/service.ts).
import type { HandlerName } from '../../shared/config.js';
import { awsFactsActions } from './aws-facts-adapter.js';
import { dryRunActions } from './dry-run.js';
import { eksReaderActions } from './eks-reader.js';
import { findingStoreActions } from './finding-store.js';
import { iamEntitiesActions } from './iam-entities.js';
import { iamSimulatorActions } from './iam-simulator.js';
import { scanQueueActions } from './queue.js';
import { securityHubActions } from './security-hub.js';
import { simulationCacheActions } from './simulation-cache-store.js';
import { snsPublisherActions } from './sns-publisher.js';
import { tableRateBudgetActions } from './table-rate-budget.js';

/** Actions by adapter name. */
export type AdapterActions = Readonly<Record<string, readonly string[]>>;

/** The subset of an adapter's list a handler calls; a name not in the list fails to compile. */
function only<const T extends readonly string[]>(actions: T, ...used: T[number][]): T[number][] {
  return actions.filter((action) => used.includes(action));
}

/** The Lambdas that run a live scan: EKS reads, Kubernetes reads, simulations, state, publishing. */
export const SCANNING_HANDLERS = [
  'scan-cluster',
  'ami-event',
  'iam-event',
] as const satisfies readonly HandlerName[];

// Scans always name their cluster (one per queue message or stored NodeClass): no ListClusters.
const SCANNING: AdapterActions = {
  awsFacts: awsFactsActions,
  eksReader: eksReaderActions.filter((action) => action !== 'eks:ListClusters'),
  iamSimulator: iamSimulatorActions,
  findingStore: findingStoreActions,
  // Simulation verdicts kept across scans, in the same table.
  simulationCache: simulationCacheActions,
  // The account-wide IAM budget every scanning environment takes from, in the same table.
  iamBudget: tableRateBudgetActions,
  snsPublisher: snsPublisherActions,
  // Granted only when DryRun mode is configured (infra/permissions.ts DRY_RUN_ONLY_ACTIONS).
  dryRun: dryRunActions,
  // Granted only when the securityHub setting is on (infra/permissions.ts SECURITY_HUB_ONLY_ACTIONS).
  securityHub: securityHubActions,
};

/** Per function: the actions of the adapters it builds. */
export const HANDLER_ACTIONS: Readonly<Record<HandlerName, AdapterActions>> = {
  // createEksReader(...).listClusters: ListClusters, then DescribeCluster for tag filters.
  dispatch: {
    eksReader: only(eksReaderActions, 'eks:ListClusters', 'eks:DescribeCluster'),
    scanQueue: scanQueueActions,
  },
  'scan-cluster': SCANNING,
  'ami-event': SCANNING,
  'iam-event': { ...SCANNING, iamEntities: iamEntitiesActions },
};

/** Union over all functions, by adapter (what any scanner role may be granted). */
export const DECLARED_ACTIONS: AdapterActions = Object.fromEntries(
  Object.entries(
    Object.values(HANDLER_ACTIONS).reduce<Record<string, Set<string>>>((union, registry) => {
      for (const [adapter, actions] of Object.entries(registry)) {
        const known = union[adapter] ?? new Set<string>();
        for (const action of actions) known.add(action);
        union[adapter] = known;
      }
      return union;
    }, {})
  ).map(([adapter, actions]) => [adapter, [...actions]])
);
