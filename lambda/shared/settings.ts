// The deployment's settings, in one table. Everything else is derived from it: the cdk.json / `-c`
// schema (infra/config.ts), the construct's props, their validation and defaults
// (infra/constructs/setting-props.ts), the Lambda environment the construct writes and
// env-config.ts parses, and README's "Configuration" table (test/infra/config-readme.test.ts).
// Plain data and hand-written validators: the dispatch bundle reads this without zod.
//
// Adding a setting is one row here:
//   - `type` and its range (`min`/`max`, `choices`, `check`, `item`), `default` and `doc`;
//   - `prop` to make it a construct prop (`unit` when the prop is a Duration), else cdk.json only;
//   - `env` to hand it to the Lambdas: the construct writes it to every function (or
//     `requiredBy` those that must have it), env-config.ts parses it into `config.settings.<name>`.
// Then `npx tsx scripts/readme-config-table.ts` rewrites README's table. Only a `json` setting
// (a structured value with its own zod schema) needs code beside the row: its schema in
// infra/config.ts and its variable in the construct (the compiler lists both).
import { ssmPrefixProblem } from '../core/ami/ssm-scope.js';
import { clusterTargetProblem } from '../core/cluster-identity.js';
import { SEVERITIES } from '../core/model.js';
import { regionProblem } from '../core/region.js';

export const HANDLER_NAMES = ['dispatch', 'scan-cluster', 'ami-event', 'iam-event'] as const;
export type HandlerName = (typeof HANDLER_NAMES)[number];

/** Why a value is not acceptable (no name: the caller prefixes it), or undefined. */
export type Check = (value: string) => string | undefined;

interface Common {
  /** README's Meaning cell (Markdown). */
  readonly doc: string;
  /** README's Default cell when the value alone would not say it (`none (DryRun mode off)`). */
  readonly defaultText?: string;
  /** The construct prop; absent: a cdk.json setting of the app only. */
  readonly prop?: string;
  /** The prop is a Duration in this unit (the setting holds the number). */
  readonly unit?: 'minutes' | 'hours' | 'days';
  /** The Lambda environment variable it travels in. */
  readonly env?: string;
  /** Handlers that cannot start without the variable; others get it when it has a default. */
  readonly requiredBy?: readonly HandlerName[];
}

export type SettingSpec = Common &
  (
    | {
        readonly type: 'integer';
        readonly min: number;
        readonly max: number;
        /** Only these values (within min–max). */
        readonly allowed?: readonly number[];
        readonly default?: number;
      }
    | { readonly type: 'choice'; readonly choices: readonly string[]; readonly default: string }
    | { readonly type: 'boolean'; readonly default: boolean }
    | { readonly type: 'text'; readonly check: Check; readonly default?: string }
    | {
        readonly type: 'list';
        readonly item: Check;
        /** Characters the comma-joined list may take of the Lambdas' 4 KB environment. */
        readonly maxChars?: number;
        readonly default: readonly string[];
      }
    | {
        /** Structured (objects, rules): validated by its own schema, not by this table. */
        readonly type: 'json';
        readonly default: unknown;
      }
  );

function matching(pattern: RegExp, expected: string): Check {
  return (value) => (pattern.test(value) ? undefined : `"${value}" is not ${expected}`);
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** A table of any partition and region; the name as DynamoDB allows it. */
const DYNAMODB_TABLE_ARN =
  /^arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/[A-Za-z0-9_.-]{3,255}$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;
/** CloudFormation's limit on a stack name, less the longest suffix a forwarding stack adds. */
const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,118}$/;

/** CloudWatch Logs' retention values, in days (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutRetentionPolicy.html). */
export const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288,
  3653,
] as const;

/** Discovery: `*`, or tag filters `key=value,key2`; empty is off. */
const discoveryFilter = matching(
  /^(|\*|[^,=\s]+(=[^,]*)?(,[^,=\s]+(=[^,]*)?)*)$/,
  '*, or tag filters key=value,key2'
);

