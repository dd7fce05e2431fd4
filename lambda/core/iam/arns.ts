// ARNs of the resources Karpenter's requests touch, per partition (partitions as in the AWS SDK's partitions.json).
import type { Partition } from '../region.js';

export interface ArnScope {
  readonly partition: Partition;
  readonly region: string;
  readonly accountId: string;
}

/** `arn:<p>:ec2:<r>:<account>:<resource>`; images and snapshots have no account in their ARN. */
export function ec2Arn(scope: ArnScope, resource: string): string {
  const account =
    resource.startsWith('image/') || resource.startsWith('snapshot/') ? '' : scope.accountId;
  return `arn:${scope.partition}:ec2:${scope.region}:${account}:${resource}`;
}

export function iamArn(scope: ArnScope, resource: string): string {
  return `arn:${scope.partition}:iam::${scope.accountId}:${resource}`;
}

/** The resource part of an ARN (`arn:aws:iam::1:role/a/b` → `role/a/b`); other values unchanged. */
export function arnResource(value: string): string {
  return value.startsWith('arn:') ? value.split(':').slice(5).join(':') : value;
}

/** A value of spec.role / spec.instanceProfile that is an ARN or carries an IAM path, not a name. */
export function isIamPathOrArn(value: string): boolean {
  return value.startsWith('arn:') || value.includes('/');
}

/** Last path segment of an ARN or path (`arn:aws:iam::1:instance-profile/a/b` → `b`). */
export function bareIamName(value: string): string {
  const segments = arnResource(value)
    .split('/')
    .filter((segment) => segment !== '');
  return segments.at(-1) ?? value;
}

/** An SSM parameter name or ARN (both valid in `ssmParameter`) → its name (`/team/ami`). */
export function ssmParameterPath(nameOrArn: string): string {
  if (!nameOrArn.startsWith('arn:')) return nameOrArn;
  return arnResource(nameOrArn).replace(/^parameter/, '');
}

/**
 * The ARN of an SSM parameter given by name or ARN. Public parameters (`/aws/service/…`) belong
 * to no account; the ARN drops the name's leading `/`.
 */
export function ssmParameterArn(scope: ArnScope, name: string): string {
  if (name.startsWith('arn:')) return name;
  const path = name.replace(/^\/+/, '');
  const account = path.startsWith('aws/service/') ? '' : scope.accountId;
  return `arn:${scope.partition}:ssm:${scope.region}:${account}:parameter/${path}`;
}

export function eksClusterArn(scope: ArnScope, clusterName: string): string {
  return `arn:${scope.partition}:eks:${scope.region}:${scope.accountId}:cluster/${clusterName}`;
}

/** A role name, path or ARN as written in `spec.role` → the role's ARN. */
export function roleArnOf(scope: ArnScope, role: string): string {
  if (role.startsWith('arn:')) return role;
  const path = role.replace(/^\/+/, '');
  return iamArn(scope, `role/${path}`);
}

/** Account id of an ARN (`arn:aws:iam::123456789012:role/x` → `123456789012`). */
export function accountOfArn(arn: string): string | undefined {
  const account = arn.split(':')[4];
  return account !== undefined && /^\d{12}$/.test(account) ? account : undefined;
}

/** The service principal EC2 presents as `iam:PassedToService` in this partition. */
export function ec2ServicePrincipal(partition: Partition): string {
  return partition === 'aws-cn' ? 'ec2.amazonaws.com.cn' : 'ec2.amazonaws.com';
}
