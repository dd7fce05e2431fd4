// The deployable app's configuration: `cdk.json` context (or `-c key=value`), parsed with zod so a
// bad value fails `cdk synth` with the key's name instead of a half-built stack.
import { z } from 'zod';
import type { AnnotationSuppression } from '../lambda/core/annotation-policy.js';
import { CHECKS } from '../lambda/core/checks/index.js';
import {
  type ClusterSettingsMap,
  clusterEnvironmentsValue,
  clusterSettingsKeyProblems,
  clusterSettingsMapSchema,
  clusterSettingsSchema,
  scopedIgnoreRules,
} from '../lambda/core/cluster-settings.js';
import {
  annotationSuppressionSchema,
  type IgnoreRule,
  ignoreRuleSchema,
} from '../lambda/core/ignore-rules.js';
import { partitionOf } from '../lambda/core/region.js';
import { didYouMean } from '../lambda/core/suggest.js';
import {
  ANNOTATION_SUPPRESSION_MAX_CHARS,
  IGNORE_RULES_MAX_CHARS,
} from '../lambda/shared/config.js';
import {
  relatedProblems,
  SETTING_NAMES,
  SETTINGS,
  type SettingName,
  type SettingSpec,
  type SettingValue,
  type SimpleSettingName,
  valueProblems,
} from '../lambda/shared/settings.js';
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

/** The IAM-events stack is named after the scanner stack, with this suffix. */
export const FORWARDING_STACK_SUFFIX = 'IamEvents';
/** Each AMI-events stack is named after the scanner stack, with this suffix and its region. */
export const AMI_FORWARDING_STACK_SUFFIX = 'AmiEvents';
export const DEFAULT_STACK_NAME = SETTINGS.stackName.default;
/** CloudFormation's limit on a stack name. */
const STACK_NAME_MAX = 128;

/** The name of the stack forwarding `region`'s AMI state changes: `NodeClassScannerAmiEvents-eu-west-1`. */
export function amiForwardingStackName(stackName: string, region: string): string {
  return `${stackName}${AMI_FORWARDING_STACK_SUFFIX}-${region}`;
}

/** Partitions whose regions EventBridge routes events between (commercial and GovCloud). */
const CROSS_REGION_EVENT_PARTITIONS: readonly string[] = ['aws', 'aws-us-gov'];

/** The zod schema of each `json` setting: structured values the table does not check itself. */
const JSON_SETTING_SCHEMAS: Readonly<Record<Exclude<SettingName, SimpleSettingName>, z.ZodType>> = {
  /** Per-cluster environment, alertMinSeverity and ignore rules (`Kind/name` resources). */
  clusterSettings: objectOf(clusterSettingsMapSchema(CHECKS.map((check) => check.id))),
  /** Accepted findings: `[{check, resource, reason, expires?}]`, as in the CLI config file. */
  ignore: listOf(ignoreRuleSchema(CHECKS.map((check) => check.id))),
  /** `allow`, `deny`, or check ids/globs (a JSON array, or `a,b` with `-c`). */
  annotationSuppression: z.preprocess(
    (value) => {
      if (typeof value !== 'string') return value;
      const trimmed = value.trim();
      return trimmed.startsWith('[') ? JSON.parse(trimmed) : trimmed;
    },
    annotationSuppressionSchema(CHECKS.map((check) => check.id))
  ),
};

/** A table setting as a context key: `-c` text or cdk.json JSON in, the table's checks applied. */
function contextSchemaOf(name: SettingName): z.ZodType {
  const spec: SettingSpec = SETTINGS[name];
  const checked = (schema: z.ZodType) =>
    schema.superRefine((value, ctx) => {
      for (const problem of valueProblems(spec, value)) {
        const element = /^\[(\d+)\]: (.*)$/s.exec(problem);
        ctx.addIssue(
          element === null
            ? { code: 'custom', message: problem }
            : { code: 'custom', path: [Number(element[1])], message: element[2] ?? problem }
        );
      }
    });
  let schema: z.ZodType;
  switch (spec.type) {
    case 'integer':
      schema = checked(
        z.preprocess(
          (value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value),
          z.number()
        )
      );
      break;
    case 'boolean':
      schema = flag;
      break;
    case 'list':
      schema = checked(listOf(z.string()));
      break;
    case 'choice':
    case 'text':
      schema = checked(z.string());
      break;
    case 'json':
      schema = JSON_SETTING_SCHEMAS[name as keyof typeof JSON_SETTING_SCHEMAS];
      break;
  }
  return spec.default === undefined ? schema.optional() : schema.default(spec.default as never);
}

/** The settings' values as parsed from context (the table's types). */
type ContextValues = { [N in SimpleSettingName]: SettingValue<N> } & {
  clusterSettings: ClusterSettingsMap;
  ignore: IgnoreRule[];
  annotationSuppression: AnnotationSuppression;
};
/** Settings without a default are optional, except the one cdk.json must give. */
type ScannerConfigShape = Omit<ContextValues, NoDefaultSetting> &
  Partial<Pick<ContextValues, NoDefaultSetting>> & { homeRegion: string };
type NoDefaultSetting = {
  [N in SettingName]: (typeof SETTINGS)[N] extends { default: unknown } ? never : N;
}[SettingName];

/** Every context key the app reads: the settings table (lambda/shared/settings.ts). */
const scannerConfigSchema = z
  .object(Object.fromEntries(SETTING_NAMES.map((name) => [name, contextSchemaOf(name)])))
  .superRefine((parsed, ctx) => {
    const config = parsed as ScannerConfigShape;
    for (const { setting, message } of relatedProblems(config)) {
      ctx.addIssue({ code: 'custom', path: [setting], message });
    }
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

export type ScannerConfig = ScannerConfigShape;

export const CONFIG_KEYS: readonly string[] = SETTING_NAMES;

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
  if (result.success && unknown.length === 0) return result.data as ScannerConfig;
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
