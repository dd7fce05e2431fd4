// Cold start as deployed: builds the Lambda bundles with scripts/build-lambdas.ts (what
// `npm run build:lambdas` and the cdk.json app do), synthesizes the CDK app, and times each
// function's asset — checked byte for byte against the build — in fresh Node processes with the
// function's own NODE_OPTIONS from the template. Two numbers per handler, both reported:
//   (a) init: `import()` of index.mjs (what the Lambda init phase parses);
//   (b) first invocation: the phase chunks its handler loads with `import()` when first used
//       (configuration, state table, scanner, publishing, event lookups), imported after (a).
// The floor is a bundle of @aws-sdk/client-ec2 alone (its own source, the handlers' esbuild
// options). For reference, each handler is also built eagerly: one file importing every phase
// statically, so all of it is parsed and run at init (how the handlers loaded before the split).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { HANDLER_NAMES, type HandlerName } from '../lambda/shared/env-config.js';
import {
  buildLambdaBundles,
  handlerEntryPoint,
  LAMBDA_BUNDLES_DIRECTORY,
  lambdaBuildOptions,
} from '../scripts/build-lambdas.js';
import { synthesizeApp } from './synth.js';

const STACK = 'NodeClassScanner';

/** The deployment synthesized for the measurement: one cluster, IAM events on. */
const BENCH_CONTEXT = { homeRegion: 'us-east-1', clusters: ['prod-use1'], iamEvents: true };

/** The floor: one EC2 call, nothing else. */
const FLOOR_SOURCE = `import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
export const handler = async () => new EC2Client({}).send(new DescribeImagesCommand({}));
`;

/**
 * Order in which an invocation first loads the phases (a phase's shared chunks are counted in
 * the first phase that loads them). Names are the phase modules' file names.
 */
const PHASE_ORDER = [
  'config',
  'service',
  'ami-event',
  'iam-event',
  'ami-images',
  'state',
  'scan',
  'publish',
  'scan-queue',
  'cluster-discovery',
  'credential-provider-env',
];

/** A phase not in PHASE_ORDER (a new one) is loaded after publishing. */
function phaseRank(phase: string): number {
  const rank = PHASE_ORDER.indexOf(phase);
  return rank >= 0 ? rank : PHASE_ORDER.indexOf('publish') + 0.5;
}

// argv[1]: JSON [entry, ...phase chunks]. Prints {init, phases} in ms.
const IMPORT_TIMER = `const [entry, ...phases] = JSON.parse(process.argv[1]);
let t = performance.now(); await import(entry); const init = performance.now() - t;
const steps = [];
for (const phase of phases) { t = performance.now(); await import(phase); steps.push(performance.now() - t); }
process.stdout.write(JSON.stringify({ init, phases: steps }));`;

export interface PhaseMeasurement {
  readonly phase: string;
  /** Median time of its chunk's `import()` after init and the phases before it. */
  readonly importMs: number;
}

export interface BundleMeasurement {
  readonly name: string;
  /** Bytes of JavaScript in the asset (entry and every chunk). */
  readonly bytes: number;
  /** Bytes parsed at init: the entry and the chunks it imports statically. */
  readonly initBytes: number;
  /** (a) Median time of `import()` of index.mjs with the deployed NODE_OPTIONS. */
  readonly importMs: number;
  readonly importRuns: readonly number[];
  /** Median init import time with `--enable-source-maps` added (what the maps would cost). */
  readonly sourceMapsEnabledMs: number;
  /** importMs / floor importMs. */
  readonly ratioToFloor: number;
  /** (b) Median extra import time of the first invocation that loads every phase (a full scan). */
  readonly firstInvocationImportMs: number;
  readonly phases: readonly PhaseMeasurement[];
  /** Median of (a) + (b) in one process. */
  readonly initPlusFirstInvocationMs: number;
  /** The same code as one file with every phase imported statically: its import time. */
  readonly eagerImportMs: number;
}

