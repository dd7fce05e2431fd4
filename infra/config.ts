// The deployable app's configuration: `cdk.json` context (or `-c key=value`), parsed with zod so a
// bad value fails `cdk synth` with the key's name instead of a half-built stack.
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { z } from 'zod';
import { ssmPrefixProblem } from '../lambda/core/ami/ssm-scope.js';
import { CHECKS } from '../lambda/core/checks/index.js';
import {
  clusterEnvironmentsValue,
  clusterSettingsKeyProblems,
  clusterSettingsMapSchema,
  clusterSettingsSchema,
  SCAN_ENVIRONMENTS,
  scopedIgnoreRules,
} from '../lambda/core/cluster-settings.js';
import { annotationSuppressionSchema, ignoreRuleSchema } from '../lambda/core/ignore-rules.js';
import { SEVERITIES } from '../lambda/core/model.js';
import { isRegionName, partitionOf } from '../lambda/core/region.js';
import { didYouMean } from '../lambda/core/suggest.js';
import {
  ANNOTATION_SUPPRESSION_MAX_CHARS,
  IGNORE_RULES_MAX_CHARS,
  SSM_PARAMETER_PREFIXES_MAX_CHARS,
} from '../lambda/shared/config.js';
import { amiEventForwardingRegions } from './constructs/ami-event-forwarder.js';
import { LAMBDA_BUNDLES_CONTEXT_KEY } from './constructs/scanner-function.js';

/** `-c key=a,b` arrives as a string; cdk.json gives arrays. Accept both. */
function listOf<T extends z.ZodType>(item: T) {
  return z.preprocess((value) => {
    if (typeof value !== 'string') return value;
    const trimmed = value.trim();
    if (trimmed.startsWith('[')) return JSON.parse(trimmed);
    return trimmed === '' ? [] : trimmed.split(',').map((part) => part.trim());
  }, z.array(item));
}

function integer(min: number, max: number) {
  return z.preprocess(
    (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
    z.int().min(min).max(max)
  );
}

/** `-c key={"a":…}` arrives as JSON text; cdk.json gives the object. */
function objectOf<T extends z.ZodType>(schema: T) {
  return z.preprocess(
    (value) => (typeof value === 'string' ? JSON.parse(value.trim() === '' ? '{}' : value) : value),
    schema
  );
}

const flag = z.preprocess((value) => {
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}, z.boolean());

const region = z.string().refine(isRegionName, 'expected an AWS region name such as eu-west-1');

const RETENTION_DAYS = Object.values(RetentionDays).filter(
  (days): days is RetentionDays => typeof days === 'number' && days > 0
);

const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;
// `name` (home region) or `name@region`: the Lambdas' CLUSTERS format (lambda/shared/config.ts).
const CLUSTER_TARGET = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}(@[a-z]{2,4}(-[a-z]+)+-\d+)?$/;

/** The IAM-events stack is named after the scanner stack, with this suffix. */
export const FORWARDING_STACK_SUFFIX = 'IamEvents';
/** Each AMI-events stack is named after the scanner stack, with this suffix and its region. */
export const AMI_FORWARDING_STACK_SUFFIX = 'AmiEvents';
export const DEFAULT_STACK_NAME = 'NodeClassScanner';
/** CloudFormation's limit on a stack name. */
const STACK_NAME_MAX = 128;

/** The name of the stack forwarding `region`'s AMI state changes: `NodeClassScannerAmiEvents-eu-west-1`. */
export function amiForwardingStackName(stackName: string, region: string): string {
  return `${stackName}${AMI_FORWARDING_STACK_SUFFIX}-${region}`;
}

/** Partitions whose regions EventBridge routes events between (commercial and GovCloud). */
const CROSS_REGION_EVENT_PARTITIONS: readonly string[] = ['aws', 'aws-us-gov'];

