// Every IAM action the scanner's adapters call, by adapter. The CDK role policy is built from this
// registry and a test keeps the two equal: add your adapter's `…Actions` export here.
import { awsFactsActions } from './aws-facts-adapter.js';
import { dryRunActions } from './dry-run.js';
import { eksReaderActions } from './eks-reader.js';
import { findingStoreActions } from './finding-store.js';
import { iamEntitiesActions } from './iam-entities.js';
import { iamSimulatorActions } from './iam-simulator.js';
import { scanQueueActions } from './queue.js';
import { snsPublisherActions } from './sns-publisher.js';

/** Actions the scanning Lambdas' role needs (read-only, plus publishing and state). */
export const DECLARED_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  awsFacts: awsFactsActions,
  eksReader: eksReaderActions,
  iamSimulator: iamSimulatorActions,
  findingStore: findingStoreActions,
  snsPublisher: snsPublisherActions,
  scanQueue: scanQueueActions,
  iamEntities: iamEntitiesActions,
  // Granted only when DryRun mode is configured (infra/permissions.ts DRY_RUN_ONLY_ACTIONS).
  dryRun: dryRunActions,
};
