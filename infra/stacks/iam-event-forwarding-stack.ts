import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { IamEventForwarder } from '../constructs/iam-event-forwarder.js';

export interface IamEventForwardingStackProps extends StackProps {
  readonly homeRegion: string;
}

/** The small us-east-1 stack that forwards IAM change events to the scanner's home region. */
export class IamEventForwardingStack extends Stack {
  public readonly forwarder: IamEventForwarder;

  constructor(scope: Construct, id: string, props: IamEventForwardingStackProps) {
    super(scope, id, props);
    this.forwarder = new IamEventForwarder(this, 'Forwarder', { homeRegion: props.homeRegion });
  }
}
