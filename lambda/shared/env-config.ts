// The Lambdas' environment, parsed without zod: the dispatch bundle carries no schema library
// (zod is most of its size and import time). Only the scanning functions' IGNORE_RULES need one;
// config.ts supplies that parser. Every invalid or missing variable is listed in one ConfigError.
// The settings' variables, their defaults and ranges come from the settings table (settings.ts).
import {
  type AnnotationSuppression,
  DEFAULT_ANNOTATION_SUPPRESSION,
  parseAnnotationSuppression,
} from '../core/annotation-policy.js';
import type { IgnoreRule } from '../core/ignore-rules.js';
import { regionProblem } from '../core/region.js';
import { ConfigError } from './errors.js';
import {
  type EnvSettingName,
  fromEnvText,
  HANDLER_NAMES,
  type HandlerName,
  namedProblems,
  SETTING_NAMES,
  SETTINGS,
  type SettingSpec,
  type SettingValue,
  valueProblems,
} from './settings.js';

export { HANDLER_NAMES, type HandlerName } from './settings.js';

/** Tag filter for discovery; `*` as a value matches any value (see eks-reader `matchesTags`). */
export type DiscoveryTagFilter = Readonly<Record<string, string>>;

/** The value, or the problems found (each prefixed with the variable or element path). */
type Parsed<T> = { readonly value: T } | { readonly problems: readonly string[] };

/** Parses IGNORE_RULES (`undefined` when unset); problems are named like `IGNORE_RULES[0].check`. */
export type IgnoreRulesParser = (text: string | undefined) => Parsed<readonly IgnoreRule[]>;

const CLUSTER_NAME = /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/;
const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/;

function list(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function parseDiscovery(value: string): { tagFilter: DiscoveryTagFilter } | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed === 'off') return undefined;
  if (trimmed === '*') return { tagFilter: {} };
  // No prototype: a `__proto__` tag key is an ordinary key, not a lost assignment.
  const tagFilter: Record<string, string> = Object.create(null);
  for (const part of trimmed.split(',').map((entry) => entry.trim())) {
    const [key = '', tagValue] = part.split('=', 2);
    tagFilter[key.trim()] =
      tagValue === undefined || tagValue.trim() === '' ? '*' : tagValue.trim();
  }
  return { tagFilter };
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

interface Variable {
  readonly parse: (value: string) => Parsed<unknown>;
  /** Text used when the variable is unset; none: required by the handlers that list it. */
  readonly fallback?: string;
  readonly requiredBy?: readonly HandlerName[];
}

/** Variables that carry no setting: the resources the construct creates, and Lambda's own. */
const RESOURCE_VARIABLES = {
  /** DynamoDB table for finding state and the NodeClass index. */
  STATE_TABLE_NAME: {
    parse: (value: string): Parsed<string> =>
      value.length >= 3 && value.length <= 255
        ? { value }
        : { problems: ['STATE_TABLE_NAME: must be 3 to 255 characters'] },
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
  },
  /** SNS topic receiving one message per lifecycle change and a digest per scan. */
  FINDINGS_TOPIC_ARN: {
    parse: (value: string): Parsed<string> =>
      SNS_TOPIC_ARN.test(value)
        ? { value }
        : { problems: ['FINDINGS_TOPIC_ARN: must be an SNS topic ARN'] },
    requiredBy: ['scan-cluster', 'ami-event', 'iam-event'],
  },
  /** SQS queue the dispatcher fills, one message per cluster. */
  SCAN_QUEUE_URL: {
    parse: (value: string): Parsed<string> =>
      URL.canParse(value) && new URL(value).protocol === 'https:'
        ? { value }
        : { problems: ['SCAN_QUEUE_URL: must be an https URL'] },
    requiredBy: ['dispatch'],
  },
  /** The Lambda's own region (set by the Lambda runtime); any partition's. */
  AWS_REGION: {
    parse: (value: string): Parsed<string> => {
      const problem = regionProblem(value);
      return problem === undefined ? { value } : { problems: [`AWS_REGION: ${problem}`] };
    },
    requiredBy: HANDLER_NAMES,
  },
  /** Clusters whose scan environment differs from SCAN_ENVIRONMENT (from `clusterSettings`). */
  CLUSTER_ENVIRONMENTS: { parse: parseClusterEnvironments, fallback: '' },
} as const satisfies Record<string, Variable>;

