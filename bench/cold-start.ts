// Cold start as deployed: synthesizes the CDK app (real esbuild bundles, as `cdk synth` builds
// them), then times `import()` of each Lambda's asset in a fresh Node process with the function's
// own NODE_OPTIONS from the template, against the floor: a bundle that imports only
// @aws-sdk/client-ec2, built with the same esbuild options.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { synthesizeApp } from './synth.js';

const STACK = 'NodeClassScanner';

/** The deployment synthesized for the measurement: two clusters, IAM events on. */
const BENCH_CONTEXT = { homeRegion: 'us-east-1', clusters: ['prod-use1'], iamEvents: true };

/** The floor, bundled like infra/constructs/scanner-function.ts bundles a handler. */
const FLOOR_SOURCE = `import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
export const handler = async () => new EC2Client({}).send(new DescribeImagesCommand({}));
`;

const IMPORT_TIMER =
  'const t = performance.now(); await import(process.argv[1]); process.stdout.write(String(performance.now() - t));';

export interface BundleMeasurement {
  readonly name: string;
  readonly bytes: number;
  /** Median time of `import()` with the deployed NODE_OPTIONS. */
  readonly importMs: number;
  readonly importRuns: readonly number[];
  /** Median import time with `--enable-source-maps` added (what the maps would cost at start). */
  readonly sourceMapsEnabledMs: number;
  /** importMs / floor importMs. */
  readonly ratioToFloor: number;
}

export interface ColdStartResult {
  readonly node: string;
  readonly runs: number;
  /** NODE_OPTIONS the template sets on the functions ('' when none). */
  readonly nodeOptions: string;
  readonly floor: Omit<BundleMeasurement, 'ratioToFloor'>;
  readonly handlers: readonly BundleMeasurement[];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

const round = (value: number) => Math.round(value * 10) / 10;

function timeImport(file: string, nodeOptions: string): number {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', IMPORT_TIMER, file], {
    encoding: 'utf8',
    env: { ...process.env, AWS_REGION: 'us-east-1', NODE_OPTIONS: nodeOptions },
  });
  return Number(output);
}

/** `node --import tsx infra/app.ts` into `outdir`, as test/deploy synthesizes. */
function synthesize(root: string, outdir: string): void {
  synthesizeApp(root, outdir, BENCH_CONTEXT);
}

interface DeployedBundle {
  readonly name: string;
  readonly file: string;
  readonly nodeOptions: string;
}

/** Each function's bundle and NODE_OPTIONS, from the synthesized template. */
function deployedBundles(outdir: string): DeployedBundle[] {
  const template = JSON.parse(readFileSync(join(outdir, `${STACK}.template.json`), 'utf8')) as {
    Resources: Record<
      string,
      {
        Type: string;
        Metadata?: Record<string, unknown>;
        Properties?: { Handler?: string; Environment?: { Variables?: Record<string, unknown> } };
      }
    >;
  };
  const bundles: DeployedBundle[] = [];
  for (const resource of Object.values(template.Resources)) {
    const asset = resource.Metadata?.['aws:asset:path'];
    if (resource.Type !== 'AWS::Lambda::Function' || typeof asset !== 'string') continue;
    // NodeClassScanner/Scanner/<Name>/Function/Resource
    const path = String(resource.Metadata?.['aws:cdk:path'] ?? '').split('/');
    const construct = path[path.length - 3] ?? asset;
    const file = join(
      outdir,
      asset,
      `${(resource.Properties?.Handler ?? 'index.handler').split('.')[0]}.mjs`
    );
    if (!existsSync(file)) continue;
    const nodeOptions = resource.Properties?.Environment?.Variables?.NODE_OPTIONS;
    bundles.push({
      name: construct.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase(),
      file,
      nodeOptions: typeof nodeOptions === 'string' ? nodeOptions : '',
    });
  }
  return bundles.sort((a, b) => a.name.localeCompare(b.name));
}

export async function measureColdStart(root: string, runs = 7): Promise<ColdStartResult> {
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-bench-'));
  try {
    const assembly = join(directory, 'cdk.out');
    synthesize(root, assembly);
    const handlers = deployedBundles(assembly);
    if (handlers.length === 0) throw new Error('no Lambda bundles in the synthesized assembly');
    const nodeOptions = handlers[0]?.nodeOptions ?? '';
    const floorFile = join(directory, 'floor', 'index.mjs');
    await build({
      stdin: { contents: FLOOR_SOURCE, resolveDir: root, loader: 'js' },
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node24',
      mainFields: ['module', 'main'],
      minify: true,
      keepNames: true,
      sourcemap: true,
      banner: {
        js:
          "import { createRequire as __scannerCreateRequire } from 'node:module';" +
          'const require = __scannerCreateRequire(import.meta.url);',
      },
      outfile: floorFile,
      absWorkingDir: root,
      logLevel: 'error',
    });
    const all = [
      { name: 'floor: @aws-sdk/client-ec2 only', file: floorFile, nodeOptions },
      ...handlers,
    ];
    const samples = all.map(() => ({ imports: [] as number[], maps: [] as number[] }));
    const withMaps = (options: string) =>
      options.includes('--enable-source-maps') ? options : `${options} --enable-source-maps`.trim();
    // Interleaved, so drift in machine load hits every bundle alike; one warm-up of the disk cache.
    for (const bundle of all) timeImport(bundle.file, bundle.nodeOptions);
    for (let run = 0; run < runs; run++) {
      for (const [index, bundle] of all.entries()) {
        const sample = samples[index];
        if (!sample) continue;
        sample.imports.push(timeImport(bundle.file, bundle.nodeOptions));
        sample.maps.push(timeImport(bundle.file, withMaps(bundle.nodeOptions)));
      }
    }
    const [floor, ...measured] = all.map((bundle, index) => {
      const sample = samples[index] ?? { imports: [], maps: [] };
      return {
        name: bundle.name,
        bytes: statSync(bundle.file).size,
        importMs: round(median(sample.imports)),
        importRuns: sample.imports.map(round),
        sourceMapsEnabledMs: round(median(sample.maps)),
      };
    });
    if (!floor) throw new Error('floor bundle missing');
    return {
      node: process.version,
      runs,
      nodeOptions,
      floor,
      handlers: measured.map((handler) => ({
        ...handler,
        ratioToFloor: Math.round((handler.importMs / floor.importMs) * 100) / 100,
      })),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

// `npx tsx bench/cold-start.ts`: this measurement alone, printed as JSON.
if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await measureColdStart(process.cwd()), null, 2)}\n`);
}
