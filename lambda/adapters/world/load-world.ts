import { readFile, stat } from 'node:fs/promises';
import { formatPath } from '../../core/schema.js';
import { InputError } from '../../shared/errors.js';
import { type World, WorldSchema } from './schema.js';

/** A world file is a recorded account, not a data lake: refuse anything absurdly large. */
export const MAX_WORLD_BYTES = 50 * 1024 * 1024;

/** Parses world-file text; a bad file is an InputError naming the file and the JSON path. */
export function parseWorld(text: string, file: string): World {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(
      `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`
    );
  }
  const result = WorldSchema.safeParse(json);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 5).map((issue) => {
    const path = formatPath(issue.path);
    return `${path === '' ? '(root)' : path}: ${issue.message}`;
  });
  const more = result.error.issues.length > issues.length ? ' …' : '';
  throw new InputError(`${file}: not a valid world file: ${issues.join('; ')}${more}`);
}

export async function loadWorldFile(file: string): Promise<World> {
  let text: string;
  try {
    const info = await stat(file);
    if (info.size > MAX_WORLD_BYTES) {
      throw new InputError(
        `${file}: ${info.size} bytes, over the ${MAX_WORLD_BYTES}-byte world-file limit`
      );
    }
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof InputError) throw error;
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
  return parseWorld(text, file);
}
