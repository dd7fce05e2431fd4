// The EventBridge patterns the scanner reacts to (aws-facts §1, §2). The home region's IAM rule
// and the us-east-1 forwarding rule share one pattern so they can never drift apart.
import type { EventPattern } from 'aws-cdk-lib/aws-events';

/** The region IAM (a global service) delivers its CloudTrail events to, in the `aws` partition. */
export const IAM_EVENTS_REGION = 'us-east-1';

/** The AMI states EC2 emits (`pending` is never emitted, deprecation has no event). */
export const AMI_STATES = ['available', 'failed', 'deregistered', 'disabled'] as const;

/** IAM calls that change a node or controller role's effective permissions or instance profile. */
export const IAM_EVENT_NAMES = [
  'PutRolePolicy',
  'DeleteRolePolicy',
  'AttachRolePolicy',
  'DetachRolePolicy',
  'CreatePolicyVersion',
  'SetDefaultPolicyVersion',
  'DeletePolicyVersion',
  'PutRolePermissionsBoundary',
  'DeleteRolePermissionsBoundary',
  'UpdateAssumeRolePolicy',
  'AddRoleToInstanceProfile',
  'RemoveRoleFromInstanceProfile',
  'DeleteInstanceProfile',
  'DeleteRole',
] as const;

export const AMI_STATE_CHANGE_PATTERN: EventPattern = {
  source: ['aws.ec2'],
  detailType: ['EC2 AMI State Change'],
  detail: { State: [...AMI_STATES] },
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
