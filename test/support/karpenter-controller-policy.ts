// Karpenter's reference controller policy, per release, as test data: the managed policies of the
// getting-started CloudFormation template that the release's docs deploy (the scripts curl
// `website/content/en/preview/getting-started/getting-started-with-karpenter/cloudformation.yaml`
// at tag v${KARPENTER_VERSION}). Each fixture under test/fixtures/karpenter-controller-policy/ names
// its source URL; the documents keep CloudFormation's `${...}` substitutions for rendering here.
import { readFileSync } from 'node:fs';
import type { NamedPolicy } from '../../lambda/core/facts/permissions.js';

/** One fixture per distinct policy, at the newest patch of the minor release. */
export const referencePolicyReleases = [
  'v1.0.14',
  'v1.1.10',
  'v1.3.8',
  'v1.5.8',
  'v1.7.6',
  'v1.9.2',
  'v1.10.2',
  'v1.11.3',
  'v1.12.2',
  'v1.13.1',
  'v1.14.1',
] as const;

export type ReferencePolicyRelease = (typeof referencePolicyReleases)[number];

type ConditionBlock = Record<string, Record<string, string | string[]>>;

export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: ConditionBlock;
}

export interface PolicyDocumentJson {
  Version: string;
  Statement: PolicyStatement[];
}

export interface ReferencePolicyFixture {
  readonly source: string;
  readonly release: string;
  readonly policies: readonly { readonly name: string; readonly document: PolicyDocumentJson }[];
}

export interface RenderScope {
  readonly partition: string;
  readonly region: string;
  readonly accountId: string;
  readonly clusterName: string;
  /** Default `arn:<partition>:iam::<account>:role/KarpenterNodeRole-<cluster>` (the template's role). */
  readonly nodeRoleArn?: string;
  /** Default `arn:<partition>:sqs:<region>:<account>:<cluster>` (the template's queue). */
  readonly interruptionQueueArn?: string;
}

const fixtures = new Map<ReferencePolicyRelease, ReferencePolicyFixture>();

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseFixture(release: ReferencePolicyRelease, text: string): ReferencePolicyFixture {
  const json: unknown = JSON.parse(text);
  if (
    !isRecord(json) ||
    typeof json.source !== 'string' ||
    json.release !== release ||
    !Array.isArray(json.policies) ||
    json.policies.length === 0
  ) {
    throw new Error(
      `karpenter-controller-policy/${release}.json is not a reference policy fixture`
    );
  }
  for (const policy of json.policies as unknown[]) {
    if (
      !isRecord(policy) ||
      typeof policy.name !== 'string' ||
      !isRecord(policy.document) ||
      !Array.isArray(policy.document.Statement)
    ) {
      throw new Error(`karpenter-controller-policy/${release}.json has a malformed policy entry`);
    }
  }
  return json as unknown as ReferencePolicyFixture;
}

/** The fixture as committed (a fresh copy: callers may not change the cached one). */
export function referencePolicyFixture(release: ReferencePolicyRelease): ReferencePolicyFixture {
  let fixture = fixtures.get(release);
  if (fixture === undefined) {
    const url = new URL(`../fixtures/karpenter-controller-policy/${release}.json`, import.meta.url);
    fixture = parseFixture(release, readFileSync(url, 'utf8'));
    fixtures.set(release, fixture);
  }
  return structuredClone(fixture);
}

// CloudFormation substitutions only; IAM policy variables such as ${aws:PrincipalTag/x} stay.
const LEFTOVER_PLACEHOLDER = /\$\{(?:AWS::|Cluster|Karpenter)[^}]*\}/;

function substitute(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([^}]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [map(key), mapStrings(item, map)])
    );
  }
  return value;
}

/**
 * The release's controller policies with the template's substitutions filled in, as IAM would
 * store them after the stack deploys. Throws when a CloudFormation placeholder is left over.
 */
export function referenceControllerPolicies(
  release: ReferencePolicyRelease,
  scope: RenderScope
): NamedPolicy[] {
  const { partition, region, accountId, clusterName } = scope;
  const values: Record<string, string> = {
    'AWS::Partition': partition,
    'AWS::Region': region,
    'AWS::AccountId': accountId,
    ClusterName: clusterName,
    'KarpenterNodeRole.Arn':
      scope.nodeRoleArn ??
      `arn:${partition}:iam::${accountId}:role/KarpenterNodeRole-${clusterName}`,
    'KarpenterInterruptionQueue.Arn':
      scope.interruptionQueueArn ?? `arn:${partition}:sqs:${region}:${accountId}:${clusterName}`,
  };
  return referencePolicyFixture(release).policies.map((policy) => {
    const render = (text: string) => substitute(text, values);
    const name = render(policy.name);
    const document = JSON.stringify(mapStrings(policy.document, render), null, 2);
    const leftover = LEFTOVER_PLACEHOLDER.exec(`${name}\n${document}`);
    if (leftover !== null) {
      throw new Error(`${release} ${policy.name}: placeholder ${leftover[0]} left after rendering`);
    }
    return { name, document };
  });
}

