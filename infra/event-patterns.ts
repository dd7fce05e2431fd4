// The EventBridge patterns the scanner reacts to (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ec2.html,
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event-cloudtrail.html). The home region's IAM rule
// and the us-east-1 forwarding rule share one pattern so they can never drift apart; the lists
// come from the event parser, so a rule never matches an event the handler would drop.
import type { EventPattern } from 'aws-cdk-lib/aws-events';
import { AMI_STATES_OF_INTEREST, IAM_EVENT_NAMES } from '../lambda/core/events.js';

/** The region IAM (a global service) delivers its CloudTrail events to, in the `aws` partition. */
export const IAM_EVENTS_REGION = 'us-east-1';

export const AMI_STATE_CHANGE_PATTERN: EventPattern = {
  source: ['aws.ec2'],
  detailType: ['EC2 AMI State Change'],
  detail: { State: [...AMI_STATES_OF_INTEREST] },
};

export const IAM_CHANGE_PATTERN: EventPattern = {
  source: ['aws.iam'],
  detailType: ['AWS API Call via CloudTrail'],
  detail: {
    eventSource: ['iam.amazonaws.com'],
    eventName: [...IAM_EVENT_NAMES],
    // A failed call changed nothing.
    errorCode: [{ exists: false }],
  },
};
