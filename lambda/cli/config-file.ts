// The CLI's config file: `--config FILE`, or `.nodeclass-scanner.yaml` in the working directory
// when present. Every problem is a usage error naming the file and the offending key.
import { resolve } from 'node:path';
import { parse, YAMLParseError } from 'yaml';
import { z } from 'zod';
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
import { ConfigError, InputError } from '../shared/errors.js';
import { terminalSafe } from './terminal.js';

export const DEFAULT_CONFIG_FILE = '.nodeclass-scanner.yaml';

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
}

const configSchema = z.strictObject({
  // `ignore:` with every rule commented out is YAML null: no rules.
  ignore: z
    .preprocess(
      (value) => (value === null ? [] : value),
      ignoreRulesSchema(CHECKS.map((check) => check.id))
    )
    .default([]),
  annotationSuppression: annotationSuppressionSchema(CHECKS.map((check) => check.id)).optional(),
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
        const allowed =
          issue.path.length === 0
            ? 'ignore, annotationSuppression'
            : 'check, resource, reason, expires';
        return `${where}unknown key ${issue.keys.map((key) => `"${key}"`).join(', ')} (allowed: ${allowed})`;
      }
      const path = issuePath('', issue.path).slice(1);
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    });
    throw new ConfigError(`${file}: ${problems.join('; ')}`);
  }
  const { annotationSuppression } = result.data;
  return {
    file,
    ignore: result.data.ignore,
    ...(annotationSuppression === undefined ? {} : { annotationSuppression }),
  };
}

/**
 * `--config FILE` (must exist), else `.nodeclass-scanner.yaml` in `cwd` when present, else no
 * config. Relative paths are resolved against `cwd`.
 */
export async function loadCliConfig(options: {
  readonly explicit?: string;
  readonly cwd: string;
}): Promise<CliConfig> {
  const explicit = options.explicit !== undefined;
  const label = options.explicit ?? DEFAULT_CONFIG_FILE;
  const text = await readText(resolve(options.cwd, label), label, explicit);
  if (text === undefined) return { ignore: [] };
  return parseCliConfig(text, label);
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