/** Every context key the app reads, with its default. The README's configuration table mirrors it. */
export const scannerConfigSchema = z
  .object({
    /**
     * The scanner stack's name (and construct id); the IAM-events stack is this + `IamEvents`.
     * Distinct names let several deployments (prod, non-prod) share an account and region.
     */
    stackName: z
      .string()
      .regex(
        /^[A-Za-z][A-Za-z0-9-]*$/,
        'expected a CloudFormation stack name: letters, digits and hyphens, starting with a letter'
      )
      .max(STACK_NAME_MAX - FORWARDING_STACK_SUFFIX.length)
      .default(DEFAULT_STACK_NAME),
    homeRegion: region,
    clusters: listOf(
      z.string().regex(CLUSTER_TARGET, 'expected an EKS cluster name, optionally name@region')
    ).default([]),
    /** Discovery on each schedule: `*` (every cluster) or tag filters `key=value,key2`; empty = off. */
    discoverClusters: z
      .string()
      .regex(
        /^(|\*|[^,=\s]+(=[^,]*)?(,[^,=\s]+(=[^,]*)?)*)$/,
        'expected *, or tag filters key=value,key2'
      )
      .default(''),
    discoveryRegions: listOf(region).default([]),
    scheduleMinutes: integer(1, 720).default(15),
    alertEmails: listOf(z.email()).default([]),
    alertMinSeverity: z.enum(SEVERITIES).default('high'),
    slackWorkspaceId: z
      .string()
      .regex(/^[A-Z0-9]+$/, 'expected a Slack workspace id such as T0123ABCD')
      .optional(),
    slackChannelId: z
      .string()
      .regex(/^[A-Z0-9]+$/, 'expected a Slack channel id such as C0123ABCD')
      .optional(),
    reminderHours: integer(1, 24 * 30).default(24),
    resolvedTtlDays: integer(1, 365).default(30),
    /** Hours a permission simulation's verdict is reused across scans; 0 = every scan simulates. */
    simulationCacheHours: integer(0, 24 * 7).default(24),
    digest: z.enum(['on-change', 'always', 'never']).default('on-change'),
    /** More changes than this in one cluster scan are sent as one summary message. */
    alertBatchThreshold: integer(1, 1000).default(5),
    scanEnvironment: z.enum(SCAN_ENVIRONMENTS).default('production'),
    /** Per-cluster environment, alertMinSeverity and ignore rules (`Kind/name` resources). */
    clusterSettings: objectOf(clusterSettingsMapSchema(CHECKS.map((check) => check.id))).default(
      {}
    ),
    /** Accepted findings: `[{check, resource, reason, expires?}]`, as in the CLI config file. */
    ignore: listOf(ignoreRuleSchema(CHECKS.map((check) => check.id))).default([]),
    /**
     * Whether ignore-check annotations on cluster objects may suppress findings: `allow`, `deny`,
     * or a list of check ids/globs whose annotations may. A trust decision (README).
     */
    annotationSuppression: z
      .preprocess(
        (value) => {
          if (typeof value !== 'string') return value;
          const trimmed = value.trim();
          return trimmed.startsWith('[') ? JSON.parse(trimmed) : trimmed;
        },
        annotationSuppressionSchema(CHECKS.map((check) => check.id))
      )
      .default('allow'),
    dryRunRoleArn: z.string().regex(ROLE_ARN, 'expected an IAM role ARN').optional(),
    /** Custom SSM parameter path prefixes the scanner may read, beyond /aws/service/; none by default. */
    ssmParameterPrefixes: listOf(
      z.string().superRefine((prefix, ctx) => {
        const problem = ssmPrefixProblem(prefix);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
    ).default([]),
    vpcId: z
      .string()
      .regex(/^vpc-[0-9a-f]+$/, 'expected a VPC id such as vpc-0123abcd')
      .optional(),
    subnetIds: listOf(z.string().regex(/^subnet-[0-9a-f]+$/, 'expected subnet ids')).default([]),
    logRetentionDays: integer(1, 3653)
      .refine((days) => (RETENTION_DAYS as number[]).includes(days), {
        message: `expected one of CloudWatch Logs' retention values: ${RETENTION_DAYS.join(', ')}`,
      })
      .default(30),
    /** Concurrent cluster scans: the scan queue's maximum concurrency. */
    scanConcurrency: integer(2, 100).default(4),
    /** Also reserve concurrency for the scan worker; off by default (see NodeClassScannerProps). */
    reservedScanConcurrency: integer(1, 1000).optional(),
    accessEntries: flag.default(false),
    eksAdminViewPolicy: flag.default(false),
    iamEvents: flag.default(true),
    /** Deploy a stack forwarding AMI state changes from each other region the scanner scans. */
    amiEvents: flag.default(true),
    /** Opt-in: import findings into Security Hub (the account must have Security Hub enabled). */
    securityHub: flag.default(false),
  })
  .superRefine((config, ctx) => {
    // Global and per-cluster rules travel together (IGNORE_RULES), with the per-cluster
    // environments beside them (CLUSTER_ENVIRONMENTS): one budget for all three.
    const ignoreChars =
      JSON.stringify([...config.ignore, ...scopedIgnoreRules(config.clusterSettings)]).length +
      clusterEnvironmentsValue(config.clusterSettings).length;
    if (ignoreChars > IGNORE_RULES_MAX_CHARS) {
      ctx.addIssue({
        code: 'custom',
        path: [Object.keys(config.clusterSettings).length > 0 ? 'clusterSettings' : 'ignore'],
        message:
          `the ignore rules and per-cluster environments take ${ignoreChars} characters of the ` +
          `Lambdas' 4 KB environment; keep them under ${IGNORE_RULES_MAX_CHARS} (shorter reasons, ` +
          'one glob for several objects)',
      });
    }
    for (const { key, message } of clusterSettingsKeyProblems(Object.keys(config.clusterSettings), {
      clusters: config.clusters,
      discovery: config.discoverClusters !== '',
    })) {
      ctx.addIssue({ code: 'custom', path: ['clusterSettings', key], message });
    }
    const annotationChars =
      typeof config.annotationSuppression === 'string'
        ? 0
        : config.annotationSuppression.join(',').length;
    if (annotationChars > ANNOTATION_SUPPRESSION_MAX_CHARS) {
      ctx.addIssue({
        code: 'custom',
        path: ['annotationSuppression'],
        message: `the check list takes ${annotationChars} characters of the Lambdas' 4 KB environment; keep it under ${ANNOTATION_SUPPRESSION_MAX_CHARS} (globs such as ami-*)`,
      });
    }
    const prefixChars = config.ssmParameterPrefixes.join(',').length;
    if (prefixChars > SSM_PARAMETER_PREFIXES_MAX_CHARS) {
      ctx.addIssue({
        code: 'custom',
        path: ['ssmParameterPrefixes'],
        message: `the prefixes take ${prefixChars} characters of the Lambdas' 4 KB environment; keep them under ${SSM_PARAMETER_PREFIXES_MAX_CHARS} (a shorter common prefix)`,
      });
    }
    if (config.clusters.length === 0 && config.discoverClusters === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['clusters'],
        message: 'name at least one cluster to scan, or set discoverClusters',
      });
    }
    if ((config.slackWorkspaceId === undefined) !== (config.slackChannelId === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [config.slackWorkspaceId === undefined ? 'slackWorkspaceId' : 'slackChannelId'],
        message: 'slackWorkspaceId and slackChannelId go together: set both or neither',
      });
    }
    if ((config.vpcId === undefined) !== (config.subnetIds.length === 0)) {
      ctx.addIssue({
        code: 'custom',
        path: [config.vpcId === undefined ? 'vpcId' : 'subnetIds'],
        message: 'vpcId and subnetIds go together: set both or neither',
      });
    }
    const elsewhere = clustersOutside(config.clusters, config.homeRegion);
    if (config.accessEntries && elsewhere.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['accessEntries'],
        message:
          `access entries can only be created in ${config.homeRegion}, not for ${elsewhere.join(', ')}: ` +
          'create those with `aws eks create-access-entry` (README) or set accessEntries=false',
      });
    }
    if (
      config.reservedScanConcurrency !== undefined &&
      config.reservedScanConcurrency < config.scanConcurrency
    ) {
      // Below the event source's maximum concurrency, Lambda throttles the queue's pollers.
      ctx.addIssue({
        code: 'custom',
        path: ['reservedScanConcurrency'],
        message: `reserve at least scanConcurrency (${config.scanConcurrency}), or leave it unset`,
      });
    }
    if (config.eksAdminViewPolicy && !config.accessEntries) {
      ctx.addIssue({
        code: 'custom',
        path: ['eksAdminViewPolicy'],
        message: 'eksAdminViewPolicy only applies with accessEntries=true',
      });
    }
    if (config.iamEvents && partitionOf(config.homeRegion) !== 'aws') {
      ctx.addIssue({
        code: 'custom',
        path: ['iamEvents'],
        message:
          'IAM event forwarding is supported in the aws partition only (EventBridge cannot forward ' +
          'cross-region into GovCloud or China); set iamEvents=false and rely on the schedule',
      });
    }
    if (config.amiEvents) amiForwardingProblems(config, ctx);
  });

