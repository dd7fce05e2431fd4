// The account's roles, their instance profiles and customer managed policies in a few calls:
// iam:GetAccountAuthorizationDetails (Filter Role and LocalManagedPolicy, up to 1,000 items a page,
// https://docs.aws.amazon.com/IAM/latest/APIReference/API_GetAccountAuthorizationDetails.html).
// A scan of many clusters reads a node role, a controller role and its policies per cluster, five
// or more calls each, all from IAM's one account-wide budget; the directory answers them instead.
// Pages come in no useful order, so it is read whole, once. Whatever it does not hold (an AWS
// managed policy, a profile without a role, a name given in another case) and every read when it
// cannot be loaded (AccessDenied) goes to the per-entity calls as before.
import {
  GetAccountAuthorizationDetailsCommand,
  type GetAccountAuthorizationDetailsCommandOutput,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
  type ManagedPolicyDetail,
  type RoleDetail,
} from '@aws-sdk/client-iam';
import type { AwsFactsPort } from '../../core/ports/aws-facts.js';
import { isAccessDenied } from './aws-errors.js';
import { collectPages } from './paginate.js';
import { instanceProfileFromSdk, roleFromSdk, type SdkInstanceProfile } from './sdk-shapes.js';

/**
 * The CLI's only: the Lambdas scan one cluster at a time, below the threshold, and are not granted
 * it (test/infra/declared-actions.test.ts reads every `…Actions` export).
 * @public
 */
export const iamAccountDirectoryActions = ['iam:GetAccountAuthorizationDetails'] as const;

/** The API's largest page. */
const MAX_ITEMS = 1000;

/**
 * Clusters from which the directory is read. Per-entity reads cost five or more IAM calls a
 * cluster; the directory costs a page per 1,000 roles and customer managed policies: three pages
 * at IAM's default quotas (1,000 roles, 1,500 policies), ten at the highest (5,000 each), which
 * three clusters' fifteen reads already pay for.
 */
export const ACCOUNT_DIRECTORY_MIN_CLUSTERS = 3;

export interface AccountDirectory {
  role(name: string): RoleDetail | undefined;
  instanceProfile(name: string): SdkInstanceProfile | undefined;
  /** A customer managed policy of the account. */
  policy(arn: string): ManagedPolicyDetail | undefined;
}

export interface IamAccountDirectory {
  /** The whole directory, read once; undefined when it could not be read. */
  load(): Promise<AccountDirectory | undefined>;
}

type IamSender = { send(command: unknown): Promise<unknown> };

/** One item of a directory page: a role or a customer managed policy. */
type DirectoryEntry = { readonly role: RoleDetail } | { readonly policy: ManagedPolicyDetail };

export function createIamAccountDirectory(
  iam: IamSender,
  options: { readonly maxItems?: number } = {}
): IamAccountDirectory {
  let loading: Promise<AccountDirectory | undefined> | undefined;
  const readOnce = async (): Promise<AccountDirectory> => {
    const roles = new Map<string, RoleDetail>();
    const policies = new Map<string, ManagedPolicyDetail>();
    const profiles = new Map<string, SdkInstanceProfile>();
    const entries = await collectPages(
      'iam:GetAccountAuthorizationDetails',
      (marker) =>
        iam.send(
          new GetAccountAuthorizationDetailsCommand({
            Filter: ['Role', 'LocalManagedPolicy'],
            MaxItems: options.maxItems ?? MAX_ITEMS,
            ...(marker === undefined ? {} : { Marker: marker }),
          })
        ) as Promise<GetAccountAuthorizationDetailsCommandOutput>,
      (page): DirectoryEntry[] => [
        ...(page.RoleDetailList ?? []).map((role) => ({ role })),
        ...(page.Policies ?? []).map((policy) => ({ policy })),
      ],
      (page) => (page.IsTruncated ? page.Marker : undefined),
      {
        identityOf: (entry) => {
          const id = 'role' in entry ? entry.role.RoleId : entry.policy.PolicyId;
          return id ? `${'role' in entry ? 'role' : 'policy'} ${id}` : undefined;
        },
      }
    );
    for (const entry of entries) {
      if ('policy' in entry) {
        if (entry.policy.Arn !== undefined) policies.set(entry.policy.Arn, entry.policy);
        continue;
      }
      const { role } = entry;
      if (role.RoleName === undefined) continue;
      roles.set(role.RoleName, role);
      for (const profile of role.InstanceProfileList ?? [])
        if (profile.InstanceProfileName !== undefined)
          profiles.set(profile.InstanceProfileName, profile);
    }
    return {
      role: (name) => roles.get(name),
      instanceProfile: (name) => profiles.get(name),
      policy: (arn) => policies.get(arn),
    };
  };
  // Denied: the per-entity reads answer instead, as without the directory. Anything else (a
  // throttle the SDK's retries did not outlast, a dropped connection) is tried once more first:
  // falling back costs five or more calls per cluster from the same IAM budget.
  const read = async (): Promise<AccountDirectory | undefined> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await readOnce();
      } catch (error) {
        if (isAccessDenied(error) || attempt === 2) return undefined;
      }
    }
  };
  return {
    load() {
      loading ??= read();
      return loading;
    },
  };
}

