// What admission by an installed CRD costs (issue 26), on the CLI as the package ships it (built
// with scripts/build-package.ts options, run as `node dist/lib/cli.js …` in fresh processes):
// - `nodeclass-scan scan DIR --format json` of generated manifests (bench/manifest-fleet.ts), with
//   `--crd` (test/fixtures/crds/*.agreement.yaml, which encode Karpenter v1.14.1's rules) and
//   without, interleaved; CPU time (user + system, from process start to exit) is compared, since
//   other processes on the machine move wall time more;
// - `nodeclass-scan --version`: time from process start to exit, of this tree and optionally of
//   another checkout (`--baseline DIR`, e.g. the tree before the engine), interleaved;
// - where the engine sits in the bundles: the modules the CLI entry and the scan-cluster Lambda's
//   `index.mjs` import statically (what start-up parses), and the modules reachable without the one
//   `import()` that loads the engine (what a scan without a CRD can load).
//   npm run bench:crd-admission                        10,000 manifests, 5 runs each, prints only
//   npm run bench:crd-admission -- --record after      also stores them in bench/results/crd-admission.json
//   … --baseline DIR --manifests 2000 --repeat 3 --version-runs 15
//   … --cpu-prof DIR                                   also one profiled run of each scan into DIR
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { handlerEntryPoint, lambdaBuildOptions } from '../scripts/build-lambdas.js';
import { median, optionValue, recordMeasurement } from './harness.js';
import { buildManifestFleet } from './manifest-fleet.js';

const HERE = process.cwd();
const args = process.argv.slice(2);
const option = (name: string): string | undefined => optionValue(args, name);
const record = option('--record');
const baselineRoot = option('--baseline');
const manifests = Number(option('--manifests') ?? 10_000);
const perFile = Number(option('--per-file') ?? 100);
const repeat = Number(option('--repeat') ?? 5);
const versionRuns = Number(option('--version-runs') ?? 15);
const profileDirectory = option('--cpu-prof');
const CRDS = [
  'test/fixtures/crds/ec2nodeclasses.agreement.yaml',
  'test/fixtures/crds/nodepools.agreement.yaml',
].map((file) => join(HERE, file));

/** Modules that are the engine: none of them may load in a scan without a CRD. */
const ENGINE = [
  /(^|\/)lambda\/adapters\/admission\//,
  /(^|\/)lambda\/core\/admission\/evaluate\.ts$/,
  /(^|\/)node_modules\/@bufbuild\/cel\//,
  /(^|\/)node_modules\/re2js\//,
];
const ENGINE_IMPORT = /(^|\/)lambda\/adapters\/admission\/load\.ts$/;
const CLI_ENTRY = /(^|\/)lambda\/cli\/run\.ts$/;
/** run.ts imports the CLI with `import()` (after setting the process up): every command loads it. */
const CLI_MAIN = /(^|\/)lambda\/cli\/main\.ts$/;

function log(message: string): void {
  process.stderr.write(`[crd-admission] ${message}\n`);
}

const round2 = (value: number) => Math.round(value * 100) / 100;

// Runs the built CLI in this process and reports, on fd 3 at exit, time and CPU since the process
// started (Node's own start-up included: what a user waits for).
const TIMER = `import { writeSync } from 'node:fs';
process.on('exit', (code) => {
  const cpu = process.cpuUsage();
  writeSync(3, JSON.stringify({
    exitCode: code,
    wallTimeMs: Math.round(performance.now()),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 102.4) / 10,
  }));
});
const cli = process.argv.splice(2, 1)[0];
await import(cli);
`;

interface Run {
  readonly exitCode: number;
  readonly wallTimeMs: number;
  readonly cpuMs: number;
  readonly peakRssMb: number;
}

function runCli(
  timer: string,
  cli: string,
  cliArgs: readonly string[],
  stdoutFile = '/dev/null',
  nodeArgs: readonly string[] = []
): Run {
  const stdout = openSync(stdoutFile, 'w');
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' };
    for (const name of Object.keys(env)) if (name.startsWith('NODECLASS_SCAN_')) delete env[name];
    const result = spawnSync(
      process.execPath,
      [...nodeArgs, timer, pathToFileURL(cli).href, ...cliArgs],
      { cwd: HERE, env, stdio: ['ignore', stdout, 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 }
    );
    const report = result.output[3]?.toString() ?? '';
    if (report === '') {
      throw new Error(`${cli} ${cliArgs.join(' ')}: no timing (${result.stderr?.toString()})`);
    }
    return JSON.parse(report) as Run;
  } finally {
    closeSync(stdout);
  }
}

