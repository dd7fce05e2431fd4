// Every `scan` option, wherever it is set: on the command line, in a `NODECLASS_SCAN_*` variable
// (the common ones) or in the config file. One table describes them all; from it come the config
// file's schema (zod, and the JSON schema shipped for editors), the variables' parsing and the
// precedence: flag > variable > file > default.
import * as z from 'zod';
import { CHECKS } from '../core/checks/index.js';
import { FINDING_STATUSES, type FindingStatus, SEVERITIES, type Severity } from '../core/model.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError } from '../shared/errors.js';
import { OUTPUT_FORMATS, type OutputFormat } from './formats/index.js';

export const FAIL_ON_CHOICES = [...SEVERITIES, 'none'] as const;
export type FailOn = (typeof FAIL_ON_CHOICES)[number];

/** A scan's settings once every source has been read. */
export interface ScanSettings {
  readonly format: OutputFormat;
  readonly failOn: FailOn;
  readonly severity?: readonly Severity[];
  readonly status?: readonly FindingStatus[];
  readonly region?: string;
  readonly karpenterVersion?: string;
  readonly kubernetesVersion?: string;
  readonly world?: string;
  readonly cluster: readonly string[];
  readonly aws: boolean;
  readonly profile?: string;
  readonly only: readonly string[];
  readonly skip: readonly string[];
  readonly nonProduction: boolean;
  readonly baseline?: string;
  readonly stdinName?: string;
  readonly awsAccountId?: string;
  readonly controllerRole: readonly string[];
  readonly dryRunRole?: string;
  readonly controllerPolicy: readonly string[];
  readonly permissionsBoundary?: string;
  readonly crd: readonly string[];
  readonly output?: string;
  readonly quiet: boolean;
}

/** What one source (flags, variables, the file) sets; absent keys are not set there. */
export type SettingValues = { -readonly [K in keyof ScanSettings]?: ScanSettings[K] };

type Kind =
  | 'choice'
  | 'choices'
  | 'text'
  | 'texts'
  | 'path'
  | 'paths'
  | 'boolean'
  | 'checkIds'
  | 'controllerRoles';

interface SettingSpec {
  readonly key: keyof ScanSettings;
  readonly kind: Kind;
  readonly choices?: readonly string[];
  /** The `NODECLASS_SCAN_*` variable, for the options set per environment. */
  readonly env?: string;
  readonly description: string;
}