export const SETTINGS = {
  stackName: {
    type: 'text',
    check: matching(
      STACK_NAME,
      'a CloudFormation stack name: letters, digits and hyphens, starting with a letter, up to 119'
    ),
    default: 'NodeClassScanner',
    doc: "Name (and id) of the scanner stack; the IAM forwarding stack is this name plus `IamEvents`, each AMI forwarding stack this name plus `AmiEvents-<region>`, the dashboard is this name, each alarm this name plus `-<alarm>`, and the scanner's CloudWatch metrics namespace is this name with `-` written as `_`. Give each deployment its own name to run several in one account and region (below).",
  },
  homeRegion: {
    type: 'text',
    check: regionProblem,
    defaultText: '`eu-west-1` (cdk.json)',
    doc: 'Region of the scanner stack (any partition: `us-gov-west-1`, `cn-north-1`, `eusc-de-east-1`).',
  },
  clusters: {
    type: 'list',
    item: clusterTargetProblem,
    prop: 'clusters',
    env: 'CLUSTERS',
    requiredBy: ['dispatch'],
    default: [],
    defaultText: 'none: set it (`-c clusters=prod,dr@us-west-2`) or `discoverClusters`',
    doc: 'Clusters to scan: `name` (home region) or `name@region`, each once. At least one, unless `discoverClusters` is set: synth fails without either.',
  },
  discoverClusters: {
    type: 'text',
    check: discoveryFilter,
    prop: 'discoverClusters',
    env: 'DISCOVER_CLUSTERS',
    requiredBy: ['dispatch'],
    default: '',
    defaultText: '`""` (off)',
    doc: 'Also scan clusters found on each schedule with `eks:ListClusters`: `*` for every cluster, or tag filters `key=value,key2` (a key alone matches any value), e.g. `karpenter.sh/discovery`.',
  },
  discoveryRegions: {
    type: 'list',
    item: regionProblem,
    prop: 'discoveryRegions',
    env: 'DISCOVERY_REGIONS',
    requiredBy: ['dispatch'],
    default: [],
    defaultText: 'home region',
    doc: 'Regions to discover clusters in.',
  },
  scheduleMinutes: {
    type: 'integer',
    min: 1,
    max: 720,
    prop: 'schedule',
    unit: 'minutes',
    default: 15,
    doc: "Full-scan interval. The schedule catches what events cannot: AMIs you don't own, deprecations, AWS-managed policy updates.",
  },
  alertEmails: {
    type: 'list',
    item: matching(EMAIL, 'an email address'),
    prop: 'alertEmails',
    default: [],
    doc: 'Email subscribers to the findings topic (each confirms its subscription).',
  },
  alertMinSeverity: {
    type: 'choice',
    choices: SEVERITIES,
    prop: 'alertMinSeverity',
    default: 'high',
    doc: 'Least severe finding that is emailed. The subscription filter policy allows this severity and everything above it, plus messages with no `severity` attribute (alarms).',
  },
  slackWorkspaceId: {
    type: 'text',
    check: matching(/^[A-Z0-9]+$/, 'a Slack workspace id such as T0123ABCD'),
    defaultText: 'none',
    doc: 'Slack workspace id for Amazon Q Developer in chat applications (formerly AWS Chatbot); authorise the workspace in its console first ([Slack](#slack-amazon-q-developer-in-chat-applications)). Set with `slackChannelId`, or neither. The construct takes both as `slack`.',
  },
  slackChannelId: {
    type: 'text',
    check: matching(/^[A-Z0-9]+$/, 'a Slack channel id such as C0123ABCD'),
    defaultText: 'none',
    doc: 'Slack channel id (channel details, at the bottom); a private channel needs `/invite @Amazon Q` first. Slack receives every message.',
  },
  reminderHours: {
    type: 'integer',
    min: 1,
    max: 720,
    prop: 'reminderInterval',
    unit: 'hours',
    env: 'REMINDER_INTERVAL_HOURS',
    default: 24,
    doc: 'Re-notify a finding that is still failing after this many hours.',
  },
  resolvedTtlDays: {
    type: 'integer',
    min: 1,
    max: 365,
    prop: 'resolvedRetention',
    unit: 'days',
    env: 'RESOLVED_TTL_DAYS',
    default: 30,
    doc: 'Days the state of a resolved finding is kept (DynamoDB TTL).',
  },
  simulationCacheHours: {
    type: 'integer',
    min: 0,
    max: 168,
    prop: 'simulationCache',
    unit: 'hours',
    env: 'SIMULATION_CACHE_HOURS',
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
    default: 24,
    doc: "Hours a permission simulation's verdict is reused by later scans while the controller role's policies and the request are unchanged; bounds how long an SCP change goes unseen. `0` = every scan simulates.",
  },
  digest: {
    type: 'choice',
    choices: ['on-change', 'always', 'never'],
    prop: 'digest',
    env: 'DIGEST',
    default: 'on-change',
    doc: 'Per-scan digest message: `on-change`, `always`, `never`.',
  },
  alertBatchThreshold: {
    type: 'integer',
    min: 1,
    max: 1000,
    prop: 'alertBatchThreshold',
    env: 'ALERT_BATCH_THRESHOLD',
    default: 5,
    doc: 'More changes than this in one cluster scan go out as one summary message (email and Slack) instead of one message each. A cluster with no stored state yet (its first scan) always gets one summary. A `suppressed` change always goes alone.',
  },
  scanEnvironment: {
    type: 'choice',
    choices: ['production', 'non-production'],
    prop: 'scanEnvironment',
    env: 'SCAN_ENVIRONMENT',
    default: 'production',
    doc: '`non-production` lowers AMI-pinning findings to info.',
  },
  clusterSettings: {
    type: 'json',
    prop: 'clusterSettings',
    default: {},
    doc: "Settings of single clusters, keyed by an entry of `clusters` (`prod`, `dr@us-west-2`, or just the name): `environment` (overrides `scanEnvironment`), `alertMinSeverity` (overrides it for that cluster's emails) and `ignore` (rules as in `ignore`, with `resource` a `Kind/name` glob: the cluster is implied). A key naming no configured cluster fails synth (with discovery on, any valid cluster name is accepted, since it may be discovered). Example below.",
  },
  ignore: {
    type: 'json',
    prop: 'ignore',
    env: 'IGNORE_RULES',
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
    default: [],
    doc: 'Accepted findings, the same rules as the CLI config file: `[{"check", "resource", "reason", "expires"?}]` ([Suppressing findings](#suppressing-findings)). Validated at synth against the check catalog. The rules travel in the Lambdas\' environment (4 KB per function in total), so they must fit in 2,500 characters of JSON.',
  },
  annotationSuppression: {
    type: 'json',
    prop: 'annotationSuppression',
    env: 'ANNOTATION_SUPPRESSION',
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
    default: 'allow',
    doc: 'Whether `ignore-check.nodeclass-scanner/<check>` annotations on the clusters\' objects may suppress findings: `allow`, `deny`, or a list of check ids or globs (`["imds-*","node-role-policies"]`, or `imds-*,node-role-policies` with `-c`) whose annotations may. A refused annotation leaves its finding open, saying so. A trust decision ([Who may suppress](#who-may-suppress-annotations-are-a-trust-decision)); validated at synth against the check catalog, the list in at most 256 characters (it shares the 4 KB environment).',
  },
  dryRunRoleArn: {
    type: 'text',
    check: (value) => (value === '' ? undefined : matching(ROLE_ARN, 'an IAM role ARN')(value)),
    prop: 'dryRunRoleArn',
    env: 'DRY_RUN_ROLE_ARN',
    defaultText: 'none (DryRun mode off)',
    doc: "Role the scanner may assume for EC2 DryRun launch checks. The scanner's own role never gets EC2 mutation rights. It is granted `sts:AssumeRole` on this role only.",
  },
  ssmParameterPrefixes: {
    type: 'list',
    item: ssmPrefixProblem,
    maxChars: 512,
    prop: 'ssmParameterPrefixes',
    env: 'SSM_PARAMETER_PREFIXES',
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
    default: [],
    defaultText: '`[]` (none)',
    doc: "Path prefixes, such as `/platform/ami/`, of the custom SSM parameters `amiSelectorTerms` may name. The scanning roles get `ssm:GetParameter` on AWS's public `/aws/service/*` parameters (aliases) and on `parameter<prefix>*` in this account only: a term naming any other parameter is an `error` finding of `ami-ssm-parameter-resolves` naming this key, and SSM is not asked. Prefixes match as plain string prefixes (as IAM does), so end them with `/`; wildcards and the reserved `/aws`, `/ssm` names are refused, and the list must fit in 512 characters.",
  },
  vpcId: {
    type: 'text',
    check: matching(/^vpc-[0-9a-f]+$/, 'a VPC id such as vpc-0123abcd'),
    defaultText: 'none',
    doc: "Run the scanning Lambdas in this VPC, for clusters whose API endpoint is private. Set with `subnetIds`, or neither; the construct takes your own `vpc` and `vpcSubnets`. This adds AWS's `AWSLambdaVPCAccessExecutionRole`.",
  },
  subnetIds: {
    type: 'list',
    item: matching(/^subnet-[0-9a-f]+$/, 'a subnet id such as subnet-0123abcd'),
    default: [],
    defaultText: 'none',
    doc: 'Subnets of `vpcId` for the scanning Lambdas. They need NAT or VPC endpoints (STS, EKS, EC2, IAM, SSM, SNS, SQS, DynamoDB, CloudWatch Logs).',
  },
  logRetentionDays: {
    type: 'integer',
    min: 1,
    max: 3653,
    allowed: LOG_RETENTION_DAYS,
    prop: 'logRetention',
    default: 30,
    doc: "Lambda log retention. Must be one of CloudWatch Logs' allowed values.",
  },
  metricsDetail: {
    type: 'choice',
    choices: ['account', 'cluster'],
    prop: 'metricsDetail',
    env: 'METRICS_DETAIL',
    default: 'account',
    doc: 'Dimensions of the custom metrics. `account`: open findings per severity, scan duration, NodeClasses, source errors and API calls for the whole deployment, 11 series whatever the number of clusters. `cluster`: the same per cluster (9 series a cluster; each costs about $0.30 a month, [Cost](#cost)). Alarms and the dashboard work with both; the failing-resources table names the cluster either way.',
  },
  scanConcurrency: {
    type: 'integer',
    min: 2,
    max: 100,
    prop: 'scanConcurrency',
    env: 'SCAN_CONCURRENCY',
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
    default: 4,
    doc: "Maximum concurrency of the scan queue's event source: how many clusters are scanned at once. It bounds the EC2 API rate the scanner shares with Karpenter (IAM has its own account-wide budget, `iamCallsPerSecond`).",
  },
  iamCallsPerSecond: {
    type: 'integer',
    min: 1,
    max: 50,
    prop: 'iamCallsPerSecond',
    env: 'IAM_CALLS_PER_SECOND',
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
    default: 3,
    doc: "IAM calls per second all scans of this deployment share (bursts of at most one second's worth), paced through an item of the state table so concurrent scans cannot add up. IAM's request rate is the account's, unpublished and not adjustable ([IAM quotas](https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html), [throttling](https://repost.aws/knowledge-center/iam-sts-throttling-error)): the default leaves most of it to your own pipelines. Should the table be unavailable, each scan paces itself at this rate divided by `scanConcurrency` and logs it. The CLI paces in process (5/s).",
  },
  iamBudgetTableArn: {
    type: 'text',
    check: (value) =>
      value === ''
        ? undefined
        : matching(
            DYNAMODB_TABLE_ARN,
            'a DynamoDB table ARN such as arn:aws:dynamodb:eu-west-1:123456789012:table/NodeClassScanner-StateTable'
          )(value),
    prop: 'iamBudgetTableArn',
    env: 'IAM_BUDGET_TABLE_ARN',
    defaultText: "none (this deployment's state table)",
    doc: "Share one IAM budget among several deployments of an account: the `StateTableArn` output of the deployment that keeps it (any region of the account). The scanning Lambdas then take their IAM tokens from that table's `BUDGET` item, so all deployments naming it stay within one `iamCallsPerSecond` together (give each the same value). They are granted `GetItem` and `UpdateItem` on that table's `BUDGET` items only ([one IAM budget for the account](#world-state-files-and-live-aws)).",
  },
  reservedScanConcurrency: {
    type: 'integer',
    min: 1,
    max: 1000,
    prop: 'reservedScanConcurrency',
    defaultText: 'unset',
    doc: 'Optionally reserve this much concurrency for the scan worker (at least `scanConcurrency`). Lambda keeps at least 10 executions of an account unreserved, so leave it unset in accounts with a low concurrency quota (new accounts often have 10).',
  },
  accessEntries: {
    type: 'boolean',
    prop: 'accessEntries',
    default: false,
    doc: 'Create EKS access entries for the three scanning roles in each home-region cluster.',
  },
  eksAdminViewPolicy: {
    type: 'boolean',
    prop: 'eksAdminViewPolicy',
    default: false,
    doc: 'Also associate `AmazonEKSAdminViewPolicy` with those entries (needs `accessEntries`). It reads everything, **Secrets included**, so prefer the ClusterRole below.',
  },
  iamEvents: {
    type: 'boolean',
    default: true,
    doc: 'Deploy the us-east-1 IAM forwarding stack (`aws` partition only).',
  },
  amiEvents: {
    type: 'boolean',
    default: true,
    doc: 'Deploy an AMI forwarding stack in each region other than `homeRegion` that the scanner scans (`name@region` clusters; `discoveryRegions` when `discoverClusters` is set), so AMI state changes there rescan at once ([Deploy](#deploy)). Only where EventBridge routes events between regions: the `aws` and `aws-us-gov` partitions; elsewhere set it to `false` and those regions rely on the schedule.',
  },
  securityHub: {
    type: 'boolean',
    prop: 'securityHub',
    env: 'SECURITY_HUB',
    default: false,
    doc: "Also import findings into Security Hub (ASFF) in the home region and mark fixed ones resolved ([Security Hub](#security-hub)). Security Hub must be enabled there. The scanning roles get `securityhub:BatchImportFindings` on the account's default product ARN and `securityhub:BatchUpdateFindings` conditioned on `Workflow.Status` `RESOLVED`, `SUPPRESSED` or `NEW`.",
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof SETTINGS;
export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

type Spec<N extends SettingName> = (typeof SETTINGS)[N];

/** The value a setting holds once parsed. */
export type SettingValue<N extends SettingName> =
  Spec<N> extends { type: 'integer' }
    ? number
    : Spec<N> extends { type: 'boolean' }
      ? boolean
      : Spec<N> extends { type: 'choice'; choices: readonly (infer C)[] }
        ? C
        : Spec<N> extends { type: 'list' }
          ? readonly string[]
          : Spec<N> extends { type: 'text' }
            ? string
            : unknown;

export type SimpleSettingName = {
  [N in SettingName]: Spec<N> extends { type: 'json' } ? never : N;
}[SettingName];

export type EnvSettingName = {
  [N in SettingName]: Spec<N> extends { env: string } ? N : never;
}[SettingName];

/**
 * Problems of a parsed value (right type assumed by the caller's parsing), each without the
 * setting's name: `must be an integer from 2 to 100, got 1000`. `json` settings are not checked.
 */
export function valueProblems(spec: SettingSpec, value: unknown): string[] {
  switch (spec.type) {
    case 'integer': {
      if (typeof value !== 'number' || !Number.isInteger(value)) {
        return [`must be an integer from ${spec.min} to ${spec.max}, got ${JSON.stringify(value)}`];
      }
      if (value < spec.min || value > spec.max) {
        return [`must be an integer from ${spec.min} to ${spec.max}, got ${value}`];
      }
      if (spec.allowed !== undefined && !spec.allowed.includes(value)) {
        return [`must be one of ${spec.allowed.join(', ')}, got ${value}`];
      }
      return [];
    }
    case 'choice':
      return typeof value === 'string' && spec.choices.includes(value)
        ? []
        : [`must be one of ${spec.choices.join(', ')}, got ${JSON.stringify(value)}`];
    case 'boolean':
      return typeof value === 'boolean'
        ? []
        : [`must be true or false, got ${JSON.stringify(value)}`];
    case 'text': {
      if (typeof value !== 'string') return [`must be text, got ${JSON.stringify(value)}`];
      const problem = value === '' && spec.default === '' ? undefined : spec.check(value);
      return problem === undefined ? [] : [problem];
    }
    case 'list': {
      if (!Array.isArray(value) || value.some((entry) => typeof entry !== 'string')) {
        return [`must be a list of text, got ${JSON.stringify(value)}`];
      }
      const entries = value as readonly string[];
      const problems = entries.flatMap((entry, index) => {
        const problem = spec.item(entry);
        return problem === undefined ? [] : [`[${index}]: ${problem}`];
      });
      const chars = entries.join(',').length;
      if (spec.maxChars !== undefined && chars > spec.maxChars) {
        problems.push(
          `takes ${chars} characters of the Lambdas' 4 KB environment; keep it under ${spec.maxChars}`
        );
      }
      return problems;
    }
    case 'json':
      return [];
  }
}

/** `name: problem` / `name[1]: problem`, under the name the user wrote (key, prop, variable). */
export function namedProblems(label: string, problems: readonly string[]): string[] {
  return problems.map((problem) =>
    problem.startsWith('[') ? `${label}${problem}` : `${label}: ${problem}`
  );
}

/** The variable's text for a value (lists comma-separated). */
export function envText(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  return String(value);
}

/** The variable's text → the value (unchecked), or a problem for text that is not of the type. */
export function fromEnvText(
  spec: SettingSpec,
  text: string
): { readonly value: unknown } | { readonly problem: string } {
  switch (spec.type) {
    case 'integer': {
      const number = text.trim() === '' ? Number.NaN : Number(text);
      return Number.isInteger(number)
        ? { value: number }
        : { problem: `must be an integer from ${spec.min} to ${spec.max}, got "${text}"` };
    }
    case 'boolean':
      return text === 'true' || text === 'false'
        ? { value: text === 'true' }
        : { problem: `must be true or false, got "${text}"` };
    case 'list':
      return {
        value: text
          .split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry !== ''),
      };
    default:
      return { value: text };
  }
}

/** Values of the settings that relate to each other: problems keyed by the setting to blame. */
export interface RelatedValues {
  readonly clusters: readonly string[];
  readonly discoverClusters: string;
  /** Undefined when not known at synth (a construct in an environment-agnostic stack). */
  readonly homeRegion?: string | undefined;
  readonly scanConcurrency: number;
  readonly reservedScanConcurrency?: number | undefined;
  readonly accessEntries: boolean;
  readonly eksAdminViewPolicy: boolean;
}

/**
 * Rules across settings, shared by the cdk.json schema and the construct; each problem names the
 * setting to change. (The app adds its own, about stacks and partitions.)
 */
export function relatedProblems(
  values: RelatedValues
): { setting: SettingName; message: string }[] {
  const problems: { setting: SettingName; message: string }[] = [];
  if (values.clusters.length === 0 && values.discoverClusters === '') {
    problems.push({
      setting: 'clusters',
      message:
        'name at least one cluster to scan (cdk.json "clusters", or -c clusters=prod,dr@us-west-2), or set discoverClusters',
    });
  }
  const seen = new Map<string, string>();
  for (const entry of values.clusters) {
    const [name, region] = entry.split('@');
    const identity = `${name}@${region ?? values.homeRegion ?? ''}`;
    const earlier = seen.get(identity);
    if (earlier !== undefined) {
      problems.push({
        setting: 'clusters',
        message: `"${entry}" and "${earlier}" are the same cluster: list each cluster once`,
      });
    } else seen.set(identity, entry);
  }
  if (
    values.reservedScanConcurrency !== undefined &&
    values.reservedScanConcurrency < values.scanConcurrency
  ) {
    // Below the event source's maximum concurrency, Lambda throttles the queue's pollers.
    problems.push({
      setting: 'reservedScanConcurrency',
      message: `reserve at least scanConcurrency (${values.scanConcurrency}), or leave it unset`,
    });
  }
  if (values.eksAdminViewPolicy && !values.accessEntries) {
    problems.push({
      setting: 'eksAdminViewPolicy',
      message: 'eksAdminViewPolicy only applies with accessEntries=true',
    });
  }
  return problems;
}
