// The scanner roles' policies, generated from each function's declared actions. Each action gets the
// narrowest resource IAM supports for it; an action this file does not know fails synth, so a new
// adapter call is a reviewed decision here, never a silent `*`.
import { Aws } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';

export interface PermissionScope {
  readonly partition: string;
  readonly account: string;
  readonly topicArn: string;
  readonly tableArn: string;
  readonly queueArn: string;
  /** DryRun mode's role; undefined = DryRun off, and the DryRun-only actions are not granted. */
  readonly dryRunRoleArn?: string | undefined;
  /**
   * Custom SSM parameter path prefixes (`/platform/ami/`) the scanner may read; none when absent.
   * Public /aws/service/ parameters are always readable.
   */
  readonly ssmParameterPrefixes?: readonly string[];
  /** The `securityHub` setting: the Security Hub actions are granted only when it is on. */
  readonly securityHub?: boolean;
  /** The stack's region (the Security Hub product ARN); `AWS::Region` when absent. */
  readonly region?: string;
}

/** A resource pattern with a wildcard, and why that is as narrow as IAM allows. */
export interface WildcardReason {
  readonly resource: string;
  readonly reason: string;
}

interface ScopeRule {
  readonly matches: (action: string) => boolean;
  readonly resources: (scope: PermissionScope) => string[];
  /** Conditions that narrow the grant where resources cannot. */
  readonly conditions?: Readonly<Record<string, Readonly<Record<string, string | string[]>>>>;
  /** Why the wildcard in `resources` is needed (shown to reviewers and to cdk-nag). */
  readonly reason?: string;
}

/** Actions only DryRun mode uses: granted only when a DryRun role is configured. */
const DRY_RUN_ONLY_ACTIONS: readonly string[] = [
  'sts:AssumeRole',
  'sts:DecodeAuthorizationMessage',
];

/** Actions only the opt-in Security Hub delivery uses: granted only when `securityHub` is on. */
const SECURITY_HUB_ONLY_ACTIONS: readonly string[] = [
  'securityhub:BatchImportFindings',
  'securityhub:BatchUpdateFindings',
];

export { GRANTS_KEPT_WITHOUT_USE } from './unexercised-grants.js';

const exactly =
  (...actions: string[]) =>
  (action: string) =>
    actions.includes(action);

const iamArn = (scope: PermissionScope, resource: string) =>
  `arn:${scope.partition}:iam::${scope.account}:${resource}`;
const eksArn = (scope: PermissionScope, resource: string) =>
  `arn:${scope.partition}:eks:*:${scope.account}:${resource}`;

