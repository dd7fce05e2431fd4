import { ConfigError } from '../../shared/errors.js';

/**
 * Bounds on what the scanner reads from files and standard input. Each keeps a hostile or
 * accidental input (a pipe that never ends, a 10 MiB flow array, a tree of a million files) from
 * exhausting memory or time; each is far above any real manifest repository and can be raised.
 */
export interface InputLimits {
  /** Bytes read from one manifest file or from standard input. */
  readonly maxInputBytes: number;
  /** Bytes read from one world file. */
  readonly maxWorldBytes: number;
  /** JSON values (objects, arrays, items, members) in one world file. */
  readonly maxWorldValues: number;
  /** YAML/JSON documents in one file. */
  readonly maxDocuments: number;
  /** YAML tokens in one document (scalars, brackets, indicators, commas, comments, line breaks). */
  readonly maxDocumentTokens: number;
  /** YAML tokens in all the files of one scan. */
  readonly maxTotalTokens: number;
  /** Manifest files and directories found under the scan's paths. */
  readonly maxFiles: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = {
  maxInputBytes: 10 * 1024 * 1024,
  maxWorldBytes: 50 * 1024 * 1024,
  // 200 × 50 fleet worlds (10,000 NodeClasses, 12 MB) hold 650,000 values; the worst case at this
  // limit, 2 million empty objects, parses to about 135 MB of heap.
  maxWorldValues: 2_000_000,
  maxDocuments: 10_000,
  maxDocumentTokens: 500_000,
  maxTotalTokens: 10_000_000,
  maxFiles: 100_000,
};

/** The environment variable that raises (or lowers) each limit. */
export const INPUT_LIMIT_ENV: { readonly [Key in keyof InputLimits]: string } = {
  maxInputBytes: 'NODECLASS_SCAN_MAX_INPUT_BYTES',
  maxWorldBytes: 'NODECLASS_SCAN_MAX_WORLD_BYTES',
  maxWorldValues: 'NODECLASS_SCAN_MAX_WORLD_VALUES',
  maxDocuments: 'NODECLASS_SCAN_MAX_DOCUMENTS',
  maxDocumentTokens: 'NODECLASS_SCAN_MAX_DOCUMENT_TOKENS',
  maxTotalTokens: 'NODECLASS_SCAN_MAX_TOKENS',
  maxFiles: 'NODECLASS_SCAN_MAX_FILES',
};

/** The limits, each overridden by its environment variable when set; a bad value is a ConfigError. */
export function inputLimitsFromEnv(
  env: Readonly<Record<string, string | undefined>> = process.env
): InputLimits {
  return limitsFromEnv(DEFAULT_INPUT_LIMITS, INPUT_LIMIT_ENV, env);
}

/** Numeric limits with defaults, each overridden by a positive whole number in its variable. */
export function limitsFromEnv<Limits extends { readonly [Key in keyof Limits]: number }>(
  defaults: Limits,
  variables: { readonly [Key in keyof Limits]: string },
  env: Readonly<Record<string, string | undefined>>
): Limits {
  const limits: Record<string, number> = { ...defaults };
  for (const key of Object.keys(variables) as (keyof Limits & string)[]) {
    const name = variables[key];
    const value = env[name]?.trim() ?? '';
    if (value === '') continue;
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < 1) {
      throw new ConfigError(
        `${name} must be a positive whole number, not ${JSON.stringify(value)}`
      );
    }
    limits[key] = parsed;
  }
  return limits as Limits;
}

/** `limit 10000, set NODECLASS_SCAN_MAX_DOCUMENTS to raise it`: for every limit's error message. */
export function describeLimit(limits: Partial<InputLimits>, key: keyof InputLimits): string {
  const unit = key === 'maxInputBytes' || key === 'maxWorldBytes' ? ' bytes' : '';
  return `limit ${limits[key]}${unit}, set ${INPUT_LIMIT_ENV[key]} to raise it`;
}
