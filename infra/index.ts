// The package's CDK entry (`nodeclass-scanner/cdk`): what a consumer's app imports. The repo's own
// app (infra/app.ts) goes through here too, so it uses the construct exactly as consumers do.
export {
  NodeClassScanner,
  type NodeClassScannerProps,
  type SlackChannel,
} from './constructs/node-class-scanner.js';
export { IamEventForwardingStack } from './stacks/iam-event-forwarding-stack.js';
export { ScannerStack, type ScannerStackProps } from './stacks/scanner-stack.js';
