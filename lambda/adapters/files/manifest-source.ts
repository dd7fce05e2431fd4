import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ClusterContext } from '../../core/inventory.js';
import type { LoadedObjects, ObjectSource } from '../../core/ports.js';
import type { InputError } from '../../core/report.js';
import { type ParsedManifests, parseManifestText } from './parse-manifests.js';

const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];
/** Larger files are refused rather than parsed: no real NodeClass manifest comes close. */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

export interface ManifestSourceOptions {
  /** Files, directories (searched recursively) or `-` for standard input. */
  readonly paths: readonly string[];
  /** Context for spec checks (region, partition, Karpenter version). */
  readonly cluster: ClusterContext;
  readonly readStdin?: () => Promise<string>;
}

async function expand(path: string, errors: InputError[]): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    errors.push({ source: path, message: describeFsError(error) });
    return [];
  }
  if (!info.isDirectory()) return [path];
  const files = await manifestFilesUnder(path, errors);
  if (files.length === 0) {
    // A CI job pointed at the wrong directory must not pass as "nothing found".
    errors.push({ source: path, message: 'directory holds no .yaml, .yml or .json files' });
  }
  return files;
}

async function manifestFilesUnder(directory: string, errors: InputError[]): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    errors.push({ source: directory, message: describeFsError(error) });
    return [];
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const child = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await manifestFilesUnder(child, errors)));
    else if (MANIFEST_EXTENSIONS.some((extension) => entry.name.endsWith(extension))) {
      files.push(child);
    }
  }
  return files;
}

function describeFsError(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  return error instanceof Error ? error.message : String(error);
}

async function readText(path: string, options: ManifestSourceOptions): Promise<string> {
  if (path === '-') {
    if (!options.readStdin) throw new Error('standard input is not available');
    const text = await options.readStdin();
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > MAX_MANIFEST_BYTES) {
      throw new Error(`input is ${bytes} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit`);
    }
    return text;
  }
  const info = await stat(path);
  if (info.size > MAX_MANIFEST_BYTES) {
    throw new Error(`file is ${info.size} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit`);
  }
  return readFile(path, 'utf8');
}

/** Loads every manifest under the paths; one unreadable file never stops the others. */
export async function loadManifests(options: ManifestSourceOptions): Promise<ParsedManifests> {
  const merged: ParsedManifests = { nodeClasses: [], nodePools: [], errors: [] };
  const files: string[] = [];
  for (const path of options.paths) {
    if (path === '-') files.push(path);
    else files.push(...(await expand(path, merged.errors)));
  }
  // A file named twice (`dir dir/a.yaml`) is read once: its objects must not be reported twice.
  const seen = new Set<string>();
  for (const file of files) {
    const key = file === '-' ? file : resolve(file);
    if (seen.has(key)) continue;
    seen.add(key);
    let text: string;
    try {
      text = await readText(file, options);
    } catch (error) {
      merged.errors.push({
        source: file === '-' ? '<stdin>' : file,
        message: describeFsError(error),
      });
      continue;
    }
    const parsed = parseManifestText(text, file === '-' ? '<stdin>' : file, options.cluster.name);
    merged.nodeClasses.push(...parsed.nodeClasses);
    merged.nodePools.push(...parsed.nodePools);
    merged.errors.push(...parsed.errors);
  }
  return merged;
}

/** Port implementation: NodeClasses from manifest files, evaluated for one (possibly unnamed) cluster. */
export function createManifestSource(options: ManifestSourceOptions): ObjectSource {
  return {
    async load(): Promise<LoadedObjects> {
      const parsed = await loadManifests(options);
      return {
        clusters: [options.cluster],
        nodeClasses: parsed.nodeClasses,
        nodePools: parsed.nodePools,
        inputs: ['spec'],
        inputErrors: parsed.errors,
      };
    },
  };
}
