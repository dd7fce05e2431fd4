// Every IAM action the scanner's adapters call, by adapter. The CDK role policy is built from this
// registry and a test keeps the two equal: add your adapter's `…Actions` export here.
import { awsFactsActions } from './aws-facts-adapter.js';
import { eksReaderActions } from './eks-reader.js';
import { iamSimulatorActions } from './iam-simulator.js';

/** Actions the scanning Lambdas' role needs (read-only, plus publishing and state). */
export const DECLARED_ACTIONS: Readonly<Record<string, readonly string[]>> = {
  awsFacts: awsFactsActions,
  eksReader: eksReaderActions,
  iamSimulator: iamSimulatorActions,
};
