// EventBridge events the service reacts to, parsed with zod (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ec2.html,
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-service-event-cloudtrail.html). Anything that
// does not parse is dropped by the caller with a reason, never retried.
import * as z from 'zod';

/** The AMI states EC2 emits (`pending` is never emitted, deprecation has no event). */
export const AMI_STATES_OF_INTEREST = ['available', 'failed', 'deregistered', 'disabled'] as const;
export type AmiStateOfInterest = (typeof AMI_STATES_OF_INTEREST)[number];

export const AmiStateChangeEventSchema = z.looseObject({
  id: z.string().min(1),
  source: z.literal('aws.ec2'),
  'detail-type': z.literal('EC2 AMI State Change'),
  account: z.string().optional(),
  region: z.string().min(1),
  time: z.string().optional(),
  detail: z.looseObject({
    ImageId: z.string().regex(/^ami-[0-9a-f]{8,17}$/, 'not an AMI id'),
    State: z.string().min(1),
    ErrorMessage: z.string().optional(),
    RequestId: z.string().optional(),
  }),
});
export type AmiStateChangeEvent = z.infer<typeof AmiStateChangeEventSchema>;

/** IAM API calls that change a role's effective permissions or its instance profiles. */
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
export type IamEventName = (typeof IAM_EVENT_NAMES)[number];

const iamName = z.string().min(1).max(512);
const policyArn = z
  .string()
  .regex(/^arn:[a-z-]+:iam::(\d{12}|aws):policy\/.+$/, 'not a policy ARN');

/** `requestParameters` per eventName: only the fields that name what changed. */
const REQUEST_PARAMETERS: Readonly<Record<IamEventName, z.ZodType<IamRequestParameters>>> = {
  PutRolePolicy: z.looseObject({ roleName: iamName }),
  DeleteRolePolicy: z.looseObject({ roleName: iamName }),
  AttachRolePolicy: z.looseObject({ roleName: iamName, policyArn }),
  DetachRolePolicy: z.looseObject({ roleName: iamName, policyArn }),
  CreatePolicyVersion: z.looseObject({ policyArn, setAsDefault: z.boolean().optional() }),
  SetDefaultPolicyVersion: z.looseObject({ policyArn }),
  DeletePolicyVersion: z.looseObject({ policyArn }),
  PutRolePermissionsBoundary: z.looseObject({ roleName: iamName }),
  DeleteRolePermissionsBoundary: z.looseObject({ roleName: iamName }),
  UpdateAssumeRolePolicy: z.looseObject({ roleName: iamName }),
  AddRoleToInstanceProfile: z.looseObject({ roleName: iamName, instanceProfileName: iamName }),
  RemoveRoleFromInstanceProfile: z.looseObject({ roleName: iamName, instanceProfileName: iamName }),
  DeleteInstanceProfile: z.looseObject({ instanceProfileName: iamName }),
  DeleteRole: z.looseObject({ roleName: iamName }),
};

export interface IamRequestParameters {
  readonly roleName?: string;
  readonly policyArn?: string;
  readonly instanceProfileName?: string;
  readonly setAsDefault?: boolean | undefined;
}

const IamApiCallEventSchema = z.looseObject({
  id: z.string().min(1),
  source: z.literal('aws.iam'),
  'detail-type': z.literal('AWS API Call via CloudTrail'),
  region: z.string().optional(),
  detail: z.looseObject({
    eventSource: z.literal('iam.amazonaws.com'),
    eventName: z.string().min(1),
    eventID: z.string().optional(),
    errorCode: z.string().optional(),
    requestParameters: z.unknown().optional(),
  }),
});

/** What an IAM event says changed; a policy ARN still has to be mapped to its roles. */
export interface IamChange {
  readonly eventId: string;
  readonly eventName: IamEventName;
  readonly roleNames: readonly string[];
  readonly policyArns: readonly string[];
  readonly instanceProfileNames: readonly string[];
}

export type ParsedEvent<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly reason: string; readonly detail: string };

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(event)'}: ${issue.message}`)
    .join('; ');
}

export function parseAmiStateChange(
  raw: unknown
): ParsedEvent<AmiStateChangeEvent & { detail: { State: AmiStateOfInterest } }> {
  const parsed = AmiStateChangeEventSchema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, reason: 'malformed-event', detail: describeIssues(parsed.error) };
  const state = parsed.data.detail.State;
  if (!(AMI_STATES_OF_INTEREST as readonly string[]).includes(state)) {
    return { ok: false, reason: 'ami-state-not-handled', detail: `State "${state.slice(0, 50)}"` };
  }
  return {
    ok: true,
    value: parsed.data as AmiStateChangeEvent & { detail: { State: AmiStateOfInterest } },
  };
}

export function parseIamChange(raw: unknown): ParsedEvent<IamChange> {
  const parsed = IamApiCallEventSchema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, reason: 'malformed-event', detail: describeIssues(parsed.error) };
  const { detail } = parsed.data;
  if (!(IAM_EVENT_NAMES as readonly string[]).includes(detail.eventName)) {
    return {
      ok: false,
      reason: 'iam-event-not-handled',
      detail: `eventName "${detail.eventName.slice(0, 80)}"`,
    };
  }
  // A failed call changed nothing.
  if (detail.errorCode !== undefined) {
    return {
      ok: false,
      reason: 'iam-call-failed',
      detail: `errorCode ${detail.errorCode.slice(0, 80)}`,
    };
  }
  const eventName = detail.eventName as IamEventName;
  const params = REQUEST_PARAMETERS[eventName].safeParse(detail.requestParameters);
  if (!params.success) {
    return {
      ok: false,
      reason: 'malformed-event',
      detail: `requestParameters of ${eventName}: ${describeIssues(params.error)}`,
    };
  }
  // A new version that is not made the default does not change effective permissions.
  if (eventName === 'CreatePolicyVersion' && params.data.setAsDefault !== true) {
    return {
      ok: false,
      reason: 'policy-version-not-default',
      detail: 'CreatePolicyVersion without setAsDefault',
    };
  }
  return {
    ok: true,
    value: {
      eventId: parsed.data.id,
      eventName,
      roleNames: params.data.roleName ? [params.data.roleName] : [],
      policyArns: params.data.policyArn ? [params.data.policyArn] : [],
      instanceProfileNames: params.data.instanceProfileName
        ? [params.data.instanceProfileName]
        : [],
    },
  };
}