/** The AWS facts' role and instance-profile reads, answered by the directory when it holds them. */
export function withAccountDirectory(
  port: AwsFactsPort,
  directory: IamAccountDirectory
): AwsFactsPort {
  return {
    ...port,
    async getRole(name) {
      const role = (await directory.load())?.role(name);
      return role === undefined
        ? port.getRole(name)
        : roleFromSdk(role, role.AttachedManagedPolicies ?? []);
    },
    async getInstanceProfile(name) {
      const profile = (await directory.load())?.instanceProfile(name);
      return profile === undefined
        ? port.getInstanceProfile(name)
        : instanceProfileFromSdk(profile);
    },
  };
}

const metadata = { $metadata: {} };

/** What the directory answers for one policy-reading command, or undefined to send it. */
function answer(directory: AccountDirectory, command: unknown): object | undefined {
  if (command instanceof GetRoleCommand) {
    const role = directory.role(command.input.RoleName ?? '');
    if (role === undefined) return undefined;
    const {
      RolePolicyList: _inline,
      AttachedManagedPolicies: _attached,
      InstanceProfileList: _profiles,
      ...rest
    } = role;
    return { Role: rest };
  }
  // Whole lists only: a page request or a path filter is sent as asked.
  if (command instanceof ListRolePoliciesCommand) {
    const { RoleName, Marker, MaxItems } = command.input;
    const role = directory.role(RoleName ?? '');
    if (role === undefined || Marker !== undefined || MaxItems !== undefined) return undefined;
    const names = (role.RolePolicyList ?? []).flatMap((policy) =>
      policy.PolicyName === undefined ? [] : [policy.PolicyName]
    );
    return { PolicyNames: names, IsTruncated: false };
  }
  if (command instanceof ListAttachedRolePoliciesCommand) {
    const { RoleName, Marker, MaxItems, PathPrefix } = command.input;
    const role = directory.role(RoleName ?? '');
    if (role === undefined || Marker !== undefined || MaxItems !== undefined) return undefined;
    if (PathPrefix !== undefined) return undefined;
    return { AttachedPolicies: role.AttachedManagedPolicies ?? [], IsTruncated: false };
  }
  if (command instanceof GetRolePolicyCommand) {
    const { RoleName, PolicyName } = command.input;
    const inline = directory
      .role(RoleName ?? '')
      ?.RolePolicyList?.find((policy) => policy.PolicyName === PolicyName);
    if (inline === undefined) return undefined;
    return { RoleName, PolicyName, PolicyDocument: inline.PolicyDocument };
  }
  if (command instanceof GetPolicyCommand) {
    const policy = directory.policy(command.input.PolicyArn ?? '');
    if (policy === undefined) return undefined;
    const { PolicyVersionList: _versions, ...rest } = policy;
    return { Policy: rest };
  }
  if (command instanceof GetPolicyVersionCommand) {
    const { PolicyArn, VersionId } = command.input;
    const version = directory
      .policy(PolicyArn ?? '')
      ?.PolicyVersionList?.find((candidate) => candidate.VersionId === VersionId);
    return version === undefined ? undefined : { PolicyVersion: version };
  }
  return undefined;
}

/**
 * An IAM sender for the role policy reader (iam-simulator.ts): role, inline and customer managed
 * policy reads answered by the directory, anything else sent through `iam`.
 */
export function accountDirectorySender<T extends IamSender>(
  iam: T,
  directory: IamAccountDirectory
): Pick<T, 'send'> {
  return {
    send: (async (command: unknown) => {
      const loaded = await directory.load();
      const answered = loaded === undefined ? undefined : answer(loaded, command);
      return answered === undefined ? iam.send(command) : { ...answered, ...metadata };
    }) as T['send'],
  };
}
