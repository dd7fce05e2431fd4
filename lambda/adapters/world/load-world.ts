import { formatPath } from '../../core/schema.js';
import { InputError } from '../../shared/errors.js';
import {
  DEFAULT_INPUT_LIMITS,
  describeLimit,
  type InputLimits,
  inputLimitsFromEnv,
} from '../files/limits.js';
import { readRegularFile } from '../files/read-input.js';
import { type World, WorldSchema } from './schema.js';

type WorldLimits = Pick<InputLimits, 'maxWorldValues'>;

/**
 * True when the JSON text holds more than `limit` values, counted from its `[`, `{` and `,`
 * outside strings. Checked before JSON.parse, which spends ~80 bytes on each `{}`.
 */
export function jsonValuesExceed(text: string, limit: number): boolean {
  let values = 1;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c)
        index += 1; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x2c || code === 0x5b || code === 0x7b) {
      values += 1;
      if (values > limit) return true;
    }
  }
  return false;
}

const SAMPLE_ITEMS = 10_000;
const SAMPLE_KEYS = 1_000;
const SAMPLE_DEPTH = 32;

interface Sample {
  items: number;
  truncated: boolean;
}

/**
 * A copy of a parsed world cut to a size whose every problem can be listed: lists stop once
 * SAMPLE_ITEMS items are kept in all, maps at SAMPLE_KEYS keys. Zod reports every problem it meets,
 * and a hostile file of 3-byte `{}` items costs ~1.2 KB of issues each.
 */
function sampleOf(value: unknown, sample: Sample, depth = 0): unknown {
  // Deeper than any world-file schema reaches: zod never looks inside.
  if (typeof value !== 'object' || value === null || depth > SAMPLE_DEPTH) return value;
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    for (const item of value) {
      if (sample.items <= 0) {
        sample.truncated = true;
        break;
      }
      sample.items -= 1;
      kept.push(sampleOf(item, sample, depth + 1));
    }
    return kept;
  }
  const keys = Object.keys(value);
  if (keys.length > SAMPLE_KEYS) sample.truncated = true;
  const copy: Record<string, unknown> = {};
  for (const key of keys.slice(0, SAMPLE_KEYS)) {
    // defineProperty keeps a `__proto__` key an own property, as JSON.parse made it.
    Object.defineProperty(copy, key, {
      value: sampleOf((value as Record<string, unknown>)[key], sample, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/** Parses world-file text; a bad file is an InputError naming the file and the JSON path. */
export function parseWorld(
  text: string,
  file: string,
  limits: WorldLimits = DEFAULT_INPUT_LIMITS
): World {
  if (jsonValuesExceed(text, limits.maxWorldValues)) {
    throw new InputError(
      `${file}: holds too many JSON values (${describeLimit(limits, 'maxWorldValues')}); not read`
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`
    );
  }
  // The sample names the first problems at a bounded cost; the whole file is parsed only when the
  // sample is not all of it, after validate(), which stops at the first problem.
  const sample: Sample = { items: SAMPLE_ITEMS, truncated: false };
  const sampled = WorldSchema.safeParse(sampleOf(json, sample));
  if (!sampled.success) {
    const issues = sampled.error.issues.slice(0, 5).map((issue) => {
      const path = formatPath(issue.path);
      return `${path === '' ? '(root)' : path}: ${issue.message}`;
    });
    const more = sampled.error.issues.length > issues.length ? ' …' : '';
    throw new InputError(`${file}: not a valid world file: ${issues.join('; ')}${more}`);
  }
  if (!sample.truncated) return sampled.data;
  if (WorldSchema.validate(json)) {
    const result = WorldSchema.safeParse(json);
    if (result.success) return result.data;
  }
  throw new InputError(
    `${file}: not a valid world file: an item past the first ${SAMPLE_ITEMS} list items or ${SAMPLE_KEYS} map keys is invalid`
  );
}

/** Reads and parses a world file within the limits (default: the environment's). */
export async function loadWorldFile(
  file: string,
  limits: InputLimits = inputLimitsFromEnv()
): Promise<World> {
  let text: string;
  try {
    text = await readRegularFile(file, limits.maxWorldBytes, 'maxWorldBytes');
  } catch (error) {
    // Refusals (not a regular file, too large) already say why.
    if (error instanceof InputError) throw new InputError(`${file}: ${error.message}`);
    const code = (error as { code?: string }).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : error instanceof Error
            ? error.message
            : String(error);
    throw new InputError(`${file}: cannot read world file (${reason})`);
  }
  return parseWorld(text, file, limits);
}