/** The scan options the config file may set, in `scan --help` order; keys are the flags in camelCase. */
export const SETTINGS: readonly SettingSpec[] = [
  { key: 'cluster', kind: 'texts', description: 'Live EKS clusters to scan (--cluster).' },
  {
    key: 'region',
    kind: 'text',
    env: 'NODECLASS_SCAN_REGION',
    description: 'AWS region; alone it only sets region and partition for spec checks (--region).',
  },
  { key: 'world', kind: 'path', description: 'A world-state file: AWS facts offline (--world).' },
  { key: 'aws', kind: 'boolean', description: 'Use live AWS, default credential chain (--aws).' },
  {
    key: 'profile',
    kind: 'text',
    description: 'Use live AWS with this named profile (--profile).',
  },
  {
    key: 'karpenterVersion',
    kind: 'text',
    env: 'NODECLASS_SCAN_KARPENTER_VERSION',
    description: 'Karpenter version for version-aware checks, e.g. "1.7.0" (--karpenter-version).',
  },
  {
    key: 'kubernetesVersion',
    kind: 'text',
    description: 'Kubernetes version for alias terms with --aws/--profile (--kubernetes-version).',
  },
  {
    key: 'format',
    kind: 'choice',
    choices: OUTPUT_FORMATS,
    env: 'NODECLASS_SCAN_FORMAT',
    description: 'Output format (--format; default table).',
  },
  {
    key: 'output',
    kind: 'path',
    description: 'Write the report to this file instead of stdout (-o/--output).',
  },
  {
    key: 'failOn',
    kind: 'choice',
    choices: FAIL_ON_CHOICES,
    env: 'NODECLASS_SCAN_FAIL_ON',
    description: 'Exit 1 when a finding is at or above this severity (--fail-on; default high).',
  },
  {
    key: 'severity',
    kind: 'choices',
    choices: SEVERITIES,
    env: 'NODECLASS_SCAN_SEVERITY',
    description: 'Show only findings of these severities; --fail-on still counts all (--severity).',
  },
  {
    key: 'status',
    kind: 'choices',
    choices: FINDING_STATUSES,
    env: 'NODECLASS_SCAN_STATUS',
    description: 'Show only findings of these statuses; --fail-on still counts all (--status).',
  },
  {
    key: 'quiet',
    kind: 'boolean',
    description: 'Findings and errors only: no summary, no progress (--quiet).',
  },
  { key: 'only', kind: 'checkIds', description: 'Run only these checks (--only).' },
  { key: 'skip', kind: 'checkIds', description: 'Skip these checks (--skip).' },
  {
    key: 'nonProduction',
    kind: 'boolean',
    description: 'Lower pinning findings to info: non-production clusters (--non-production).',
  },
  {
    key: 'baseline',
    kind: 'path',
    description: 'Compare with an earlier --format json report (--baseline).',
  },
  {
    key: 'stdinName',
    kind: 'text',
    description: 'The file SARIF names for manifests read from - (--stdin-name).',
  },
  {
    key: 'awsAccountId',
    kind: 'text',
    description: 'Account of --format asff findings, quoted: "111122223333" (--aws-account-id).',
  },
  {
    key: 'controllerRole',
    kind: 'controllerRoles',
    description:
      "Karpenter's controller role per cluster: CLUSTER=ARN entries, or a map cluster: ARN (--controller-role).",
  },
  {
    key: 'dryRunRole',
    kind: 'text',
    description: 'Also DryRun RunInstances/CreateFleet with this assumed role (--dry-run-role).',
  },
  {
    key: 'controllerPolicy',
    kind: 'paths',
    description: "IAM policy documents simulated as the controller role's (--controller-policy).",
  },
  {
    key: 'permissionsBoundary',
    kind: 'path',
    description: 'With controllerPolicy: a permissions boundary (--permissions-boundary).',
  },
  {
    key: 'crd',
    kind: 'paths',
    description: "Karpenter's installed CRD documents to admit manifests by (--crd).",
  },
];

/** Options that say where objects and facts come from: taken from the file as a group, or not. */
const SOURCE_KEYS: readonly (keyof ScanSettings)[] = ['world', 'aws', 'profile', 'cluster'];

/** `HIGH` is `high`, ` Json ` is `json`: choices are matched whatever their case. */
function matchChoice<T extends string>(value: string, choices: readonly T[]): T | undefined {
  const wanted = value.trim().toLowerCase();
  return choices.find((choice) => choice === wanted);
}

function choiceProblem(value: string, choices: readonly string[]): string {
  return `"${value}" is not one of ${choices.join(', ')}${didYouMean(value.trim(), choices)}`;
}

/** A value or what is wrong with it. */
type Parsed<T> = { readonly value: T } | { readonly problem: string };

/** One choice, in any case. */
export function parseChoice<T extends string>(value: string, choices: readonly T[]): Parsed<T> {
  const match = matchChoice(value, choices);
  return match === undefined ? { problem: choiceProblem(value, choices) } : { value: match };
}

/** Choices separated by commas (or listed), in any case; at least one. */
export function parseChoiceList<T extends string>(
  values: string | readonly string[],
  choices: readonly T[]
): Parsed<T[]> {
  const items = (typeof values === 'string' ? [values] : values)
    .flatMap((value) => value.split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length === 0) return { problem: `give one or more of ${choices.join(', ')}` };
  const parsed: T[] = [];
  for (const item of items) {
    const match = matchChoice(item, choices);
    if (match === undefined) return { problem: choiceProblem(item, choices) };
    if (!parsed.includes(match)) parsed.push(match);
  }
  return { value: parsed };
}

