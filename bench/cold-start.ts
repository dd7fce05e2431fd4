// Cold start: bundle every Lambda handler the way the CDK does (infra/constructs/scanner-function.ts:
// ESM, minified, tree-shaken, SDK bundled, createRequire banner) and time `import()` of each bundle
// in a fresh Node process, against the floor of a bundle that imports only @aws-sdk/client-ec2.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type BuildOptions, build } from 'esbuild';

/** Same as the CDK's bundling (target follows the Lambda runtime there). */
const BUNDLE_OPTIONS: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node24',
  mainFields: ['module', 'main'],
  minify: true,
  keepNames: true,
  treeShaking: true,
  banner: {
    js:
      "import { createRequire as __scannerCreateRequire } from 'node:module';" +
      'const require = __scannerCreateRequire(import.meta.url);',
  },
  logLevel: 'error',
};

const FLOOR_SOURCE = `import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
export const handler = async () => new EC2Client({}).send(new DescribeImagesCommand({}));
`;

const IMPORT_TIMER =
  'const t = performance.now(); await import(process.argv[1]); process.stdout.write(String(performance.now() - t));';

export interface BundleMeasurement {
  readonly name: string;
  readonly bytes: number;
  readonly importMs: number;
  readonly importRuns: readonly number[];
  /** Largest contributors to the bundle, by npm package (or `lambda/` for our own code). */
  readonly largestPackages: readonly { readonly name: string; readonly bytes: number }[];
  /** importMs / floor importMs. */
  readonly ratioToFloor: number;
}

export interface ColdStartResult {
  readonly node: string;
  readonly runs: number;
  readonly floor: Omit<BundleMeasurement, 'ratioToFloor' | 'largestPackages'>;
  readonly handlers: readonly BundleMeasurement[];
}

/** Lambda entry points: files under lambda/handlers that export `handler`. */
export function handlerEntries(root: string): string[] {
  const directory = join(root, 'lambda/handlers');
  let files: string[];
  try {
    files = readdirSync(directory).filter((file) => file.endsWith('.ts'));
  } catch {
    return [];
  }
  return files
    .map((file) => join(directory, file))
    .filter((file) =>
      /export\s+(const|async function|function)\s+handler\b/.test(readFileSync(file, 'utf8'))
    )
    .sort();
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function timeImport(file: string): number {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', IMPORT_TIMER, file], {
    encoding: 'utf8',
    env: { ...process.env, AWS_REGION: 'us-east-1' },
  });
  return Number(output);
}

export async function measureColdStart(root: string, runs = 7): Promise<ColdStartResult> {
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-bench-'));
  try {
    const bundles: { name: string; entry?: string }[] = [
      { name: 'floor: @aws-sdk/client-ec2 only' },
      ...handlerEntries(root).map((entry) => ({ name: basename(entry, '.ts'), entry })),
    ];
    const built = [];
    for (const [index, bundle] of bundles.entries()) {
      const outfile = join(directory, `bundle-${index}.mjs`);
      const result = await build({
        metafile: true,
        ...BUNDLE_OPTIONS,
        ...(bundle.entry === undefined
          ? { stdin: { contents: FLOOR_SOURCE, resolveDir: root, loader: 'js' } }
          : { entryPoints: [bundle.entry] }),
        outfile,
        absWorkingDir: root,
      });
      const output = Object.values(result.metafile?.outputs ?? {})[0];
      const byPackage = new Map<string, number>();
      for (const [path, input] of Object.entries(output?.inputs ?? {})) {
        const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
        const name = match?.[1] ?? (path.startsWith('lambda/') ? 'lambda/' : path);
        byPackage.set(name, (byPackage.get(name) ?? 0) + input.bytesInOutput);
      }
      const largestPackages = [...byPackage]
        .sort(([, a], [, b]) => b - a)
        .slice(0, 8)
        .map(([name, bytes]) => ({ name, bytes }));
      built.push({
        ...bundle,
        outfile,
        bytes: statSync(outfile).size,
        largestPackages,
        runs: [] as number[],
      });
    }
    // Interleaved, so drift in machine load hits every bundle alike; one warm-up of the disk cache.
    for (const bundle of built) timeImport(bundle.outfile);
    for (let run = 0; run < runs; run++) {
      for (const bundle of built) bundle.runs.push(timeImport(bundle.outfile));
    }
    const [floor, ...handlers] = built.map((bundle) => ({
      name: bundle.name,
      bytes: bundle.bytes,
      largestPackages: bundle.largestPackages,
      importMs: Math.round(median(bundle.runs) * 10) / 10,
      importRuns: bundle.runs.map((value) => Math.round(value * 10) / 10),
    }));
    if (!floor) throw new Error('floor bundle missing');
    const { largestPackages: _floorPackages, ...floorMeasurement } = floor;
    return {
      node: process.version,
      runs,
      floor: floorMeasurement,
      handlers: handlers.map((handler) => ({
        ...handler,
        ratioToFloor: Math.round((handler.importMs / floor.importMs) * 100) / 100,
      })),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