/** The AMI forwarding stacks this configuration deploys must be nameable and routable. */
function amiForwardingProblems(
  config: {
    readonly stackName: string;
    readonly homeRegion: string;
    readonly clusters: readonly string[];
    readonly discoverClusters: string;
    readonly discoveryRegions: readonly string[];
  },
  ctx: z.RefinementCtx
): void {
  const regions = amiEventForwardingRegions(config);
  const longest = regions
    .map((region) => amiForwardingStackName(config.stackName, region))
    .find((name) => name.length > STACK_NAME_MAX);
  if (longest !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['stackName'],
      message: `the AMI-events stack "${longest}" would be longer than CloudFormation's ${STACK_NAME_MAX} characters; shorten stackName`,
    });
  }
  const home = partitionOf(config.homeRegion);
  const foreign = regions.filter((region) => partitionOf(region) !== home);
  if (foreign.length > 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['amiEvents'],
      message:
        `${foreign.join(', ')} ${foreign.length === 1 ? 'is' : 'are'} not in the partition of ` +
        `${config.homeRegion} (${home}): one account, and its events, live in one partition`,
    });
  } else if (regions.length > 0 && !CROSS_REGION_EVENT_PARTITIONS.includes(home)) {
    ctx.addIssue({
      code: 'custom',
      path: ['amiEvents'],
      message:
        `forwarding AMI events from ${regions.join(', ')} needs EventBridge cross-Region routing, ` +
        `which the ${home} partition does not document; set amiEvents=false and rely on the schedule`,
    });
  }
}

