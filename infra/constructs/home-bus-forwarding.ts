// What every forwarding rule shares: a rule on this region's default bus that puts the events its
// pattern matches on the scanner's home-region default bus. Same account, so no bus policy: a role
// only EventBridge may assume, allowed `events:PutEvents` on that one bus, and an encrypted
// dead-letter queue for deliveries that fail. The children keep the ids the IAM forwarder always
// had, so its resources never move.
import { Aws, Duration, Validations } from 'aws-cdk-lib';
import { EventBus, type EventPattern, Rule } from 'aws-cdk-lib/aws-events';
import { EventBus as EventBusTarget } from 'aws-cdk-lib/aws-events-targets';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

export interface HomeBusForwardingProps {
  /** The scanner's region: events go to its default event bus. */
  readonly homeRegion: string;
  /** Construct id of the rule. */
  readonly ruleId: string;
  readonly ruleDescription: string;
  readonly roleDescription: string;
  readonly eventPattern: EventPattern;
}

export interface HomeBusForwarding {
  readonly rule: Rule;
  readonly role: Role;
  readonly deadLetterQueue: Queue;
}

/** The home region's default bus, by ARN (in this stack's partition and account). */
function homeBusArn(homeRegion: string): string {
  return `arn:${Aws.PARTITION}:events:${homeRegion}:${Aws.ACCOUNT_ID}:event-bus/default`;
}

export function forwardToHomeBus(
  scope: Construct,
  props: HomeBusForwardingProps
): HomeBusForwarding {
  const homeBus = EventBus.fromEventBusArn(scope, 'HomeBus', homeBusArn(props.homeRegion));
  const deadLetterQueue = new Queue(scope, 'ForwardingDeadLetters', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(deadLetterQueue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: 'This queue is itself the dead-letter queue of the forwarding rule.',
  });
  const role = new Role(scope, 'ForwardingRole', {
    assumedBy: new ServicePrincipal('events.amazonaws.com'),
    description: props.roleDescription,
  });
  const rule = new Rule(scope, props.ruleId, {
    description: props.ruleDescription,
    eventPattern: props.eventPattern,
    targets: [new EventBusTarget(homeBus, { role, deadLetterQueue })],
  });
  return { rule, role, deadLetterQueue };
}