/** `json` settings' variables: parsed here, not by the table. */
const JSON_SETTING_PARSERS: Readonly<Record<string, (value: string) => Parsed<unknown>>> = {
  // Parsed by the ignore-rules parser handed to parseConfig (zod; scanning functions only).
  IGNORE_RULES: (): Parsed<readonly IgnoreRule[]> => ({ value: [] }),
  ANNOTATION_SUPPRESSION: (value: string): Parsed<AnnotationSuppression> => {
    const parsed = parseAnnotationSuppression(value);
    return 'problem' in parsed
      ? { problems: [`ANNOTATION_SUPPRESSION: ${parsed.problem}`] }
      : { value: parsed.value };
  },
};

/** A setting's variable, parsed and checked as the table says. */
function settingVariable(key: string, spec: SettingSpec): Variable {
  const jsonParser = JSON_SETTING_PARSERS[key];
  const parse = (text: string): Parsed<unknown> => {
    if (spec.type === 'json') {
      if (jsonParser === undefined) throw new Error(`${key}: a json setting needs a parser here`);
      return jsonParser(text);
    }
    const read = fromEnvText(spec, text);
    if ('problem' in read) return { problems: [`${key}: ${read.problem}`] };
    const problems = namedProblems(key, valueProblems(spec, read.value));
    return problems.length > 0 ? { problems } : { value: read.value };
  };
  const fallback =
    spec.default === undefined
      ? // An optional text (a role ARN) is unset when empty.
        spec.type === 'text'
        ? ''
        : undefined
      : spec.type === 'json'
        ? typeof spec.default === 'string'
          ? spec.default
          : JSON.stringify(spec.default)
        : Array.isArray(spec.default)
          ? spec.default.join(',')
          : String(spec.default);
  return {
    // An empty number, flag or choice is unset (the construct writes every variable).
    parse: (text) =>
      text.trim() === '' && fallback !== undefined && spec.type !== 'text' && spec.type !== 'list'
        ? parse(fallback)
        : parse(text),
    ...(fallback === undefined ? {} : { fallback }),
    ...(spec.requiredBy === undefined ? {} : { requiredBy: spec.requiredBy }),
  };
}

type SettingEnvKey = (typeof SETTINGS)[EnvSettingName]['env'];
export type EnvKey = keyof typeof RESOURCE_VARIABLES | SettingEnvKey;

/** The setting each settings variable carries. */
const SETTING_OF_ENV = new Map<string, EnvSettingName>(
  SETTING_NAMES.flatMap((name) => {
    const spec: SettingSpec = SETTINGS[name];
    return spec.env === undefined ? [] : [[spec.env, name as EnvSettingName] as const];
  })
);

const VARIABLES: Readonly<Record<EnvKey, Variable>> = {
  ...RESOURCE_VARIABLES,
  ...(Object.fromEntries(
    [...SETTING_OF_ENV].map(([key, name]) => [key, settingVariable(key, SETTINGS[name])])
  ) as Record<SettingEnvKey, Variable>),
};

export const CONFIG_ENV_KEYS = Object.keys(VARIABLES) as EnvKey[];

/** Variables each handler requires (beyond the optional ones, which every handler accepts). */
export const HANDLER_ENV_KEYS: Readonly<Record<HandlerName, readonly EnvKey[]>> =
  Object.fromEntries(
    HANDLER_NAMES.map((handler) => [
      handler,
      CONFIG_ENV_KEYS.filter((key) => VARIABLES[key].requiredBy?.includes(handler)),
    ])
  ) as Record<HandlerName, EnvKey[]>;

/** Variables no handler requires: every handler gets and parses them. */
const OPTIONAL_KEYS: readonly EnvKey[] = CONFIG_ENV_KEYS.filter(
  (key) => VARIABLES[key].requiredBy === undefined
);

/** The settings a handler parsed from its variables, by setting name. */
export type EnvSettings = { readonly [N in EnvSettingName]?: SettingValue<N> };

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
  /** Every setting the handler parsed, by its name in the settings table (settings.ts). */
  readonly settings: EnvSettings;
}