/** A string-or-list policy element as a list. */
export function listOf(value: string | readonly string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' ? [value] : [...value];
}

function parsed(policy: NamedPolicy): PolicyDocumentJson {
  return JSON.parse(policy.document) as PolicyDocumentJson;
}

function document(statements: PolicyStatement[]): string {
  return JSON.stringify({ Version: '2012-10-17', Statement: statements }, null, 2);
}

/**
 * The policies with each statement that `matches` replaced by `edit(statement)`; policies without
 * such a statement are returned as they were. Throws when no statement matches.
 */
function editStatements(
  policies: readonly NamedPolicy[],
  what: string,
  matches: (statement: PolicyStatement) => boolean,
  edit: (statement: PolicyStatement) => PolicyStatement
): NamedPolicy[] {
  let edits = 0;
  const edited = policies.map((policy) => {
    const statements = parsed(policy).Statement;
    if (!statements.some(matches)) return policy;
    edits += 1;
    const changed = statements.map((statement) =>
      matches(statement) ? edit(statement) : statement
    );
    return { name: policy.name, document: document(changed) };
  });
  if (edits === 0) throw new Error(`no statement to change for ${what}`);
  return edited;
}

/** The policies with `extra` appended to the first policy that has a statement matching `where`. */
function appendStatement(
  policies: readonly NamedPolicy[],
  where: (statement: PolicyStatement) => boolean,
  extra: PolicyStatement
): NamedPolicy[] {
  const index = policies.findIndex((policy) => parsed(policy).Statement.some(where));
  if (index < 0) throw new Error(`no policy has a statement to add ${extra.Sid ?? 'one'} next to`);
  return policies.map((policy, i) =>
    i === index
      ? { name: policy.name, document: document([...parsed(policy).Statement, extra]) }
      : policy
  );
}

function grants(statement: PolicyStatement, action: string): boolean {
  return statement.Effect === 'Allow' && listOf(statement.Action).includes(action);
}

/** Adds `key: value` under `operator` to a statement's conditions (a new object; others kept). */
function withCondition(
  statement: PolicyStatement,
  operator: string,
  key: string,
  value: string | string[]
): PolicyStatement {
  const conditions = structuredClone(statement.Condition ?? {});
  conditions[operator] = { ...conditions[operator], [key]: value };
  return { ...structuredClone(statement), Condition: conditions };
}

const EC2_LAUNCH_ACTIONS = ['ec2:RunInstances', 'ec2:CreateFleet', 'ec2:CreateLaunchTemplate'];

/**
 * Policies and documents for permission tests, built from rendered reference policies (made for
 * v1.14.1; they work on every release's layout). Pure: the inputs are not changed.
 */
