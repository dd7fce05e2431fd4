// What a launch asks of a KMS key, and who asks. The principal that calls RunInstances or
// CreateFleet needs these KMS actions on the key of every encrypted volume it creates, and EC2
// calls KMS on its behalf, so `kms:ViaService` is EC2 of the region and `kms:CallerAccount` the
// caller's account; its CreateGrant is for an AWS resource
// (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption-requirements.html,
// https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html). Karpenter launches
// through instant EC2 Fleets, which use no service-linked role
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-fleet-prerequisites.html), and no Auto
// Scaling group, so the controller role is the principal whose access decides.
import type { ContextEntry, ControllerRoleFound, SimulationRequest } from '../facts/permissions.js';
import type { PermissionScope } from '../iam/request-context.js';
import { simulationKey } from '../iam/request-context.js';

/** `kms:ReEncrypt` of the EBS documentation is both halves (`kms:ReEncrypt*`). */
export const EBS_LAUNCH_KMS_ACTIONS = [
  'kms:CreateGrant',
  'kms:Decrypt',
  'kms:DescribeKey',
  'kms:GenerateDataKeyWithoutPlaintext',
  'kms:ReEncryptFrom',
  'kms:ReEncryptTo',
] as const;

const CREATE_GRANT = 'kms:CreateGrant';

/** The AWS managed key EC2 uses for EBS when none is chosen: every account principal may use it through EC2. */
const AWS_MANAGED_EBS_ALIAS = 'alias/aws/ebs';

/** The condition values EC2's calls to KMS carry for a launch in `scope` (besides the principal's own). */
export function launchKmsContext(
  scope: { readonly region: string; readonly accountId: string; readonly partition: string },
  action: string
): Record<string, string> {
  const suffix = scope.partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com';
  return {
    'kms:ViaService': `ec2.${scope.region}.${suffix}`,
    'kms:CallerAccount': scope.accountId,
    'aws:PrincipalAccount': scope.accountId,
    ...(action === CREATE_GRANT ? { 'kms:GrantIsForAWSResource': 'true' } : {}),
  };
}

function entries(context: Readonly<Record<string, string>>): ContextEntry[] {
  return Object.entries(context).map(
    ([key, value]): ContextEntry => ({
      key,
      type: key === 'kms:GrantIsForAWSResource' ? 'boolean' : 'string',
      values: [value],
    })
  );
}

function principalTags(controller: ControllerRoleFound): ContextEntry[] {
  return Object.entries(controller.sessionTags).map(([key, value]) => ({
    key: `aws:PrincipalTag/${key}`,
    type: 'string' as const,
    values: [value],
  }));
}

function sorted(context: readonly ContextEntry[]): ContextEntry[] {
  return [...context].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * The controller role's identity policies on the keys (IAM decides wherever a key policy allows the
 * account): CreateGrant in its own context (`kms:GrantIsForAWSResource`), the rest together.
 */
export function ebsKmsKeyRequests(
  scope: PermissionScope,
  controller: ControllerRoleFound,
  keyArns: readonly string[]
): SimulationRequest[] {
  if (keyArns.length === 0) return [];
  const resourceArns = [...new Set(keyArns)].sort();
  const groups = [
    [CREATE_GRANT],
    EBS_LAUNCH_KMS_ACTIONS.filter((action) => action !== CREATE_GRANT),
  ] as const;
  return groups.map((actions) => {
    const context = sorted([
      ...entries(launchKmsContext(scope, actions[0] ?? '')),
      { key: 'aws:RequestedRegion', type: 'string', values: [scope.region] },
      ...principalTags(controller),
    ]);
    const body = {
      principalArn: controller.roleArn,
      actions: [...actions],
      resourceArns,
      context,
    };
    return { key: simulationKey(body), kind: 'use-ebs-kms-key', group: 'ebs-kms-key', ...body };
  });
}

/** `alias/aws/ebs`, or its ARN in any region and account. */
export function isAwsManagedEbsAlias(reference: string): boolean {
  return (
    reference === AWS_MANAGED_EBS_ALIAS ||
    /^arn:[^:]+:kms:[^:]*:[^:]*:alias\/aws\/ebs$/.test(reference)
  );
}