export interface ColdStartResult {
  readonly node: string;
  readonly runs: number;
  /** NODE_OPTIONS the template sets on the functions ('' when none). */
  readonly nodeOptions: string;
  readonly floor: Omit<
    BundleMeasurement,
    'ratioToFloor' | 'phases' | 'firstInvocationImportMs' | 'initPlusFirstInvocationMs'
  >;
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

function timeImports(
  files: readonly string[],
  nodeOptions: string
): { init: number; phases: number[] } {
  const output = execFileSync(
    process.execPath,
    ['--input-type=module', '-e', IMPORT_TIMER, JSON.stringify(files)],
    {
      encoding: 'utf8',
      env: { ...process.env, AWS_REGION: 'us-east-1', NODE_OPTIONS: nodeOptions },
    }
  );
  return JSON.parse(output) as { init: number; phases: number[] };
}

interface DeployedFunction {
  readonly handler: HandlerName;
  readonly directory: string;
  readonly nodeOptions: string;
}

/** Each function's asset directory and NODE_OPTIONS, from the synthesized template. */
function deployedFunctions(outdir: string): DeployedFunction[] {
  const template = JSON.parse(readFileSync(join(outdir, `${STACK}.template.json`), 'utf8')) as {
    Resources: Record<
      string,
      {
        Type: string;
        Metadata?: Record<string, unknown>;
        Properties?: { Environment?: { Variables?: Record<string, unknown> } };
      }
    >;
  };
  const functions: DeployedFunction[] = [];
  for (const resource of Object.values(template.Resources)) {
    const asset = resource.Metadata?.['aws:asset:path'];
    if (resource.Type !== 'AWS::Lambda::Function' || typeof asset !== 'string') continue;
    // NodeClassScanner/Scanner/<Name>/Function/Resource
    const path = String(resource.Metadata?.['aws:cdk:path'] ?? '').split('/');
    const construct = (path[path.length - 3] ?? '').replace(/([a-z])([A-Z])/g, '$1-$2');
    const handler = HANDLER_NAMES.find((name) => name === construct.toLowerCase());
    if (handler === undefined) continue;
    const nodeOptions = resource.Properties?.Environment?.Variables?.NODE_OPTIONS;
    functions.push({
      handler,
      directory: join(outdir, asset),
      nodeOptions: typeof nodeOptions === 'string' ? nodeOptions : '',
    });
  }
  return functions.sort((a, b) => a.handler.localeCompare(b.handler));
}

interface BundleLayout {
  /** Output path (relative to the bundle directory) → bytes, JavaScript only. */
  readonly files: ReadonlyMap<string, Uint8Array>;
  readonly initFiles: readonly string[];
  /** Phase chunks in invocation order, relative paths. */
  readonly phases: readonly { readonly phase: string; readonly file: string }[];
  /** Our phase modules (relative to the root), what the eager reference imports statically. */
  readonly phaseSources: readonly string[];
}

/** One module exporting the handler and every phase module's namespace (nothing tree-shaken). */
function eagerSource(root: string, entryPoint: string, phaseSources: readonly string[]): string {
  return [
    `export { handler } from './${relative(root, entryPoint)}';`,
    ...phaseSources.map((source, index) => `export * as phase${index} from './${source}';`),
  ].join('\n');
}

/** The build of `entryPoint` without writing it: its files and which chunk is which phase. */
async function layoutOf(
  root: string,
  entryPoint: string,
  options: ReturnType<typeof lambdaBuildOptions>,
  probeDirectory: string
): Promise<BundleLayout> {
  const result = await build({
    ...options,
    write: false,
    metafile: true,
    absWorkingDir: root,
    logLevel: 'error',
  });
  const files = new Map<string, Uint8Array>();
  for (const file of result.outputFiles ?? []) {
    if (file.path.endsWith('.mjs')) files.set(relative(probeDirectory, file.path), file.contents);
  }
  const outputs: Metafile['outputs'] = result.metafile.outputs;
  const relativeOf = (key: string) => relative(probeDirectory, resolve(root, key));
  const entryKey = Object.keys(outputs).find(
    (key) => outputs[key]?.entryPoint !== undefined && basename(key) === 'index.mjs'
  );
  const initFiles = new Set<string>();
  const visit = (key: string) => {
    if (initFiles.has(key)) return;
    initFiles.add(key);
    for (const imported of outputs[key]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  if (entryKey !== undefined) visit(entryKey);
  const phases = Object.entries(outputs).flatMap(([key, output]) => {
    const source = output.entryPoint;
    if (source === undefined || key === entryKey) return [];
    const ours = source.startsWith('lambda/') && source !== relative(root, entryPoint);
    const phase = ours
      ? basename(source).replace(/\.ts$/, '')
      : source.includes('credential-provider-env')
        ? 'credential-provider-env'
        : undefined;
    return phase === undefined ? [] : [{ phase, file: relativeOf(key) }];
  });
  phases.sort((a, b) => phaseRank(a.phase) - phaseRank(b.phase));
  const phaseSources = Object.entries(outputs).flatMap(([key, output]) =>
    key !== entryKey && output.entryPoint?.startsWith('lambda/') ? [output.entryPoint] : []
  );
  return { files, initFiles: [...initFiles].map(relativeOf), phases, phaseSources };
}

/** Throws unless `directory` holds exactly the JavaScript of `layout` (the asset is the build). */
function assertSameBytes(directory: string, layout: BundleLayout, name: string): void {
  for (const [file, contents] of layout.files) {
    const path = join(directory, file);
    if (!existsSync(path) || !Buffer.from(contents).equals(readFileSync(path))) {
      throw new Error(`${name}: the synthesized asset's ${file} is not the bundle just built`);
    }
  }
}

function jsFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.mjs'))
    .map((file) => join(directory, file));
}

const bytesOf = (files: readonly string[]) =>
  files.reduce((sum, file) => sum + statSync(file).size, 0);

/** The bundle options without entry points or output directory: for a one-file stdin build. */
function stdinBuildOptions(options: ReturnType<typeof lambdaBuildOptions>) {
  const { entryPoints, outdir, ...rest } = options;
  return rest;
}

export async function measureColdStart(root: string, runs = 7): Promise<ColdStartResult> {
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-bench-'));
  try {
    // The bundles the construct deploys, as `npm run build:lambdas` builds them.
    await buildLambdaBundles(LAMBDA_BUNDLES_DIRECTORY);
    const assembly = join(directory, 'cdk.out');
    synthesizeApp(root, assembly, BENCH_CONTEXT);
    const deployed = deployedFunctions(assembly);
    if (deployed.length === 0) throw new Error('no Lambda functions in the synthesized template');
    const nodeOptions = deployed[0]?.nodeOptions ?? '';

    const floorDirectory = join(directory, 'floor');
    await build({
      ...stdinBuildOptions(lambdaBuildOptions('floor', floorDirectory)),
      stdin: { contents: FLOOR_SOURCE, resolveDir: root, loader: 'js', sourcefile: 'index.js' },
      outfile: join(floorDirectory, 'index.mjs'),
      splitting: false,
      absWorkingDir: root,
      logLevel: 'error',
    });

    const bundles = await Promise.all(
      deployed.map(async (fn) => {
        // Where build-lambdas wrote it: chunk names hash the source maps, whose paths are relative.
        const probe = join(LAMBDA_BUNDLES_DIRECTORY, fn.handler);
        const layout = await layoutOf(
          root,
          handlerEntryPoint(fn.handler),
          lambdaBuildOptions(handlerEntryPoint(fn.handler), probe),
          probe
        );
        assertSameBytes(fn.directory, layout, fn.handler);
        const eager = join(directory, 'eager', fn.handler, 'index.mjs');
        await build({
          ...stdinBuildOptions(lambdaBuildOptions('', dirname(eager))),
          stdin: {
            contents: eagerSource(root, handlerEntryPoint(fn.handler), layout.phaseSources),
            resolveDir: root,
            loader: 'ts',
            sourcefile: 'eager.ts',
          },
          outfile: eager,
          splitting: false,
          absWorkingDir: root,
          logLevel: 'error',
        });
        return { fn, layout, eager };
      })
    );

    const withMaps = (options: string) =>
      options.includes('--enable-source-maps') ? options : `${options} --enable-source-maps`.trim();
    const floorEntry = join(floorDirectory, 'index.mjs');
    const floorSamples = { init: [] as number[], maps: [] as number[] };
    const samples = bundles.map(() => ({
      init: [] as number[],
      maps: [] as number[],
      phases: [] as number[][],
      eager: [] as number[],
    }));
    // Interleaved, so drift in machine load hits every bundle alike; one warm-up of the disk cache.
    timeImports([floorEntry], nodeOptions);
    for (const { fn, layout, eager } of bundles) {
      timeImports(
        [join(fn.directory, 'index.mjs'), ...layout.phases.map((p) => join(fn.directory, p.file))],
        fn.nodeOptions
      );
      timeImports([eager], fn.nodeOptions);
    }
    for (let run = 0; run < runs; run++) {
      floorSamples.init.push(timeImports([floorEntry], nodeOptions).init);
      floorSamples.maps.push(timeImports([floorEntry], withMaps(nodeOptions)).init);
      for (const [index, { fn, layout, eager }] of bundles.entries()) {
        const sample = samples[index];
        if (!sample) continue;
        const entry = join(fn.directory, 'index.mjs');
        const measured = timeImports(
          [entry, ...layout.phases.map((p) => join(fn.directory, p.file))],
          fn.nodeOptions
        );
        sample.init.push(measured.init);
        sample.phases.push(measured.phases);
        sample.maps.push(timeImports([entry], withMaps(fn.nodeOptions)).init);
        sample.eager.push(timeImports([eager], fn.nodeOptions).init);
      }
    }

    const floorImportMs = round(median(floorSamples.init));
    const floorFiles = jsFiles(floorDirectory);
    return {
      node: process.version,
      runs,
      nodeOptions,
      floor: {
        name: 'floor: @aws-sdk/client-ec2 only',
        bytes: bytesOf(floorFiles),
        initBytes: bytesOf(floorFiles),
        importMs: floorImportMs,
        importRuns: floorSamples.init.map(round),
        sourceMapsEnabledMs: round(median(floorSamples.maps)),
        eagerImportMs: floorImportMs,
      },
      handlers: bundles.map(({ fn, layout }, index) => {
        const sample = samples[index] ?? { init: [], maps: [], phases: [], eager: [] };
        const importMs = round(median(sample.init));
        const totals = sample.phases.map((steps) => steps.reduce((sum, ms) => sum + ms, 0));
        return {
          name: fn.handler,
          bytes: bytesOf(jsFiles(fn.directory)),
          initBytes: bytesOf(layout.initFiles.map((file) => join(fn.directory, file))),
          importMs,
          importRuns: sample.init.map(round),
          sourceMapsEnabledMs: round(median(sample.maps)),
          ratioToFloor: Math.round((importMs / floorImportMs) * 100) / 100,
          firstInvocationImportMs: round(median(totals)),
          phases: layout.phases.map(({ phase }, step) => ({
            phase,
            importMs: round(median(sample.phases.map((steps) => steps[step] ?? 0))),
          })),
          initPlusFirstInvocationMs: round(
            median(sample.init.map((init, run) => init + (totals[run] ?? 0)))
          ),
          eagerImportMs: round(median(sample.eager)),
        };
      }),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

// `npx tsx bench/cold-start.ts`: this measurement alone, printed as JSON.
if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(await measureColdStart(process.cwd()), null, 2)}\n`);
}