const CHECK_IDS = CHECKS.map((check) => check.id);

/** `unknown check id "x" (did you mean "y"?)` for each id the catalog lacks, or undefined. */
export function unknownCheckIdsProblem(ids: readonly string[]): string | undefined {
  const unknown = ids.filter((id) => !CHECK_IDS.includes(id));
  if (unknown.length === 0) return undefined;
  return `unknown check id ${unknown
    .map((id) => `"${id}"${didYouMean(id, CHECK_IDS)}`)
    .join(', ')} (see \`nodeclass-scan checks\`)`;
}

/** `CLUSTER=ARN`, as --controller-role takes it. */
const CONTROLLER_ROLE_ARN = 'arn:[a-z-]+:iam::\\d{12}:role/.+';
const CONTROLLER_ROLE = new RegExp(`^[^=]+=${CONTROLLER_ROLE_ARN}$`);

function listOf(value: string | readonly string[]): string[] {
  return (typeof value === 'string' ? value.split(',') : [...value])
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** YAML reads `1.30` as the number 1.3 and an account id as a number: text must be quoted. */
const text = z
  .string({
    error: (issue) =>
      typeof issue.input === 'number' || typeof issue.input === 'boolean'
        ? `expected text: quote it ("${String(issue.input)}"; YAML reads it as a ${typeof issue.input})`
        : 'expected text',
  })
  .trim()
  .min(1, 'expected text');
const texts = z.union([text, z.array(text)], { error: 'expected text or a list of texts' });

function settingSchema(spec: SettingSpec): z.ZodType {
  const choices = spec.choices ?? [];
  switch (spec.kind) {
    case 'choice':
      return z
        .string({ error: `expected one of ${choices.join(', ')}` })
        .transform((value, ctx) => {
          const parsed = parseChoice(value, choices);
          if ('value' in parsed) return parsed.value;
          ctx.addIssue({ code: 'custom', message: parsed.problem });
          return z.NEVER;
        });
    case 'choices':
      return texts.transform((value, ctx) => {
        const parsed = parseChoiceList(value, choices);
        if ('value' in parsed) return parsed.value;
        ctx.addIssue({ code: 'custom', message: parsed.problem });
        return z.NEVER;
      });
    case 'text':
    case 'path':
      return text;
    case 'texts':
    case 'paths':
      return texts.transform(listOf);
    case 'boolean':
      return z.boolean({ error: 'expected true or false' });
    case 'checkIds':
      return texts.transform((value, ctx) => {
        const ids = listOf(value);
        const problem = unknownCheckIdsProblem(ids);
        if (problem === undefined) return ids;
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      });
    case 'controllerRoles':
      return z
        .union([texts, z.record(z.string(), text)], {
          error: 'expected CLUSTER=ARN entries or a map of cluster: role ARN',
        })
        .transform((value, ctx) => {
          const entries =
            typeof value === 'string' || Array.isArray(value)
              ? listOf(value)
              : Object.entries(value).map(([cluster, arn]) => `${cluster}=${arn}`);
          const bad = entries.find((entry) => !CONTROLLER_ROLE.test(entry));
          if (bad === undefined) return entries;
          ctx.addIssue({
            code: 'custom',
            message: `"${bad}" is not CLUSTER=arn:<partition>:iam::<account>:role/<name>`,
          });
          return z.NEVER;
        });
  }
}

/** The config file's scan options, each validated as its flag would be. */
export function settingsShape(): Record<string, z.ZodType> {
  return Object.fromEntries(SETTINGS.map((spec) => [spec.key, settingSchema(spec).optional()]));
}

/** Keys whose values are file paths: relative to the config file's directory. */
export const PATH_KEYS: readonly (keyof ScanSettings)[] = SETTINGS.filter(
  (spec) => spec.kind === 'path' || spec.kind === 'paths'
).map((spec) => spec.key);

/** The `NODECLASS_SCAN_*` variables: name → setting key. */
export const ENV_SETTINGS: readonly { readonly env: string; readonly key: keyof ScanSettings }[] =
  SETTINGS.flatMap((spec) => (spec.env === undefined ? [] : [{ env: spec.env, key: spec.key }]));

/** The settings the environment gives; an empty variable is unset, an invalid one a usage error. */
export function envSettings(env: Readonly<Record<string, string | undefined>>): SettingValues {
  const values: Record<string, unknown> = {};
  for (const spec of SETTINGS) {
    if (spec.env === undefined) continue;
    const raw = env[spec.env];
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = settingSchema(spec).safeParse(raw);
    if (!parsed.success) {
      throw new ConfigError(`${spec.env}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    }
    values[spec.key] = parsed.data;
  }
  return values as SettingValues;
}

/**
 * flag > variable > file > default. The file's source options (world, aws, profile, cluster) apply
 * only when the command line names none of them, so `--world w.json` never meets a file's `aws`.
 */
export function resolveSettings(sources: {
  readonly flags: SettingValues;
  readonly env: SettingValues;
  readonly file: SettingValues;
}): ScanSettings {
  const { flags, env } = sources;
  const flagsNameSource = SOURCE_KEYS.some((key) => flags[key] !== undefined);
  const file = flagsNameSource
    ? Object.fromEntries(
        Object.entries(sources.file).filter(([key]) => !SOURCE_KEYS.includes(key as never))
      )
    : sources.file;
  const merged = { ...file, ...definedOf(env), ...definedOf(flags) } as SettingValues;
  return {
    ...merged,
    format: merged.format ?? 'table',
    failOn: merged.failOn ?? 'high',
    cluster: merged.cluster ?? [],
    aws: merged.aws ?? false,
    only: merged.only ?? [],
    skip: merged.skip ?? [],
    nonProduction: merged.nonProduction ?? false,
    controllerRole: merged.controllerRole ?? [],
    controllerPolicy: merged.controllerPolicy ?? [],
    crd: merged.crd ?? [],
    quiet: merged.quiet ?? false,
  };
}

function definedOf(values: SettingValues): SettingValues {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

/** The JSON schema of one setting (canonical spellings: the scanner accepts any case). */
export function settingJsonSchema(key: string): Record<string, unknown> {
  const spec = SETTINGS.find((candidate) => candidate.key === key);
  if (spec === undefined) throw new Error(`no setting ${key}`);
  const description = spec.description;
  const textSchema = { type: 'string', minLength: 1 };
  const listOrText = (items: Record<string, unknown>) => ({
    anyOf: [
      { type: 'array', items, minItems: 1 },
      { type: 'string', minLength: 1, description: 'comma-separated' },
    ],
  });
  switch (spec.kind) {
    case 'choice':
      return { description, type: 'string', enum: [...(spec.choices ?? [])] };
    case 'choices':
      return { description, ...listOrText({ type: 'string', enum: [...(spec.choices ?? [])] }) };
    case 'text':
    case 'path':
      return { description, ...textSchema };
    case 'texts':
    case 'paths':
      return { description, anyOf: [textSchema, { type: 'array', items: textSchema }] };
    case 'boolean':
      return { description, type: 'boolean' };
    case 'checkIds':
      return { description, ...listOrText({ type: 'string', enum: CHECK_IDS }) };
    case 'controllerRoles':
      return {
        description,
        anyOf: [
          { type: 'array', items: { type: 'string', pattern: CONTROLLER_ROLE.source } },
          { type: 'string', pattern: CONTROLLER_ROLE.source },
          {
            type: 'object',
            additionalProperties: { type: 'string', pattern: `^${CONTROLLER_ROLE_ARN}$` },
          },
        ],
      };
  }
}