/** What the resource variables hold once parsed. */
interface ResourceValues {
  STATE_TABLE_NAME?: string;
  FINDINGS_TOPIC_ARN?: string;
  SCAN_QUEUE_URL?: string;
  AWS_REGION?: string;
  CLUSTER_ENVIRONMENTS?: ReadonlyMap<string, 'production' | 'non-production'>;
}

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
  const resources: Record<string, unknown> = {};
  const settings: Record<string, unknown> = {};
  for (const key of keys) {
    const variable = VARIABLES[key];
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
    else {
      const setting = SETTING_OF_ENV.get(key);
      if (setting === undefined) resources[key] = parsed.value;
      else settings[setting] = parsed.value;
    }
  }
  // Checked with the others so one error names every missing variable.
  if (handler === 'dispatch' && !targetsClusters(settings as EnvSettings)) {
    problems.push(
      env.CLUSTERS === undefined
        ? 'CLUSTERS: missing (or set DISCOVER_CLUSTERS)'
        : 'CLUSTERS: must list at least one cluster, or set DISCOVER_CLUSTERS'
    );
  }
  if (problems.length > 0) {
    throw new ConfigError(
      `Invalid configuration for the ${handler} function: ${[...new Set(problems)].join('; ')}`
    );
  }
  return configOf(resources as ResourceValues, settings as EnvSettings);
}

function targetsClusters(settings: EnvSettings): boolean {
  return (settings.clusters ?? []).length > 0 || (settings.discoverClusters ?? '').trim() !== '';
}

function freezePolicy(policy: AnnotationSuppression): AnnotationSuppression {
  return typeof policy === 'string' ? policy : Object.freeze([...policy]);
}

function configOf(values: ResourceValues, settings: EnvSettings): Config {
  const region = values.AWS_REGION ?? '';
  const clusters = settings.clusters ?? [];
  const discoverClusters = settings.discoverClusters ?? '';
  const discovery = parseDiscovery(discoverClusters);
  const discoveryRegions = settings.discoveryRegions ?? [];
  return Object.freeze({
    region,
    stateTableName: values.STATE_TABLE_NAME ?? '',
    findingsTopicArn: values.FINDINGS_TOPIC_ARN ?? '',
    // arn:partition:sns:region:account:name
    account: (values.FINDINGS_TOPIC_ARN ?? '').split(':')[4] ?? '',
    scanQueueUrl: values.SCAN_QUEUE_URL ?? '',
    clusters: Object.freeze(
      clusters.map((entry) => {
        const [name = entry, clusterRegion] = entry.split('@');
        return Object.freeze({ name, region: clusterRegion ?? region });
      })
    ),
    ...(discovery === undefined
      ? {}
      : {
          discovery: Object.freeze({
            tagFilter: discovery.tagFilter,
            regions: Object.freeze(discoveryRegions.length > 0 ? [...discoveryRegions] : [region]),
          }),
        }),
    reminderIntervalMs: (settings.reminderHours ?? SETTINGS.reminderHours.default) * 3_600_000,
    resolvedTtlDays: settings.resolvedTtlDays ?? SETTINGS.resolvedTtlDays.default,
    simulationCacheHours: settings.simulationCacheHours ?? SETTINGS.simulationCacheHours.default,
    digest: settings.digest ?? SETTINGS.digest.default,
    alertBatchThreshold: settings.alertBatchThreshold ?? SETTINGS.alertBatchThreshold.default,
    environment: settings.scanEnvironment ?? SETTINGS.scanEnvironment.default,
    clusterEnvironments: values.CLUSTER_ENVIRONMENTS ?? new Map(),
    ignore: Object.freeze([...((settings.ignore as readonly IgnoreRule[] | undefined) ?? [])]),
    annotationSuppression: freezePolicy(
      (settings.annotationSuppression as AnnotationSuppression | undefined) ??
        DEFAULT_ANNOTATION_SUPPRESSION
    ),
    ssmParameterPrefixes: Object.freeze([...(settings.ssmParameterPrefixes ?? [])]),
    ...(settings.dryRunRoleArn ? { dryRunRoleArn: settings.dryRunRoleArn } : {}),
    securityHub: settings.securityHub ?? SETTINGS.securityHub.default,
    settings: Object.freeze(settings),
  });
}
