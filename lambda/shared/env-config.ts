// The Lambdas' environment, parsed without zod: the dispatch bundle carries no schema library
// (zod is most of its size and import time). Only the scanning functions' IGNORE_RULES need one;
// config.ts supplies that parser. Every invalid or missing variable is listed in one ConfigError.
import { ssmPrefixProblem } from '../core/ami/ssm-scope.js';
import {
  type AnnotationSuppression,
  DEFAULT_ANNOTATION_SUPPRESSION,
  parseAnnotationSuppression,
} from '../core/annotation-policy.js';
import type { IgnoreRule } from '../core/ignore-rules.js';
import { ConfigError } from './errors.js';

export const HANDLER_NAMES = ['dispatch', 'scan-cluster', 'ami-event', 'iam-event'] as const;
export type HandlerName = (typeof HANDLER_NAMES)[number];

/** Tag filter for discovery; `*` as a value matches any value (see eks-reader `matchesTags`). */
export type DiscoveryTagFilter = Readonly<Record<string, string>>;

/** The value, or the problems found (each prefixed with the variable or element path). */
type Parsed<T> = { readonly value: T } | { readonly problems: readonly string[] };

/** Parses IGNORE_RULES (`undefined` when unset); problems are named like `IGNORE_RULES[0].check`. */
export type IgnoreRulesParser = (text: string | undefined) => Parsed<readonly IgnoreRule[]>;

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
const CLUSTER_TARGET = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}(@[a-z]{2}(-[a-z]+)+-\d+)?$/;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;
const IAM_ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

function list(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function matching(key: string, pattern: RegExp, message: string) {
  return (value: string): Parsed<string> =>
    pattern.test(value) ? { value } : { problems: [`${key}: ${message}`] };
}

function listOf(key: string, pattern: RegExp, message: string) {
  return (value: string): Parsed<string[]> => {
    const entries = list(value);
    const problems = entries.flatMap((entry, index) =>
      pattern.test(entry) ? [] : [`${key}[${index}]: ${message}`]
    );
    return problems.length > 0 ? { problems } : { value: entries };
  };
}

function positive(key: string, fallback: number, integer: boolean) {
  return (value: string): Parsed<number> => {
    if (value.trim() === '') return { value: fallback };
    const parsed = Number(value);
    const valid = integer ? Number.isInteger(parsed) : Number.isFinite(parsed);
    return valid && parsed > 0
      ? { value: parsed }
      : {
          problems: [
            `${key}: must be a positive ${integer ? 'integer' : 'number'}, got "${value}"`,
          ],
        };
  };
}

function nonNegative(key: string, fallback: number) {
  return (value: string): Parsed<number> => {
    if (value.trim() === '') return { value: fallback };
    const parsed = Number(value);
    return Number.isFinite(parsed) && parsed >= 0
      ? { value: parsed }
      : { problems: [`${key}: must be a number of 0 or more, got "${value}"`] };
  };
}

function oneOf<const T extends string>(key: string, options: readonly T[]) {
  return (value: string): Parsed<T> =>
    (options as readonly string[]).includes(value)
      ? { value: value as T }
      : { problems: [`${key}: must be one of ${options.join(', ')}`] };
}

function parseDiscovery(value: string): Parsed<{ tagFilter: DiscoveryTagFilter } | undefined> {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'off') return { value: undefined };
  if (trimmed === '*') return { value: { tagFilter: {} } };
  // No prototype: a `__proto__` tag key is an ordinary key, not a lost assignment.
  const tagFilter: Record<string, string> = Object.create(null);
  for (const part of trimmed.split(',').map((entry) => entry.trim())) {
    const [key = '', tagValue] = part.split('=', 2);
    if (key.trim() === '') {
      return { problems: [`DISCOVER_CLUSTERS: "${part}" is not key=value or key`] };
    }
    tagFilter[key.trim()] =
      tagValue === undefined || tagValue.trim() === '' ? '*' : tagValue.trim();
  }
  return { value: { tagFilter } };
}