const RULES: readonly ScopeRule[] = [
  {
    // Describe/Get on EC2 have no resource-level permissions; the scanner reads every region it scans.
    matches: (action) => /^ec2:(Describe|Get)[A-Za-z]+$/.test(action),
    resources: () => ['*'],
    reason: 'EC2 Describe*/Get* actions do not support resource-level permissions',
  },
  {
    matches: exactly('iam:SimulatePrincipalPolicy', 'iam:GetContextKeysForPrincipalPolicy'),
    resources: (scope) => [iamArn(scope, 'role/*')],
    reason:
      'Simulation targets any Karpenter controller role named by a cluster; scoped to role ARNs of this account',
  },
  {
    matches: exactly(
      'iam:GetRole',
      'iam:GetRolePolicy',
      'iam:ListRolePolicies',
      'iam:ListAttachedRolePolicies',
      'iam:ListRoleTags',
      'iam:ListInstanceProfilesForRole'
    ),
    resources: (scope) => [iamArn(scope, 'role/*')],
    reason:
      'Node and controller roles are named by NodeClasses at run time; read-only, this account only',
  },
  {
    matches: exactly('iam:GetInstanceProfile', 'iam:ListInstanceProfileTags'),
    resources: (scope) => [iamArn(scope, 'instance-profile/*')],
    reason: 'Instance profiles are named by NodeClasses at run time; read-only, this account only',
  },
  {
    matches: exactly(
      'iam:GetPolicy',
      'iam:GetPolicyVersion',
      'iam:ListPolicyVersions',
      'iam:ListEntitiesForPolicy'
    ),
    resources: (scope) => [iamArn(scope, 'policy/*'), `arn:${scope.partition}:iam::aws:policy/*`],
    reason:
      'An IAM event names any customer or AWS managed policy; read-only lookups of its attachments',
  },
  {
    // AWS's public parameters have no account in their ARN. Any other parameter may hold a
    // secret: only the configured prefixes, which the Lambdas also get (SSM_PARAMETER_PREFIXES)
    // so a term outside them is reported without a call.
    matches: exactly('ssm:GetParameter', 'ssm:GetParameters'),
    resources: (scope) => [
      `arn:${scope.partition}:ssm:*::parameter/aws/service/*`,
      ...(scope.ssmParameterPrefixes ?? []).map(
        (prefix) => `arn:${scope.partition}:ssm:*:${scope.account}:parameter${prefix}*`
      ),
    ],
    reason:
      'Aliases resolve through AWS’s public /aws/service/ parameters, and amiSelectorTerms may name parameters under the configured ssmParameterPrefixes, in any region the scanner scans; read-only',
  },
  {
    // DescribeKey and ListGrants work across accounts where the key policy allows it
    // (https://docs.aws.amazon.com/kms/latest/developerguide/kms-api-permissions-reference.html).
    matches: exactly('kms:DescribeKey', 'kms:ListGrants'),
    resources: (scope) => [`arn:${scope.partition}:kms:*:*:key/*`],
    reason:
      'NodeClasses name their EBS keys (kmsKeyID, or the account default) at run time, in any scanned region and possibly another account; read-only key metadata and grants',
  },
  {
    // GetKeyPolicy is not cross-account: only the keys of the deployment's account.
    matches: exactly('kms:GetKeyPolicy'),
    resources: (scope) => [`arn:${scope.partition}:kms:*:${scope.account}:key/*`],
    reason:
      'NodeClasses name their EBS keys at run time, in any scanned region; read-only key policy, this account only (KMS answers GetKeyPolicy to no other account)',
  },
  {
    matches: exactly('eks:ListClusters'),
    resources: () => ['*'],
    reason: 'eks:ListClusters does not support resource-level permissions',
  },
  {
    matches: (action) => /^eks:(Describe|List)[A-Za-z]+$/.test(action),
    resources: (scope) => [
      eksArn(scope, 'cluster/*'),
      eksArn(scope, 'podidentityassociation/*'),
      eksArn(scope, 'access-entry/*'),
    ],
    reason:
      'Target clusters are configured or discovered at run time; read-only, this account only',
  },
  {
    matches: exactly('sts:GetCallerIdentity', 'sts:DecodeAuthorizationMessage'),
    resources: () => ['*'],
    reason: 'These STS actions do not support resource-level permissions',
  },
  {
    matches: exactly('sts:AssumeRole'),
    resources: (scope) => (scope.dryRunRoleArn === undefined ? [] : [scope.dryRunRoleArn]),
  },
  {
    matches: exactly('sns:Publish'),
    resources: (scope) => [scope.topicArn],
  },
  {
    // The account's own default product: findings of this account, in the stack's region.
    matches: exactly('securityhub:BatchImportFindings'),
    resources: (scope) => [
      `arn:${scope.partition}:securityhub:${scope.region ?? Aws.REGION}:${scope.account}:product/${scope.account}/default`,
    ],
  },
  {
    // BatchUpdateFindings has no resource type; the condition allows only the workflow marks the
    // lifecycle sets: RESOLVED (fixed), SUPPRESSED (accepted, with a note) and NEW (failing again
    // after a suppression: Security Hub never resets SUPPRESSED itself).
    matches: exactly('securityhub:BatchUpdateFindings'),
    resources: () => ['*'],
    conditions: {
      StringEquals: {
        'securityhub:ASFFSyntaxPath/Workflow.Status': ['RESOLVED', 'SUPPRESSED', 'NEW'],
      },
    },
    reason:
      'securityhub:BatchUpdateFindings supports no resource-level permissions; the grant is conditioned on setting Workflow.Status to RESOLVED, SUPPRESSED or NEW only',
  },
  {
    matches: (action) =>
      /^dynamodb:(GetItem|PutItem|UpdateItem|DeleteItem|Query|BatchGetItem|BatchWriteItem|ConditionCheckItem|DescribeTable)$/.test(
        action
      ),
    resources: (scope) => [scope.tableArn, `${scope.tableArn}/index/*`],
    reason: 'Queries on the scanner table’s own secondary indexes',
  },
  {
    matches: exactly('sqs:SendMessage', 'sqs:SendMessageBatch', 'sqs:GetQueueAttributes'),
    resources: (scope) => [scope.queueArn],
  },
];

