import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { CLOUDTRAIL_REQUIREMENT } from '../constructs/iam-event-forwarder.js';
import { NodeClassScanner, type NodeClassScannerProps } from '../constructs/node-class-scanner.js';
import { IAM_EVENTS_REGION } from '../event-patterns.js';

export interface ScannerStackProps extends StackProps {
  /** The construct's props; a function when they need constructs of this stack (an imported VPC). */
  readonly scanner: NodeClassScannerProps | ((stack: Stack) => NodeClassScannerProps);
}

/** The scanner in its home region. */
export class ScannerStack extends Stack {
  public readonly scanner: NodeClassScanner;

  constructor(scope: Construct, id: string, props: ScannerStackProps) {
    super(scope, id, props);
    const scannerProps = typeof props.scanner === 'function' ? props.scanner(this) : props.scanner;
    this.scanner = new NodeClassScanner(this, 'Scanner', scannerProps);
    if (this.region === IAM_EVENTS_REGION) {
      // Home is where IAM delivers: the local IAM rule needs the same trail, and no forwarder.
      new CfnOutput(this, 'CloudTrailRequirement', { value: CLOUDTRAIL_REQUIREMENT });
    }
  }
}