/** `name=environment,…`: each cluster's own scan environment (`clusterSettings`). */
function parseClusterEnvironments(
  value: string
): Parsed<ReadonlyMap<string, 'production' | 'non-production'>> {
  const environments = new Map<string, 'production' | 'non-production'>();
  const problems: string[] = [];
  for (const entry of list(value)) {
    const [name = '', environment = ''] = entry.split('=', 2);
    if (
      !CLUSTER_NAME.test(name) ||
      (environment !== 'production' && environment !== 'non-production')
    ) {
      problems.push(`CLUSTER_ENVIRONMENTS: "${entry}" is not cluster=production|non-production`);
    } else environments.set(name, environment);
  }
  return problems.length > 0 ? { problems } : { value: environments };
}

function parseSsmPrefixes(value: string): Parsed<string[]> {
  const prefixes = list(value);
  const problems = prefixes.flatMap((prefix) => {
    const problem = ssmPrefixProblem(prefix);
    return problem === undefined ? [] : [`SSM_PARAMETER_PREFIXES: ${problem}`];
  });
  return problems.length > 0 ? { problems } : { value: prefixes };
}

/** How each variable is read: its parser, and its default when unset (none: required). */
const VARIABLES = {
  /** DynamoDB table for finding state and the NodeClass index. */
  STATE_TABLE_NAME: {
    parse: (value: string): Parsed<string> =>
      value.length >= 3 && value.length <= 255
        ? { value }
        : { problems: ['STATE_TABLE_NAME: must be 3 to 255 characters'] },
  },
  /** SNS topic receiving one message per lifecycle change and a digest per scan. */
  FINDINGS_TOPIC_ARN: {
    parse: matching('FINDINGS_TOPIC_ARN', SNS_TOPIC_ARN, 'must be an SNS topic ARN'),
  },
  /** SQS queue the dispatcher fills, one message per cluster. */
  SCAN_QUEUE_URL: {
    parse: (value: string): Parsed<string> =>
      URL.canParse(value) && new URL(value).protocol === 'https:'
        ? { value }
        : { problems: ['SCAN_QUEUE_URL: must be an https URL'] },
  },
  /** Comma-separated cluster names (`name` or `name@region`) the schedule scans. */
  CLUSTERS: {
    parse: listOf(
      'CLUSTERS',
      CLUSTER_TARGET,
      'each entry must be an EKS cluster name, optionally @region'
    ),
  },
  /**
   * Cluster discovery on each schedule (adds to CLUSTERS): empty = off, `*` = every cluster in
   * DISCOVERY_REGIONS, or comma-separated tag filters `key=value` / `key` (any value).
   */
  DISCOVER_CLUSTERS: { parse: parseDiscovery, fallback: '' },
  /** Regions to discover clusters in (comma-separated); the home region when empty. */
  DISCOVERY_REGIONS: {
    parse: listOf('DISCOVERY_REGIONS', REGION, 'each entry must be a region name'),
    fallback: '',
  },
  /** The Lambda's own region (set by the Lambda runtime). */
  AWS_REGION: { parse: matching('AWS_REGION', REGION, 'must be a region name') },
  /** Hours between reminders for a finding that keeps failing. */
  REMINDER_INTERVAL_HOURS: { parse: positive('REMINDER_INTERVAL_HOURS', 24, false), fallback: '' },
  /** Days a resolved finding's state is kept (DynamoDB TTL). */
  RESOLVED_TTL_DAYS: { parse: positive('RESOLVED_TTL_DAYS', 30, false), fallback: '' },
  /** Hours a permission simulation's verdict is reused across scans; 0 = never. */
  SIMULATION_CACHE_HOURS: { parse: nonNegative('SIMULATION_CACHE_HOURS', 24), fallback: '' },
  /** When to publish the per-scan digest. */
  DIGEST: { parse: oneOf('DIGEST', ['on-change', 'always', 'never']), fallback: 'on-change' },
  /** More changes than this in one cluster scan are sent as one summary message. */
  ALERT_BATCH_THRESHOLD: { parse: positive('ALERT_BATCH_THRESHOLD', 5, true), fallback: '' },
  /** Opt-in DryRun mode: the role assumed to dry-run EC2 launches; empty = off. */
  DRY_RUN_ROLE_ARN: {
    parse: (value: string): Parsed<string> =>
      value === '' || IAM_ROLE_ARN.test(value)
        ? { value }
        : { problems: ['DRY_RUN_ROLE_ARN: must be an IAM role ARN or empty'] },
    fallback: '',
  },
  /** Opt-in: import new/changed findings into Security Hub and resolve fixed ones there. */
  SECURITY_HUB: { parse: oneOf('SECURITY_HUB', ['true', 'false']), fallback: 'false' },
  /** `non-production` lowers pinning findings to info. */
  SCAN_ENVIRONMENT: {
    parse: oneOf('SCAN_ENVIRONMENT', ['production', 'non-production']),
    fallback: 'production',
  },
  /** Clusters whose scan environment differs from SCAN_ENVIRONMENT: `name=environment,…`. */
  CLUSTER_ENVIRONMENTS: { parse: parseClusterEnvironments, fallback: '' },
  /** Accepted findings: the `ignore` rules as JSON (`[{check, resource, reason, expires?}]`). */
  IGNORE_RULES: { parse: (): Parsed<readonly IgnoreRule[]> => ({ value: [] }), fallback: '[]' },
  /**
   * Whether ignore-check annotations on cluster objects may suppress findings: `allow`, `deny`, or
   * check ids/globs separated by commas (the `annotationSuppression` setting).
   */
  ANNOTATION_SUPPRESSION: {
    parse: (value: string): Parsed<AnnotationSuppression> => {
      const parsed = parseAnnotationSuppression(value);
      return 'problem' in parsed
        ? { problems: [`ANNOTATION_SUPPRESSION: ${parsed.problem}`] }
        : { value: parsed.value };
    },
    fallback: 'allow',
  },
  /**
   * Comma-separated path prefixes of the custom SSM parameters the scanner may read (beyond the
   * public /aws/service/ ones); empty = none. The role's ssm:GetParameter grant matches them.
   */
  SSM_PARAMETER_PREFIXES: { parse: parseSsmPrefixes, fallback: '' },
} as const satisfies Record<
  string,
  { readonly parse: (value: string) => Parsed<unknown>; readonly fallback?: string }