function ruleFor(action: string): ScopeRule {
  const rule = RULES.find((candidate) => candidate.matches(action));
  if (rule === undefined) {
    throw new Error(
      `infra/permissions.ts has no resource scope for the declared action "${action}". ` +
        'Add a rule with the narrowest resource IAM supports (and a reason for any wildcard).'
    );
  }
  return rule;
}

/** Union of the registry's actions, deduplicated and sorted. */
function declaredActions(registry: Readonly<Record<string, readonly string[]>>): readonly string[] {
  return [...new Set(Object.values(registry).flat())].sort();
}

/** The actions the role is granted for this configuration (DryRun-only ones need a DryRun role). */
export function grantedActions(
  registry: Readonly<Record<string, readonly string[]>>,
  dryRunEnabled: boolean,
  securityHubEnabled = false
): readonly string[] {
  return declaredActions(registry).filter(
    (action) =>
      (dryRunEnabled || !DRY_RUN_ONLY_ACTIONS.includes(action)) &&
      (securityHubEnabled || !SECURITY_HUB_ONLY_ACTIONS.includes(action))
  );
}

/** One statement per distinct resource set, each with the sorted actions that share it. */
export function scannerPolicyStatements(
  registry: Readonly<Record<string, readonly string[]>>,
  scope: PermissionScope
): PolicyStatement[] {
  const groups = new Map<
    string,
    { resources: string[]; actions: string[]; conditions?: ScopeRule['conditions'] }
  >();
  for (const action of grantedActions(
    registry,
    scope.dryRunRoleArn !== undefined,
    scope.securityHub === true
  )) {
    const rule = ruleFor(action);
    const resources = rule.resources(scope);
    if (resources.length === 0) continue;
    const key = `${resources.join('\n')}\n${JSON.stringify(rule.conditions ?? {})}`;
    const group = groups.get(key) ?? {
      resources,
      actions: [],
      ...(rule.conditions ? { conditions: rule.conditions } : {}),
    };
    group.actions.push(action);
    groups.set(key, group);
  }
  return [...groups.values()].map(
    ({ resources, actions, conditions }) =>
      new PolicyStatement({ actions, resources, ...(conditions ? { conditions } : {}) })
  );
}

/** Reasons for every wildcard resource the generated policy contains (for cdk-nag IAM5). */
export function wildcardReasons(
  registry: Readonly<Record<string, readonly string[]>>,
  scope: PermissionScope
): WildcardReason[] {
  const reasons = new Map<string, string>();
  for (const action of grantedActions(
    registry,
    scope.dryRunRoleArn !== undefined,
    scope.securityHub === true
  )) {
    const rule = ruleFor(action);
    for (const resource of rule.resources(scope)) {
      if (!resource.includes('*') || rule.reason === undefined) continue;
      const known = reasons.get(resource);
      if (known === undefined) reasons.set(resource, rule.reason);
      else if (!known.includes(rule.reason)) reasons.set(resource, `${known}; ${rule.reason}`);
    }
  }
  return [...reasons].map(([resource, reason]) => ({ resource, reason }));
}