export const policyVariants = {
  /** (a) `iam:PassRole` on one role only: each PassRole statement's Resource becomes `roleArn`. */
  passRoleOnlyTo(policies: readonly NamedPolicy[], roleArn: string): NamedPolicy[] {
    return editStatements(
      policies,
      'iam:PassRole',
      (statement) => grants(statement, 'iam:PassRole'),
      (statement) => ({ ...statement, Resource: roleArn })
    );
  },

  /**
   * (b) Adds `DenyNodeClassByTag`: no RunInstances/CreateFleet/CreateLaunchTemplate for requests
   * tagged `karpenter.k8s.aws/ec2nodeclass: <nodeClassName>` (Karpenter tags every launch so).
   */
  denyNodeClassByTag(policies: readonly NamedPolicy[], nodeClassName: string): NamedPolicy[] {
    return appendStatement(policies, (statement) => grants(statement, 'ec2:RunInstances'), {
      Sid: 'DenyNodeClassByTag',
      Effect: 'Deny',
      Action: [...EC2_LAUNCH_ACTIONS],
      Resource: '*',
      Condition: {
        StringEquals: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': nodeClassName },
      },
    });
  },

  /** (c) A permissions boundary allowing every action except `iam:PassRole`. */
  boundaryWithoutPassRole(): NamedPolicy {
    return {
      name: 'KarpenterControllerBoundaryWithoutPassRole',
      document: document([
        { Sid: 'AllowAllButPassRole', Effect: 'Allow', NotAction: 'iam:PassRole', Resource: '*' },
      ]),
    };
  },

  /**
   * (d) Adds a Deny with NotAction and NotResource: every EC2 action except `ec2:Describe*` is
   * denied on every resource except those listed, which are all other EC2 resource types of the
   * region and `allowedSubnetArns`. So the only resources it denies are the region's subnets not
   * in `allowedSubnetArns`: list every subnet but one NodeClass's and only that class is denied.
   * The other services the controller calls are in NotAction, so the Deny leaves them alone.
   */
  denyEc2OutsideSubnets(
    policies: readonly NamedPolicy[],
    options: { partition: string; region: string; allowedSubnetArns: readonly string[] }
  ): NamedPolicy[] {
    const { partition, region } = options;
    const regional = (resource: string) => `arn:${partition}:ec2:${region}:*:${resource}`;
    return appendStatement(policies, (statement) => grants(statement, 'ec2:RunInstances'), {
      Sid: 'DenyEc2OutsideAllowedSubnets',
      Effect: 'Deny',
      NotAction: [
        'ec2:Describe*',
        'iam:*',
        'sqs:*',
        'ssm:*',
        'pricing:*',
        'eks:*',
        'arc-zonal-shift:*',
      ],
      NotResource: [
        `arn:${partition}:ec2:${region}::image/*`,
        `arn:${partition}:ec2:${region}::snapshot/*`,
        ...[
          'capacity-reservation',
          'elastic-gpu',
          'fleet',
          'instance',
          'key-pair',
          'launch-template',
          'network-interface',
          'placement-group',
          'security-group',
          'spot-instances-request',
          'volume',
        ].map((type) => regional(`${type}/*`)),
        ...options.allowedSubnetArns,
      ],
    });
  },

  /**
   * (e) Adds `<operator>: { aws:RequestTag/<key>: value }` (StringEquals unless told) to every
   * Allow statement that already conditions on a request tag, i.e. the statements that grant
   * creating tagged EC2 resources and instance profiles. With StringEquals, a NodeClass whose
   * spec.tags lack `key: value` loses them; StringLike takes a pattern.
   */
  requireRequestTag(
    policies: readonly NamedPolicy[],
    options: { key: string; value: string; operator?: 'StringEquals' | 'StringLike' }
  ): NamedPolicy[] {
    const operator = options.operator ?? 'StringEquals';
    const conditionsOnRequestTags = (statement: PolicyStatement) =>
      statement.Effect === 'Allow' &&
      Object.values(statement.Condition ?? {}).some((block) =>
        Object.keys(block).some((key) => key.startsWith('aws:RequestTag/'))
      );
    return editStatements(policies, `aws:RequestTag/${options.key}`, conditionsOnRequestTags, (s) =>
      withCondition(s, operator, `aws:RequestTag/${options.key}`, options.value)
    );
  },

  /**
   * (f) Adds `DenyTagKeyPattern`: EC2 launches and tagging are denied when any request tag key
   * matches `keyPattern` (`ForAnyValue:StringLike` on `aws:TagKeys`), so only the NodeClasses
   * whose spec.tags carry such a key are denied.
   */
  denyTagKeys(policies: readonly NamedPolicy[], keyPattern: string): NamedPolicy[] {
    return appendStatement(policies, (statement) => grants(statement, 'ec2:RunInstances'), {
      Sid: 'DenyTagKeyPattern',
      Effect: 'Deny',
      Action: [...EC2_LAUNCH_ACTIONS, 'ec2:CreateTags'],
      Resource: '*',
      Condition: { 'ForAnyValue:StringLike': { 'aws:TagKeys': [keyPattern] } },
    });
  },

  /**
   * (g) Every Allow statement granting `ec2:RunInstances` also requires `aws:RequestedRegion` to
   * equal `region` (StringEquals): with another region than the cluster's, launches lose them.
   */
  runInstancesOnlyIn(policies: readonly NamedPolicy[], region: string): NamedPolicy[] {
    return editStatements(
      policies,
      'ec2:RunInstances',
      (statement) => grants(statement, 'ec2:RunInstances'),
      (statement) => withCondition(statement, 'StringEquals', 'aws:RequestedRegion', region)
    );
  },

  /**
   * (h) A service control policy: everything allowed (as the default FullAWSAccess attachment
   * would), but `ec2:RunInstances` denied when the request tag `key` (default `team`) is `value`.
   */
  scpDenyRunInstancesForTag(value: string, key = 'team'): NamedPolicy {
    return {
      name: `DenyRunInstancesFor-${key}-${value}`,
      document: document([
        { Sid: 'FullAWSAccess', Effect: 'Allow', Action: '*', Resource: '*' },
        {
          Sid: 'DenyRunInstancesForTag',
          Effect: 'Deny',
          Action: 'ec2:RunInstances',
          Resource: '*',
          Condition: { StringEquals: { [`aws:RequestTag/${key}`]: value } },
        },
      ]),
    };
  },
};