>;

export type EnvKey = keyof typeof VARIABLES;
export const CONFIG_ENV_KEYS = Object.keys(VARIABLES) as EnvKey[];

/** Variables each handler requires (beyond the optional ones, which every handler accepts). */
export const HANDLER_ENV_KEYS: Readonly<Record<HandlerName, readonly EnvKey[]>> = {
  dispatch: ['SCAN_QUEUE_URL', 'CLUSTERS', 'DISCOVER_CLUSTERS', 'DISCOVERY_REGIONS', 'AWS_REGION'],
  'scan-cluster': [
    'STATE_TABLE_NAME',
    'FINDINGS_TOPIC_ARN',
    'AWS_REGION',
    'IGNORE_RULES',
    'ANNOTATION_SUPPRESSION',
    'SSM_PARAMETER_PREFIXES',
    'SIMULATION_CACHE_HOURS',
  ],
  'ami-event': [
    'STATE_TABLE_NAME',
    'FINDINGS_TOPIC_ARN',
    'AWS_REGION',
    'IGNORE_RULES',
    'ANNOTATION_SUPPRESSION',
    'SSM_PARAMETER_PREFIXES',
    'SIMULATION_CACHE_HOURS',
  ],
  'iam-event': [
    'STATE_TABLE_NAME',
    'FINDINGS_TOPIC_ARN',
    'AWS_REGION',
    'IGNORE_RULES',
    'ANNOTATION_SUPPRESSION',
    'SSM_PARAMETER_PREFIXES',
    'SIMULATION_CACHE_HOURS',
  ],
};

