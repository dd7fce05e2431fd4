import { inputLimitsFromEnv } from '../adapters/files/limits.js';
import { readRegularFile } from '../adapters/files/read-input.js';
import { type Baseline, BaselineSchema } from '../core/baseline.js';
import { formatPath } from '../core/schema.js';
import { ConfigError, InputError } from '../shared/errors.js';

function readReason(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return error instanceof Error ? error.message : String(error);
}

/** Parses baseline text; anything but a JSON report is a usage error naming the file. */
function parseBaseline(text: string, file: string): Baseline {
  const prefix = `--baseline ${file}`;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${prefix}: not valid JSON (${error instanceof Error ? error.message : String(error)}); give a report written by --format json`
    );
  }
  const result = BaselineSchema.safeParse(json);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 3).map((issue) => {
    const path = formatPath(issue.path);
    return `${path === '' ? '(root)' : path}: ${issue.message}`;
  });
  const more = result.error.issues.length > issues.length ? ' …' : '';
  throw new ConfigError(
    `${prefix}: not a report written by --format json (${issues.join('; ')}${more})`
  );
}

/** Reads the baseline report before anything is scanned, so a bad path fails fast. */
export async function loadBaseline(file: string): Promise<Baseline> {
  let text: string;
  try {
    // A report is about as large as a world file of the same fleet: the same cap applies.
    text = await readRegularFile(file, inputLimitsFromEnv().maxWorldBytes, 'maxWorldBytes');
  } catch (error) {
    if (error instanceof InputError) throw new ConfigError(`--baseline ${file}: ${error.message}`);
    throw new ConfigError(`--baseline ${file}: cannot read (${readReason(error)})`);
  }
  return parseBaseline(text, file);
}