/** The CLI and API as `npm run build` bundles them, from `root`'s own build options. */
async function buildCli(root: string, directory: string): Promise<{ cli: string; meta: Metafile }> {
  const { nodeEntriesBuildOptions } = (await import(
    pathToFileURL(join(root, 'scripts/build-package.ts')).href
  )) as { nodeEntriesBuildOptions: (out: string) => BuildOptions };
  const result = await build({
    ...nodeEntriesBuildOptions(directory),
    absWorkingDir: root,
    metafile: true,
    logLevel: 'error',
  });
  return { cli: join(directory, 'cli.js'), meta: result.metafile };
}

interface Reach {
  /** Output files loaded, and their bytes. */
  readonly files: number;
  readonly bytes: number;
  /** Engine modules among the inputs of those files. */
  readonly engineModules: readonly string[];
  /** Bytes each input module puts into those files. */
  readonly moduleBytes: Readonly<Record<string, number>>;
}

/**
 * What loading `entry` loads: its static imports (transitively), plus, when `dynamic` says so, the
 * outputs reached through `import()`.
 */
function reach(meta: Metafile, entry: string, dynamic: (target: string) => boolean): Reach {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const edge of meta.outputs[file]?.imports ?? []) {
      if (edge.external) continue;
      if (
        edge.kind === 'import-statement' ||
        (edge.kind === 'dynamic-import' && dynamic(edge.path))
      )
        pending.push(edge.path);
    }
  }
  const moduleBytes: Record<string, number> = {};
  for (const file of seen) {
    for (const [input, { bytesInOutput }] of Object.entries(meta.outputs[file]?.inputs ?? {})) {
      moduleBytes[input] = (moduleBytes[input] ?? 0) + bytesInOutput;
    }
  }
  const inputs = Object.keys(moduleBytes);
  return {
    files: seen.size,
    bytes: [...seen].reduce((total, file) => total + (meta.outputs[file]?.bytes ?? 0), 0),
    engineModules: inputs.filter((input) => ENGINE.some((re) => re.test(input))),
    moduleBytes,
  };
}

