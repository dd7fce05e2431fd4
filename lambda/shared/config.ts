// The only place that reads the Lambdas' environment. Parsed once with zod into a frozen Config;
// every invalid or missing variable is listed in one ConfigError. The CDK stack sets exactly the
// keys in HANDLER_ENV_KEYS for each function.
import { z } from 'zod';
import { ssmPrefixProblem } from '../core/ami/ssm-scope.js';
import { type IgnoreRule, ignoreRulesSchema, issuePath } from '../core/ignore-rules.js';
import { ConfigError } from './errors.js';

export const HANDLER_NAMES = ['dispatch', 'scan-cluster', 'ami-event', 'iam-event'] as const;
export type HandlerName = (typeof HANDLER_NAMES)[number];

const clusterTarget = z
  .string()
  .regex(
    /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}(@[a-z]{2}(-[a-z]+)+-\d+)?$/,
    'each entry must be an EKS cluster name, optionally @region'
  );

/** Tag filter for discovery; `*` as a value matches any value (see eks-reader `matchesTags`). */
export type DiscoveryTagFilter = Readonly<Record<string, string>>;

function parseDiscovery(
  value: string,
  context: z.RefinementCtx
): { readonly tagFilter: DiscoveryTagFilter } | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'off') return undefined;
  if (trimmed === '*') return { tagFilter: {} };
  // No prototype: a `__proto__` tag key is an ordinary key, not a lost assignment.
  const tagFilter: Record<string, string> = Object.create(null);
  for (const part of trimmed.split(',').map((entry) => entry.trim())) {
    const [key = '', tagValue] = part.split('=', 2);
    if (key.trim() === '') {
      context.addIssue({ code: 'custom', message: `"${part}" is not key=value or key` });
      return z.NEVER;
    }
    tagFilter[key.trim()] =
      tagValue === undefined || tagValue.trim() === '' ? '*' : tagValue.trim();
  }
  return { tagFilter };
}

const positiveNumber = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return fallback;
      const parsed = Number(value);
      if (!Number.isFinite(parsed) || parsed <= 0) {
        context.addIssue({ code: 'custom', message: `must be a positive number, got "${value}"` });
        return z.NEVER;
      }
      return parsed;
    });

const positiveInteger = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, context) => {
      if (value === undefined || value.trim() === '') return fallback;
      const parsed = Number(value);
      if (!Number.isInteger(parsed) || parsed <= 0) {
        context.addIssue({ code: 'custom', message: `must be a positive integer, got "${value}"` });
        return z.NEVER;
      }
      return parsed;
    });

/**
 * The Lambda environment holds at most 4 KB of variables per function: the ignore rules may take
 * this much of it (checked at synth).
 */
export const IGNORE_RULES_MAX_CHARS = 2500;

/** Characters the SSM parameter prefixes may take of the same environment (checked at synth). */
export const SSM_PARAMETER_PREFIXES_MAX_CHARS = 512;

/** The CDK context key that lists them: findings about a parameter outside them name it. */
export const SSM_PARAMETER_PREFIXES_SETTING = 'the ssmParameterPrefixes CDK context key';

/** JSON text → ignore rules; given the catalog's ids, a rule naming no check is an error. */
function ignoreRulesVariable(knownCheckIds?: readonly string[]) {
  return z
    .string()
    .default('[]')
    .transform((value, context): unknown => {
      try {
        return JSON.parse(value.trim() === '' ? '[]' : value);
      } catch {
        context.addIssue({ code: 'custom', message: 'must be a JSON array of ignore rules' });
        return z.NEVER;
      }
    })
    .pipe(ignoreRulesSchema(knownCheckIds));
}

