import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { AmiEventForwarder } from '../constructs/ami-event-forwarder.js';

export interface AmiEventForwardingStackProps extends StackProps {
  readonly homeRegion: string;
}

/**
 * The small stack, one per scanned region other than home, that forwards that region's AMI state
 * changes to the scanner's home region. Its region is the stack's `env.region`.
 */
export class AmiEventForwardingStack extends Stack {
  public readonly forwarder: AmiEventForwarder;

  constructor(scope: Construct, id: string, props: AmiEventForwardingStackProps) {
    super(scope, id, props);
    this.forwarder = new AmiEventForwarder(this, 'Forwarder', { homeRegion: props.homeRegion });
  }
}
