// The CLI's config file: `--config FILE`, or `.nodeclass-scanner.yaml` (or `.yml`) in the working
// directory or the nearest parent up to the repository root. It holds ignore rules,
// annotationSuppression and any scan option (scan-settings.ts). Every problem is a usage error
// naming the file and the offending key.
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parse, YAMLParseError } from 'yaml';
import * as z from 'zod';
import { readRegularFile } from '../adapters/files/read-input.js';
import type { AnnotationSuppression } from '../core/annotation-policy.js';
import { CHECKS } from '../core/checks/index.js';
import {
  annotationSuppressionSchema,
  type IgnoreRule,
  ignoreRulesSchema,
  isExpired,
  issuePath,
} from '../core/ignore-rules.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError, InputError } from '../shared/errors.js';
import { PATH_KEYS, type SettingValues, settingsShape } from './scan-settings.js';
import { terminalSafe } from './terminal.js';

export const DEFAULT_CONFIG_FILE = '.nodeclass-scanner.yaml';
/** The names looked for, in each directory from the working directory up to the repository root. */
const CONFIG_FILE_NAMES = [DEFAULT_CONFIG_FILE, '.nodeclass-scanner.yml'] as const;

/** Same cap as manifests: a config file is small, anything bigger is a mistake. */
// A config file holds a handful of ignore rules; the cap keeps a hostile one cheap to parse.
const MAX_CONFIG_BYTES = 256 * 1024;

export interface CliConfig {
  /** The file read, when there was one. */
  readonly file?: string;
  readonly ignore: readonly IgnoreRule[];
  /**
   * Whether ignore-check annotations may suppress (`allow`, `deny`, check ids); absent: not set
   * in the file (the default, `allow`, unless `--no-annotation-suppression`).
   */
  readonly annotationSuppression?: AnnotationSuppression;
  /** Scan options set in the file; paths are absolute (the file's are relative to it). */
  readonly settings?: SettingValues;
}

const RULE_KEYS = ['check', 'resource', 'reason', 'expires'];

const configSchema = z.strictObject({
  // `ignore:` with every rule commented out is YAML null: no rules.
  ignore: z
    .preprocess(
      (value) => (value === null ? [] : value),
      ignoreRulesSchema(CHECKS.map((check) => check.id))
    )
    .default([]),
  annotationSuppression: annotationSuppressionSchema(CHECKS.map((check) => check.id)).optional(),
  ...settingsShape(),
});

async function readText(
  file: string,
  label: string,
  explicit: boolean
): Promise<string | undefined> {
  try {
    return await readRegularFile(file, MAX_CONFIG_BYTES, { description: 'limit 256 KiB' });
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError(`${label}: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    // The default file is optional; a file the user named must exist.
    if (!explicit && code === 'ENOENT') return undefined;
    throw new ConfigError(`${label}: cannot read (${code ?? String(error)})`);
  }
}

/** Parses a config file's text; `file` names it in every message. */
export function parseCliConfig(text: string, file: string): CliConfig {
  let document: unknown;
  try {
    document = parse(text, { prettyErrors: false, uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    const reason = error instanceof YAMLParseError ? error.message : String(error);
    throw new ConfigError(`${file}: not valid YAML: ${reason}`);
  }
  // An empty file (or only comments) is an empty config.
  const result = configSchema.safeParse(document ?? {});
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      if (issue.code === 'unrecognized_keys') {
        const where = issue.path.length === 0 ? '' : `${issuePath('', issue.path).slice(1)}: `;
        const allowed = issue.path.length === 0 ? Object.keys(configSchema.shape) : RULE_KEYS;
        const hints = issue.keys.map((key) => didYouMean(key, allowed)).filter((hint) => hint);
        return `${where}unknown key ${issue.keys.map((key) => `"${key}"`).join(', ')}${
          hints.length === issue.keys.length ? hints.join('') : ` (allowed: ${allowed.join(', ')})`
        }`;
      }
      const path = issuePath('', issue.path).slice(1);
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    });
    throw new ConfigError(`${file}: ${problems.join('; ')}`);
  }
  const { annotationSuppression, ignore, ...rest } = result.data;
  const settings = Object.fromEntries(
    Object.entries(rest).filter(([, value]) => value !== undefined)
  ) as SettingValues;
  return {
    file,
    ignore,
    ...(annotationSuppression === undefined ? {} : { annotationSuppression }),
    ...(Object.keys(settings).length === 0 ? {} : { settings }),
  };
}

/** The directory holding `.git` (a directory, or a file in worktrees and submodules), if any. */
function repositoryRoot(cwd: string): string | undefined {
  for (let directory = cwd; ; directory = dirname(directory)) {
    if (existsSync(join(directory, '.git'))) return directory;
    if (dirname(directory) === directory) return undefined;
  }
}

/**
 * The config file that applies in `cwd`: the first directory from `cwd` up to the repository root
 * that holds `.nodeclass-scanner.yaml` or `.yml` (outside a repository, `cwd` only).
 */
function discoverConfigFile(cwd: string): string | undefined {
  const root = repositoryRoot(cwd);
  for (let directory = cwd; ; directory = dirname(directory)) {
    const found = CONFIG_FILE_NAMES.map((name) => join(directory, name)).filter((file) =>
      existsSync(file)
    );
    const [first, second] = found;
    if (first !== undefined && second !== undefined) {
      throw new ConfigError(
        `${relative(cwd, first) || first} and ${relative(cwd, second) || second} both exist: keep one`
      );
    }
    if (first !== undefined) return first;
    if (root === undefined || directory === root || dirname(directory) === directory) {
      return undefined;
    }
  }
}

/** Paths in the file are relative to its directory: made absolute, so they hold from anywhere. */
function fromConfigDirectory(config: CliConfig, file: string): CliConfig {
  const settings: Record<string, unknown> = { ...(config.settings ?? {}) };
  // `-` (standard output, `output: -`) is no path.
  const from = (path: string) => (path === '-' ? path : resolve(dirname(file), path));
  for (const key of PATH_KEYS) {
    const value = settings[key];
    if (typeof value === 'string') settings[key] = from(value);
    else if (Array.isArray(value)) settings[key] = value.map((path: string) => from(path));
  }
  return { ...config, settings: settings as SettingValues };
}

/**
 * `--config FILE` (must exist; relative to `cwd`), else the file `discoverConfigFile` finds, else
 * no config.
 */
export async function loadCliConfig(options: {
  readonly explicit?: string;
  readonly cwd: string;
}): Promise<CliConfig> {
  const explicit = options.explicit !== undefined;
  const file =
    options.explicit === undefined
      ? discoverConfigFile(options.cwd)
      : resolve(options.cwd, options.explicit);
  if (file === undefined) return { ignore: [] };
  const label = options.explicit ?? (relative(options.cwd, file) || file);
  const text = await readText(file, label, explicit);
  if (text === undefined) return { ignore: [] };
  return fromConfigDirectory(parseCliConfig(text, label), file);
}

/** One stderr line per rule whose `expires` has passed: its findings are reported again. */
export function expiredRuleWarnings(config: CliConfig, now: Date): string[] {
  return config.ignore.flatMap((rule, index) =>
    isExpired(rule, now)
      ? [
          `nodeclass-scan: warning: ${terminalSafe(config.file ?? 'config')}: ignore[${index}] (${terminalSafe(`${rule.check} on ${rule.resource}`)}) expired ${rule.expires}; its findings are reported again\n`,
        ]
      : []
  );
}