/** Cluster entries (`name@region`) that are not in `homeRegion`. */
function clustersOutside(clusters: readonly string[], homeRegion: string): string[] {
  return clusters.filter((entry) => {
    const region = entry.split('@')[1];
    return region !== undefined && region !== homeRegion;
  });
}

export type ScannerConfig = z.output<typeof scannerConfigSchema>;

export const CONFIG_KEYS = Object.keys(scannerConfigSchema.shape) as readonly string[];

/** Fields of the object-valued keys (clusterSettings, ignore rules), for "did you mean". */
const NESTED_FIELDS = [
  ...Object.keys(clusterSettingsSchema().shape),
  ...Object.keys(ignoreRuleSchema().shape),
];

/**
 * Context keys the CDK itself reads or writes, which a synth always carries: feature flags
 * (`@aws-cdk/…`), `aws:cdk:…` settings, lookup results cached in cdk.context.json (their keys
 * hold `:`), CLI settings (`cli-…`, `cdk-…`) and acknowledged notices.
 */
export function isCdkContextKey(key: string): boolean {
  // The scanner's own `nodeclass-scanner:` keys are checked like its settings, not waved through.
  if (key.startsWith(SCANNER_CONTEXT_PREFIX)) return false;
  return (
    key.startsWith('@') ||
    key.includes(':') ||
    key.startsWith('cdk-') ||
    key.startsWith('cli-') ||
    key === 'acknowledged-issue-numbers'
  );
}

const SCANNER_CONTEXT_PREFIX = 'nodeclass-scanner:';
/** Context keys the construct reads itself (not app settings). */
const CONSTRUCT_CONTEXT_KEYS: readonly string[] = [LAMBDA_BUNDLES_CONTEXT_KEY];

/** Context keys that are neither the scanner's nor the CDK's: typos, or settings that do not exist. */
export function unknownContextKeys(context: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(context).filter(
    (key) =>
      !CONFIG_KEYS.includes(key) && !CONSTRUCT_CONTEXT_KEYS.includes(key) && !isCdkContextKey(key)
  );
}

/**
 * Parse the app's whole context (`app.node.getAllContext()`); throws one error that names every
 * bad key, including keys the scanner does not know (with the nearest one it does).
 */
export function parseScannerConfig(context: Readonly<Record<string, unknown>>): ScannerConfig {
  const unknown = unknownContextKeys(context).map(
    (key) =>
      `  - context key "${key}": not a nodeclass-scanner setting${didYouMean(key, [...CONFIG_KEYS, ...CONSTRUCT_CONTEXT_KEYS])}`
  );
  const known = Object.fromEntries(CONFIG_KEYS.map((key) => [key, context[key]]));
  let result: ReturnType<typeof scannerConfigSchema.safeParse>;
  try {
    result = scannerConfigSchema.safeParse(known);
  } catch (error) {
    // JSON.parse of a malformed `-c key=[…]` value.
    throw new Error(`Invalid nodeclass-scanner configuration: ${(error as Error).message}`);
  }
  if (result.success && unknown.length === 0) return result.data;
  const problems = [
    ...unknown,
    ...(result.error?.issues ?? []).map((issue) => {
      const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      const hint =
        issue.code === 'unrecognized_keys'
          ? issue.keys.map((field) => didYouMean(field, NESTED_FIELDS)).join('')
          : '';
      return `  - context key "${key}": ${issue.message}${hint}`;
    }),
  ];
  throw new Error(
    `Invalid nodeclass-scanner configuration (cdk.json "context" or -c key=value):\n${problems.join('\n')}`
  );
}