const OPTIONAL_KEYS: readonly EnvKey[] = [
  'DRY_RUN_ROLE_ARN',
  'REMINDER_INTERVAL_HOURS',
  'RESOLVED_TTL_DAYS',
  'DIGEST',
  'ALERT_BATCH_THRESHOLD',
  'SCAN_ENVIRONMENT',
  'CLUSTER_ENVIRONMENTS',
  'SECURITY_HUB',
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
  /** Hours a simulation verdict is reused across scans (scanning functions; 0 = not cached). */
  readonly simulationCacheHours: number;
  readonly digest: 'on-change' | 'always' | 'never';
  /** More changes than this per cluster scan go out as one summary. */
  readonly alertBatchThreshold: number;
  readonly environment: 'production' | 'non-production';
  /** Clusters (by name) scanned in another environment than `environment`. */
  readonly clusterEnvironments: ReadonlyMap<string, 'production' | 'non-production'>;
  /** Config `ignore` rules (scanning functions; `[]` elsewhere). */
  readonly ignore: readonly IgnoreRule[];
  /** Whether annotations may suppress findings (scanning functions; `allow` elsewhere). */
  readonly annotationSuppression: AnnotationSuppression;
  /** Custom SSM parameter path prefixes the scanning functions may read (`[]`: public ones only). */
  readonly ssmParameterPrefixes: readonly string[];
  /** DryRun mode's role, when configured. */
  readonly dryRunRoleArn?: string;
  /** Findings go to Security Hub too (the `securityHub` setting). */
  readonly securityHub: boolean;
}

type Values = {
  -readonly [K in EnvKey]?: ReturnType<(typeof VARIABLES)[K]['parse']> extends Parsed<infer T>
    ? T
    : never;
};

/**
 * Parses the variables `handler` needs. Variables a handler does not use are left empty in the
 * Config (`''`/`[]`). A handler that reads IGNORE_RULES needs `ignoreRules` (config.ts's loadConfig).
 */
export function parseConfig(
  env: Readonly<Record<string, string | undefined>>,
  handler: HandlerName,
  ignoreRules?: IgnoreRulesParser
): Config {
  const keys = [...HANDLER_ENV_KEYS[handler], ...OPTIONAL_KEYS];
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const key of keys) {
    const variable: { parse: (value: string) => Parsed<unknown>; fallback?: string } =
      VARIABLES[key];
    const raw = env[key];
    let parsed: Parsed<unknown>;
    if (key === 'IGNORE_RULES') {
      if (ignoreRules === undefined) throw new Error(`${handler}: IGNORE_RULES needs a parser`);
      parsed = ignoreRules(raw);
    } else if (raw === undefined && variable.fallback === undefined) {
      parsed = { problems: [`${key}: missing`] };
    } else {
      parsed = variable.parse(raw ?? variable.fallback ?? '');
    }
    if ('problems' in parsed) problems.push(...parsed.problems);
    else values[key] = parsed.value;
  }
  if (problems.length > 0) {
    throw new ConfigError(
      `Invalid configuration for the ${handler} function: ${[...new Set(problems)].join('; ')}`
    );
  }
  return configOf(handler, values as Values);
}

function freezePolicy(policy: AnnotationSuppression): AnnotationSuppression {
  return typeof policy === 'string' ? policy : Object.freeze([...policy]);
}

function configOf(handler: HandlerName, values: Values): Config {
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
    simulationCacheHours: values.SIMULATION_CACHE_HOURS ?? 24,
    digest: values.DIGEST ?? 'on-change',
    alertBatchThreshold: values.ALERT_BATCH_THRESHOLD ?? 5,
    environment: values.SCAN_ENVIRONMENT ?? 'production',
    clusterEnvironments: values.CLUSTER_ENVIRONMENTS ?? new Map(),
    ignore: Object.freeze([...(values.IGNORE_RULES ?? [])]),
    annotationSuppression: freezePolicy(
      values.ANNOTATION_SUPPRESSION ?? DEFAULT_ANNOTATION_SUPPRESSION
    ),
    ssmParameterPrefixes: Object.freeze(values.SSM_PARAMETER_PREFIXES ?? []),
    ...(values.DRY_RUN_ROLE_ARN ? { dryRunRoleArn: values.DRY_RUN_ROLE_ARN } : {}),
    securityHub: values.SECURITY_HUB === 'true',
  });
}