/** Every variable, with its meaning. Optional ones have defaults. */
const ENV_SCHEMA = {
  /** DynamoDB table for finding state and the NodeClass index. */
  STATE_TABLE_NAME: z.string().min(3).max(255),
  /** SNS topic receiving one message per lifecycle change and a digest per scan. */
  FINDINGS_TOPIC_ARN: z
    .string()
    .regex(
      /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/,
      'must be an SNS topic ARN'
    ),
  /** SQS queue the dispatcher fills, one message per cluster. */
  SCAN_QUEUE_URL: z.url({ protocol: /^https$/ }),
  /** Comma-separated cluster names (`name` or `name@region`) the schedule scans. */
  CLUSTERS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '')
    )
    .pipe(z.array(clusterTarget)),
  /**
   * Cluster discovery on each schedule (adds to CLUSTERS): empty = off, `*` = every cluster in
   * DISCOVERY_REGIONS, or comma-separated tag filters `key=value` / `key` (any value).
   */
  DISCOVER_CLUSTERS: z
    .string()
    .default('')
    .transform((value, context) => parseDiscovery(value, context)),
  /** Regions to discover clusters in (comma-separated); the home region when empty. */
  DISCOVERY_REGIONS: z
    .string()
    .default('')
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '')
    )
    .pipe(
      z.array(z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'each entry must be a region name'))
    ),
  /** The Lambda's own region (set by the Lambda runtime). */
  AWS_REGION: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be a region name'),
  /** Hours between reminders for a finding that keeps failing. */
  REMINDER_INTERVAL_HOURS: positiveNumber(24),
  /** Days a resolved finding's state is kept (DynamoDB TTL). */
  RESOLVED_TTL_DAYS: positiveNumber(30),
  /** When to publish the per-scan digest. */
  DIGEST: z.enum(['on-change', 'always', 'never']).default('on-change'),
  /** More changes than this in one cluster scan are sent as one summary message. */
  ALERT_BATCH_THRESHOLD: positiveInteger(5),
  /** Opt-in DryRun mode: the role assumed to dry-run EC2 launches; empty = off. */
  DRY_RUN_ROLE_ARN: z
    .string()
    .default('')
    .refine(
      (value) => value === '' || /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/.test(value),
      'must be an IAM role ARN or empty'
    ),
  /** `non-production` lowers pinning findings to info. */
  SCAN_ENVIRONMENT: z.enum(['production', 'non-production']).default('production'),
  /** Accepted findings: the `ignore` rules as JSON (`[{check, resource, reason, expires?}]`). */
  IGNORE_RULES: ignoreRulesVariable(),
  /**
   * Comma-separated path prefixes of the custom SSM parameters the scanner may read (beyond the
   * public /aws/service/ ones); empty = none. The role's ssm:GetParameter grant matches them.
   */
  SSM_PARAMETER_PREFIXES: z
    .string()
    .default('')
    .transform((value, context) => {
      const prefixes = value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '');
      for (const prefix of prefixes) {
        const problem = ssmPrefixProblem(prefix);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      }
      return prefixes;
    }),
} as const;

export type EnvKey = keyof typeof ENV_SCHEMA;
export const CONFIG_ENV_KEYS = Object.keys(ENV_SCHEMA) as EnvKey[];

/** Variables each handler requires (beyond the optional ones, which every handler accepts). */
export const HANDLER_ENV_KEYS: Readonly<Record<HandlerName, readonly EnvKey[]>> = {
  dispatch: ['SCAN_QUEUE_URL', 'CLUSTERS', 'DISCOVER_CLUSTERS', 'DISCOVERY_REGIONS', 'AWS_REGION'],
  'scan-cluster': [
    'STATE_TABLE_NAME',
    'FINDINGS_TOPIC_ARN',
    'AWS_REGION',
    'IGNORE_RULES',
    'SSM_PARAMETER_PREFIXES',
  ],
  'ami-event': [
    'STATE_TABLE_NAME',
    'FINDINGS_TOPIC_ARN',
    'AWS_REGION',
    'IGNORE_RULES',
    'SSM_PARAMETER_PREFIXES',
  ],
  'iam-event': [
    'STATE_TABLE_NAME',
    'FINDINGS_TOPIC_ARN',
    'AWS_REGION',
    'IGNORE_RULES',
    'SSM_PARAMETER_PREFIXES',
  ],
};

const OPTIONAL_KEYS: readonly EnvKey[] = [
  'DRY_RUN_ROLE_ARN',
  'REMINDER_INTERVAL_HOURS',
  'RESOLVED_TTL_DAYS',
  'DIGEST',
  'ALERT_BATCH_THRESHOLD',
  'SCAN_ENVIRONMENT',
];

export interface ClusterTarget {
  readonly name: string;
  readonly region: string;
}