/** The modules whose start-up bytes grew most from `before` to `after` (the CLI's `--version`). */
function startupGrowth(before: Reach, after: Reach, top = 15) {
  // Paths are relative to each tree: another checkout's node_modules may be a symlink to ours.
  const byModule = (reach: Reach) => {
    const bytes = new Map<string, number>();
    for (const [input, size] of Object.entries(reach.moduleBytes)) {
      const module = input.replace(/^.*?node_modules\//, 'node_modules/');
      bytes.set(module, (bytes.get(module) ?? 0) + size);
    }
    return bytes;
  };
  const earlier = byModule(before);
  const grown = [...byModule(after)]
    .map(([module, bytes]) => ({ module, bytes: bytes - (earlier.get(module) ?? 0) }))
    .filter(({ bytes }) => bytes !== 0)
    .sort((a, b) => b.bytes - a.bytes);
  return { totalBytes: after.bytes - before.bytes, largest: grown.slice(0, top) };
}

/** A Reach without the per-module map, for the results file. */
function brief({ moduleBytes: _modules, ...rest }: Reach) {
  return rest;
}

function entryOutput(meta: Metafile, entryPoint: RegExp): string {
  const found = Object.entries(meta.outputs).find(
    ([, output]) => output.entryPoint !== undefined && entryPoint.test(output.entryPoint)
  );
  if (found === undefined) throw new Error(`no output for ${entryPoint}`);
  return found[0];
}

const holds = (meta: Metafile, file: string, module: RegExp) =>
  Object.keys(meta.outputs[file]?.inputs ?? {}).some((input) => module.test(input));

/**
 * Start-up (static imports, and the `import()` of `startupModule` that the entry makes
 * unconditionally) and a scan without a CRD (every import() but the engine's).
 */
function engineReach(meta: Metafile, entry: string, startupModule?: RegExp) {
  const loadsEngine = (target: string) => holds(meta, target, ENGINE_IMPORT);
  const engineChunks = Object.entries(meta.outputs)
    .filter(([file, output]) =>
      file.endsWith('.js') || file.endsWith('.mjs')
        ? Object.keys(output.inputs).some((input) => ENGINE.some((re) => re.test(input)))
        : false
    )
    .map(([file, output]) => ({
      file: file.replace(/^.*\/(chunks\/)/, '$1'),
      bytes: output.bytes,
    }));
  return {
    startup: reach(
      meta,
      entry,
      (target) => startupModule !== undefined && holds(meta, target, startupModule)
    ),
    withoutCrd: reach(meta, entry, (target) => !loadsEngine(target)),
    everything: reach(meta, entry, () => true),
    engineChunks,
  };
}

async function lambdaReach(directory: string) {
  const result = await build({
    ...lambdaBuildOptions(handlerEntryPoint('scan-cluster'), directory),
    sourcemap: false,
    metafile: true,
    logLevel: 'error',
  });
  return engineReach(result.metafile, entryOutput(result.metafile, /scan-cluster\.ts$/));
}

/**
 * A copy of the built CLI without the chunks that hold engine modules: what runs without a CRD
 * must run the same there (and a scan with a CRD says the engine did not load).
 */
function withoutEngine(cliDirectory: string, meta: Metafile, root: string): string {
  const copy = `${cliDirectory}-without-engine`;
  cpSync(cliDirectory, copy, { recursive: true });
  for (const [file, output] of Object.entries(meta.outputs)) {
    if (Object.keys(output.inputs).some((input) => ENGINE.some((re) => re.test(input)))) {
      const absolute = resolve(root, file);
      rmSync(join(copy, relative(cliDirectory, absolute)));
    }
  }
  return join(copy, 'cli.js');
}

function findingsOf(reportFile: string): unknown {
  return (JSON.parse(readFileSync(reportFile, 'utf8')) as { findings: unknown }).findings;
}

/** Findings of one report per check and status, for the admission checks. */
function admissionCounts(reportFile: string): Record<string, number> {
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as {
    findings: { checkId: string; status: string }[];
  };
  const counts: Record<string, number> = {};
  for (const { checkId, status } of report.findings) {
    if (!/schema-valid|tags-not-restricted|kubelet-config-valid/.test(checkId)) continue;
    const key = `${checkId} ${status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

function summary(runs: readonly Run[]) {
  return {
    runs: runs.map(({ wallTimeMs, cpuMs, peakRssMb }) => ({ wallTimeMs, cpuMs, peakRssMb })),
    medianWallMs: median(runs.map((run) => run.wallTimeMs)),
    medianCpuMs: median(runs.map((run) => run.cpuMs)),
    peakRssMb: Math.max(...runs.map((run) => run.peakRssMb)),
  };
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-crd-admission-'));
  try {
    const timer = join(directory, 'timer.mjs');
    writeFileSync(timer, TIMER);
    const current = await buildCli(HERE, join(directory, 'cli'));
    const baseline =
      baselineRoot === undefined
        ? undefined
        : await buildCli(resolve(baselineRoot), join(directory, 'baseline-cli'));
    const bundles = {
      cli: engineReach(current.meta, entryOutput(current.meta, CLI_ENTRY), CLI_MAIN),
      scanClusterLambda: await lambdaReach(join(directory, 'scan-cluster')),
      ...(baseline === undefined
        ? {}
        : {
            baselineCli: engineReach(
              baseline.meta,
              entryOutput(baseline.meta, CLI_ENTRY),
              CLI_MAIN
            ),
          }),
    };
    for (const [name, found] of Object.entries(bundles)) {
      log(
        `${name}: start-up ${found.startup.files} files ${found.startup.bytes} B, engine ${found.startup.engineModules.length}; without a CRD ${found.withoutCrd.bytes} B, engine ${found.withoutCrd.engineModules.length}`
      );
    }
    const bundleResults = Object.fromEntries(
      Object.entries(bundles).map(([name, found]) => [
        name,
        {
          startup: brief(found.startup),
          withoutCrd: brief(found.withoutCrd),
          everything: brief(found.everything),
          engineChunks: found.engineChunks,
        },
      ])
    );
    const cliStartupGrowth =
      bundles.baselineCli === undefined
        ? undefined
        : startupGrowth(bundles.baselineCli.startup, bundles.cli.startup);

    // --version, interleaved with the baseline's.
    const versions: Run[] = [];
    const baselineVersions: Run[] = [];
    for (let index = 0; index < versionRuns; index++) {
      versions.push(runCli(timer, current.cli, ['--version']));
      if (baseline !== undefined) baselineVersions.push(runCli(timer, baseline.cli, ['--version']));
    }
    log(
      `--version: ${median(versions.map((run) => run.wallTimeMs))} ms${baseline === undefined ? '' : `, baseline ${median(baselineVersions.map((run) => run.wallTimeMs))} ms`}`
    );

    const manifestDirectory = join(directory, 'manifests');
    mkdirSync(manifestDirectory);
    let manifestBytes = 0;
    for (const [name, text] of buildManifestFleet(manifests, perFile)) {
      writeFileSync(join(manifestDirectory, name), text);
      manifestBytes += Buffer.byteLength(text);
    }
    const scanArgs = ['scan', manifestDirectory, '--format', 'json'];
    const crdArgs = [...scanArgs, '--crd', ...CRDS];

    // One run of each kept, for the verdicts: the same objects refused either way is the check.
    const reports = {
      withoutCrd: join(directory, 'without.json'),
      withCrd: join(directory, 'with.json'),
    };
    const withoutCrd: Run[] = [runCli(timer, current.cli, scanArgs, reports.withoutCrd)];
    const withCrd: Run[] = [runCli(timer, current.cli, crdArgs, reports.withCrd)];
    for (let index = 1; index < repeat; index++) {
      withoutCrd.push(runCli(timer, current.cli, scanArgs));
      withCrd.push(runCli(timer, current.cli, crdArgs));
      log(
        `run ${index + 1}: without ${withoutCrd.at(-1)?.cpuMs} ms CPU, with ${withCrd.at(-1)?.cpuMs} ms CPU`
      );
    }
    // The same scans with the engine's chunks deleted from the build.
    const stripped = withoutEngine(join(directory, 'cli'), current.meta, HERE);
    const strippedReports = {
      withoutCrd: join(directory, 'stripped-without.json'),
      withCrd: join(directory, 'stripped-with.json'),
    };
    const strippedVersion = runCli(timer, stripped, ['--version']);
    const strippedWithout = runCli(timer, stripped, scanArgs, strippedReports.withoutCrd);
    const strippedWith = runCli(timer, stripped, crdArgs, strippedReports.withCrd);
    const withoutEngineBuild = {
      versionExitCode: strippedVersion.exitCode,
      scanWithoutCrd: {
        exitCode: strippedWithout.exitCode,
        sameFindings: isDeepStrictEqual(
          findingsOf(strippedReports.withoutCrd),
          findingsOf(reports.withoutCrd)
        ),
      },
      scanWithCrd: {
        exitCode: strippedWith.exitCode,
        sameFindingsAsWithoutCrd: isDeepStrictEqual(
          findingsOf(strippedReports.withCrd),
          findingsOf(reports.withoutCrd)
        ),
      },
    };
    log(`build without the engine's chunks: ${JSON.stringify(withoutEngineBuild)}`);
    if (profileDirectory !== undefined) {
      const profiles = resolve(profileDirectory);
      for (const [name, cliArgs] of [
        ['without-crd', scanArgs],
        ['with-crd', crdArgs],
      ] as const) {
        runCli(timer, current.cli, cliArgs, '/dev/null', [
          '--cpu-prof',
          '--cpu-prof-dir',
          profiles,
          '--cpu-prof-name',
          `${name}.cpuprofile`,
        ]);
      }
      log(`profiles in ${profiles}`);
    }
    const without = summary(withoutCrd);
    const withTheCrd = summary(withCrd);
    const measurement = {
      measuredAt: new Date().toISOString(),
      node: process.version,
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      repeat,
      manifests,
      files: Math.ceil(manifests / perFile),
      manifestBytes,
      crds: CRDS.map((file) => file.slice(HERE.length + 1)),
      scan: {
        exitCodes: { withoutCrd: withoutCrd[0]?.exitCode, withCrd: withCrd[0]?.exitCode },
        withoutCrd: without,
        withCrd: withTheCrd,
        /** Median with / median without; the target is at most 2. */
        withToWithout: {
          cpu: round2(withTheCrd.medianCpuMs / without.medianCpuMs),
          wall: round2(withTheCrd.medianWallMs / without.medianWallMs),
        },
        admissionFindings: {
          withoutCrd: admissionCounts(reports.withoutCrd),
          withCrd: admissionCounts(reports.withCrd),
        },
      },
      version: {
        runs: versionRuns,
        current: summary(versions),
        ...(baseline === undefined
          ? {}
          : {
              baseline: { root: resolve(baselineRoot as string), ...summary(baselineVersions) },
            }),
      },
      bundles: bundleResults,
      ...(cliStartupGrowth === undefined ? {} : { cliStartupGrowth }),
      withoutEngineBuild,
    };
    process.stdout.write(`${JSON.stringify(measurement, null, 2)}\n`);
    if (record !== undefined) {
      const file = recordMeasurement(HERE, 'crd-admission.json', record, measurement);
      log(`recorded as "${record}" in ${file}`);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
