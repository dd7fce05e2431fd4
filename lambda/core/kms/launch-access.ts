// What a launch asks of a KMS key, and who asks. The principal that calls RunInstances or
// CreateFleet needs these KMS actions on the key of every encrypted volume it creates, and EC2
// calls KMS on its behalf, so `kms:ViaService` is EC2 of the region (its endpoint name, whose DNS
// suffix is the partition's) and `kms:CallerAccount` the caller's account; its CreateGrant is for
// an AWS resource (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption-requirements.html,
// https://docs.aws.amazon.com/kms/latest/developerguide/conditions-kms.html). Karpenter launches
// through instant EC2 Fleets and no Auto Scaling group, so the controller role's access is what
// this module evaluates. The EC2 Fleet prerequisites say an instant fleet does not require
// AWSServiceRoleForEC2Fleet, yet the same page asks that this role (and, for Spot instances,
// AWSServiceRoleForEC2Spot) be granted use of a customer managed key when the fleet launches an
// encrypted AMI or EBS snapshot
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-fleet-prerequisites.html#ec2-fleet-service-linked-roles-access-to-cmks);
// the service-linked roles' key access is not evaluated.
import type { ContextEntry, ControllerRoleFound, SimulationRequest } from '../facts/permissions.js';
import type { PermissionScope } from '../iam/request-context.js';
import { simulationKey } from '../iam/request-context.js';
import { type Partition, partitionDnsSuffix } from '../region.js';

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
  scope: { readonly region: string; readonly accountId: string; readonly partition: Partition },
  action: string
): Record<string, string> {
  return {
    'kms:ViaService': `ec2.${scope.region}.${partitionDnsSuffix(scope.partition)}`,
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

const AWS_MANAGED_EBS_ALIAS_ARN = /^arn:[^:]+:kms:([^:]*):([^:]*):alias\/aws\/ebs$/;

/** `alias/aws/ebs` in any form: the key is judged from the reference alone, never read. */
export function namesAwsManagedEbsAlias(reference: string): boolean {
  return reference === AWS_MANAGED_EBS_ALIAS || AWS_MANAGED_EBS_ALIAS_ARN.test(reference);
}

/** Where the launch runs, as far as the scan knows it. */
export interface LaunchPlace {
  readonly region?: string;
  readonly accountId?: string;
}

/**
 * Why an `alias/aws/ebs` ARN cannot encrypt the launch's volumes: EBS needs a key of the volume's
 * region, and an AWS managed key serves only its own account (its policy, which only AWS may change,
 * allows no other: https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-modifying.html).
 * Undefined for the bare alias, another reference, or an ARN that matches what is known.
 */
export function awsManagedEbsAliasMismatch(
  reference: string,
  place: LaunchPlace
): string | undefined {
  const match = AWS_MANAGED_EBS_ALIAS_ARN.exec(reference);
  if (match === null) return undefined;
  const [, region = '', account = ''] = match;
  const problems: string[] = [];
  if (place.region !== undefined && region !== place.region)
    problems.push(
      `it is in ${region === '' ? 'no region' : region}, and EBS needs a key of the volume's region ${place.region}`
    );
  if (place.accountId !== undefined && account !== place.accountId)
    problems.push(
      `it belongs to account ${account === '' ? '(none)' : account}, and an AWS managed key serves only its own account (${place.accountId} launches here)`
    );
  return problems.length === 0 ? undefined : problems.join('; ');
}

/** `alias/aws/ebs`, or its ARN in the launch's region and account (each where known). */
export function isAwsManagedEbsAlias(reference: string, place: LaunchPlace): boolean {
  return (
    namesAwsManagedEbsAlias(reference) && awsManagedEbsAliasMismatch(reference, place) === undefined
  );
}