export interface Config {
  readonly region: string;
  readonly stateTableName: string;
  readonly findingsTopicArn: string;
  /** The AWS account (of the findings topic, the scanner's own), named in every message. */
  readonly account: string;
  readonly scanQueueUrl: string;
  readonly clusters: readonly ClusterTarget[];
  /** Discovery on each schedule, when configured: the tag filter and the regions to list. */
  readonly discovery?: {
    readonly tagFilter: DiscoveryTagFilter;
    readonly regions: readonly string[];
  };
  readonly reminderIntervalMs: number;
  readonly resolvedTtlDays: number;
  readonly digest: 'on-change' | 'always' | 'never';
  /** More changes than this per cluster scan go out as one summary. */
  readonly alertBatchThreshold: number;
  readonly environment: 'production' | 'non-production';
  /** Config `ignore` rules (scanning functions; `[]` elsewhere). */
  readonly ignore: readonly IgnoreRule[];
  /** Custom SSM parameter path prefixes the scanning functions may read (`[]`: public ones only). */
  readonly ssmParameterPrefixes: readonly string[];
  /** DryRun mode's role, when configured. */
  readonly dryRunRoleArn?: string;
}

/**
 * Parses the variables `handler` needs. Variables a handler does not use are left empty in the
 * Config (`''`/`[]`), so each function only needs its own keys set. `checkIds` (the scanning
 * functions pass the catalog) makes an ignore rule naming no check an error.
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  handler: HandlerName,
  options: { readonly checkIds?: readonly string[] } = {}
): Config {
  const keys = [...HANDLER_ENV_KEYS[handler], ...OPTIONAL_KEYS];
  const shape = Object.fromEntries(
    keys.map((key) => [
      key,
      key === 'IGNORE_RULES' ? ignoreRulesVariable(options.checkIds) : ENV_SCHEMA[key],
    ])
  );
  const parsed = z.object(shape).safeParse(Object.fromEntries(keys.map((key) => [key, env[key]])));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '?');
      return env[key] === undefined
        ? `${key}: missing`
        : `${issuePath(key, issue.path.slice(1))}: ${issue.message}`;
    });
    throw new ConfigError(
      `Invalid configuration for the ${handler} function: ${[...new Set(problems)].join('; ')}`
    );
  }
  const values = parsed.data as Partial<{ [K in EnvKey]: z.output<(typeof ENV_SCHEMA)[K]> }>;
  const region = values.AWS_REGION ?? '';
  if (handler === 'dispatch' && (values.CLUSTERS ?? []).length === 0 && !values.DISCOVER_CLUSTERS) {
    throw new ConfigError(
      'Invalid configuration for the dispatch function: CLUSTERS: must list at least one cluster, or set DISCOVER_CLUSTERS'
    );
  }
  const discovery = values.DISCOVER_CLUSTERS;
  return Object.freeze({
    region,
    stateTableName: values.STATE_TABLE_NAME ?? '',
    findingsTopicArn: values.FINDINGS_TOPIC_ARN ?? '',
    // arn:partition:sns:region:account:name
    account: (values.FINDINGS_TOPIC_ARN ?? '').split(':')[4] ?? '',
    scanQueueUrl: values.SCAN_QUEUE_URL ?? '',
    clusters: Object.freeze(
      (values.CLUSTERS ?? []).map((entry) => {
        const [name = entry, clusterRegion] = entry.split('@');
        return Object.freeze({ name, region: clusterRegion ?? region });
      })
    ),
    ...(discovery === undefined
      ? {}
      : {
          discovery: Object.freeze({
            tagFilter: discovery.tagFilter,
            regions: Object.freeze(
              (values.DISCOVERY_REGIONS ?? []).length > 0
                ? (values.DISCOVERY_REGIONS ?? [])
                : [region]
            ),
          }),
        }),
    reminderIntervalMs: (values.REMINDER_INTERVAL_HOURS ?? 24) * 3_600_000,
    resolvedTtlDays: values.RESOLVED_TTL_DAYS ?? 30,
    digest: values.DIGEST ?? 'on-change',
    alertBatchThreshold: values.ALERT_BATCH_THRESHOLD ?? 5,
    environment: values.SCAN_ENVIRONMENT ?? 'production',
    ignore: Object.freeze(values.IGNORE_RULES ?? []),
    ssmParameterPrefixes: Object.freeze(values.SSM_PARAMETER_PREFIXES ?? []),
    ...(values.DRY_RUN_ROLE_ARN ? { dryRunRoleArn: values.DRY_RUN_ROLE_ARN } : {}),
  });
}
