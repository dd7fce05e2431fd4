// The package's CDK entry (`nodeclass-scanner/cdk`): what a consumer's app imports. The repo's own
// app (infra/app.ts) uses the same construct, with the same prebuilt Lambda bundles.
export type { IgnoreRule } from '../lambda/core/ignore-rules.js';
export type { Severity } from '../lambda/core/model.js';
export {
  AmiEventForwarder,
  type AmiEventForwarderProps,
  amiEventForwardingRegions,
  type ScannedRegionsInput,
} from './constructs/ami-event-forwarder.js';
export {
  CLOUDTRAIL_REQUIREMENT,
  IamEventForwarder,
  type IamEventForwarderProps,
} from './constructs/iam-event-forwarder.js';
export {
  NodeClassScanner,
  type NodeClassScannerProps,
  type SlackChannel,
} from './constructs/node-class-scanner.js';
export {
  defaultLambdaBundlesDirectory,
  SCANNER_RUNTIME,
  ScannerFunction,
} from './constructs/scanner-function.js';
export { IAM_EVENTS_REGION } from './event-patterns.js';
export {
  AmiEventForwardingStack,
  type AmiEventForwardingStackProps,
} from './stacks/ami-event-forwarding-stack.js';
export {
  IamEventForwardingStack,
  type IamEventForwardingStackProps,
} from './stacks/iam-event-forwarding-stack.js';
export { ScannerStack, type ScannerStackProps } from './stacks/scanner-stack.js';
