import { CfnOutput, Stack } from 'aws-cdk-lib';
import type { Rule } from 'aws-cdk-lib/aws-events';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { IAM_CHANGE_PATTERN, IAM_EVENTS_REGION } from '../event-patterns.js';
import { forwardToHomeBus } from './home-bus-forwarding.js';

export interface IamEventForwarderProps {
  /** The scanner's region: IAM change events go to its default event bus. */
  readonly homeRegion: string;
}

/** What the stack output says about the CloudTrail trail IAM events depend on. */
export const CLOUDTRAIL_REQUIREMENT =
  'Relies on an existing CloudTrail trail it cannot see: IAM change events reach EventBridge only ' +
  `if a trail logs management write events in ${IAM_EVENTS_REGION} (any multi-region trail does). ` +
  'This stack neither creates nor verifies one; without it, IAM changes are caught by the scheduled scan only.';

/**
 * IAM delivers its CloudTrail events only in us-east-1. This rule, deployed there, forwards the
 * scanner's IAM pattern to the home region's default bus (same account: a role, no bus policy).
 */
export class IamEventForwarder extends Construct {
  public readonly rule: Rule;
  public readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: IamEventForwarderProps) {
    super(scope, id);
    const region = Stack.of(this).region;
    if (region !== IAM_EVENTS_REGION) {
      throw new Error(
        `IamEventForwarder must be deployed in ${IAM_EVENTS_REGION}, where IAM delivers its events (got ${region})`
      );
    }
    ({ rule: this.rule, deadLetterQueue: this.deadLetterQueue } = forwardToHomeBus(this, {
      homeRegion: props.homeRegion,
      ruleId: 'IamChangeRule',
      ruleDescription: `nodeclass-scanner: forward IAM role/instance-profile changes to ${props.homeRegion}`,
      roleDescription: `nodeclass-scanner: put IAM change events on the default bus in ${props.homeRegion}`,
      eventPattern: IAM_CHANGE_PATTERN,
    }));
    new CfnOutput(this, 'CloudTrailRequirement', { value: CLOUDTRAIL_REQUIREMENT });
  }
}
