import { Aws, CfnOutput, Duration, Stack, Validations } from 'aws-cdk-lib';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { EventBus as EventBusTarget } from 'aws-cdk-lib/aws-events-targets';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { IAM_CHANGE_PATTERN, IAM_EVENTS_REGION } from '../event-patterns.js';

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
    const homeBus = EventBus.fromEventBusArn(
      this,
      'HomeBus',
      `arn:${Aws.PARTITION}:events:${props.homeRegion}:${Aws.ACCOUNT_ID}:event-bus/default`
    );
    this.deadLetterQueue = new Queue(this, 'ForwardingDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter queue of the forwarding rule.',
    });
    const role = new Role(this, 'ForwardingRole', {
      assumedBy: new ServicePrincipal('events.amazonaws.com'),
      description: `nodeclass-scanner: put IAM change events on the default bus in ${props.homeRegion}`,
    });
    this.rule = new Rule(this, 'IamChangeRule', {
      description: `nodeclass-scanner: forward IAM role/instance-profile changes to ${props.homeRegion}`,
      eventPattern: IAM_CHANGE_PATTERN,
      targets: [new EventBusTarget(homeBus, { role, deadLetterQueue: this.deadLetterQueue })],
    });
    new CfnOutput(this, 'CloudTrailRequirement', { value: CLOUDTRAIL_REQUIREMENT });
  }
}
