// What several bench scripts do alike: read `--name value` options, take medians, bundle a worker
// to run in fresh Node processes, and store a labelled measurement in bench/results.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

/** The value after `name` in `args`, if `name` is there. */
export function optionValue(args: readonly string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

/** The median; 0 for no values. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * `source` bundled as one ESM file for Node at `outfile`; `require` is defined for the CommonJS
 * dependencies the bundle inlines.
 */
export async function bundleNodeWorker(source: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [source],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: {
      js: "import { createRequire as __benchCreateRequire } from 'node:module';const require = __benchCreateRequire(import.meta.url);",
    },
    logLevel: 'error',
  });
}

/**
 * Stores `measurement` under `label` in bench/results/`name` below `root`, keeping the other labels
 * the file holds; returns the file's path relative to `root`.
 */
export function recordMeasurement(
  root: string,
  name: string,
  label: string,
  measurement: unknown
): string {
  const path = `bench/results/${name}`;
  const file = join(root, path);
  const stored = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : {};
  writeFileSync(file, `${JSON.stringify({ ...stored, [label]: measurement }, null, 2)}\n`);
  return path;
}
