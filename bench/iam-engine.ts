// What the IAM policy engine (@cloud-copilot/iam-simulate, an optional peer dependency the package
// build keeps external) costs the CLI, for `scan --world` with policy documents and
// `scan --controller-policy`:
//   (a) the CLI bundle: every output of the package build's CLI/API entries (scripts/build-package.ts
//       options), the bytes the controller-policy modules and the engine adapter add to it, and a
//       check that no byte of @cloud-copilot/* is bundled;
//   (b) the engine as installed: the package and its dependency closure in node_modules (files and
//       bytes on disk, as npm installs them);
//   (c) time: `import()` of the engine in a fresh Node process, and its first simulation (which
//       loads the service data it needs), median of fresh processes;
//   (d) the built CLI on a manifest scan with and without Karpenter's v1.14.1 reference policy as
//       `--controller-policy` files (wall time and peak RSS, median of fresh processes).
//   npm run bench:iam-engine          (writes bench/results/iam-engine.json)
//   npm run bench:iam-engine -- 3     (runs per measurement; prints only)
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeEntriesBuildOptions } from '../scripts/build-package.js';
import { referenceControllerPolicies } from '../test/support/karpenter-controller-policy.js';
import { median } from './harness.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ENGINE = '@cloud-copilot/iam-simulate';
/** Modules that exist for `--controller-policy` only. */
const CONTROLLER_POLICY_MODULES = [
  'lambda/cli/plan-controller-policy.ts',
  'lambda/adapters/iam-engine/policy-files.ts',
  'lambda/adapters/iam-engine/document-permissions.ts',
];
/** The adapter between the engine and the scanner (shared with `--world` documents). */
const ENGINE_ADAPTER = 'lambda/adapters/iam-engine/simulate-principal-policy.ts';

export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  readonly files: number;
  readonly bytes: number;
}

function directorySize(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      const inner = directorySize(path);
      files += inner.files;
      bytes += inner.bytes;
    } else if (entry.isFile()) {
      files += 1;
      bytes += statSync(path).size;
    }
  }
  return { files, bytes };
}

/** The directory `name` resolves to from `from` (node_modules lookup, nested first). */
function packageDirectory(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    try {
      if (statSync(join(candidate, 'package.json')).isFile()) return candidate;
    } catch {
      // Not installed here: one level up.
    }
    if (dirname(dir) === dir) throw new Error(`${name} is not installed (from ${from})`);
  }
}

/** The engine and every package its `dependencies` pull in, as installed. */
export function engineFootprint(root = ROOT): InstalledPackage[] {
  const seen = new Map<string, InstalledPackage>();
  const visit = (name: string, from: string) => {
    const dir = packageDirectory(name, from);
    if (seen.has(dir)) return;
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      dependencies?: Record<string, string>;
    };
    seen.set(dir, { name: manifest.name, version: manifest.version, ...directorySize(dir) });
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency, dir);
  };
  visit(ENGINE, root);
  return [...seen.values()];
}

/** The CLI and API bundle as the package builds it, and what the engine-related modules add. */
async function bundleFigures() {
  const result = await build({
    ...nodeEntriesBuildOptions(join(ROOT, 'dist-never-written')),
    write: false,
    metafile: true,
    absWorkingDir: ROOT,
    logLevel: 'error',
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith('.js'));
  const bytesOf = (inputs: readonly string[]) =>
    outputs.reduce(
      (sum, [, output]) =>
        sum +
        inputs.reduce((inner, input) => inner + (output.inputs[input]?.bytesInOutput ?? 0), 0),
      0
    );
  const bundledEngineInputs = outputs.flatMap(([, output]) =>
    Object.keys(output.inputs).filter((input) => input.includes('@cloud-copilot/'))
  );
  const entry = outputs.find(([path]) => path.endsWith('/cli.js'));
  // Outputs the CLI entry imports statically, transitively: parsed at every start.
  const atStart = new Set<string>();
  const visit = (path: string) => {
    if (atStart.has(path)) return;
    atStart.add(path);
    for (const imported of result.metafile.outputs[path]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  if (entry !== undefined) visit(entry[0]);
  const loadedAtStart = (input: string) =>
    outputs.some(([path, output]) => atStart.has(path) && output.inputs[input] !== undefined);
  return {
    outputs: outputs.length,
    totalBytes: outputs.reduce((sum, [, output]) => sum + output.bytes, 0),
    cliEntryBytes: entry?.[1].bytes ?? 0,
    controllerPolicyBytes: bytesOf(CONTROLLER_POLICY_MODULES),
    controllerPolicyLoadedAtStart: CONTROLLER_POLICY_MODULES.some(loadedAtStart),
    engineAdapterBytes: bytesOf([ENGINE_ADAPTER]),
    engineAdapterLoadedAtStart: loadedAtStart(ENGINE_ADAPTER),
    engineBytesBundled: bundledEngineInputs.length,
    engineImportedExternally: outputs.some(([, output]) =>
      output.imports.some((imported) => imported.path === ENGINE && imported.external)
    ),
  };
}

// Run as an ES module in a fresh process, from the repository root (resolves the engine there).
const IMPORT_TIMER = `const started = performance.now();
const { runSimulation } = await import(${JSON.stringify(ENGINE)});
const imported = performance.now();
const result = await runSimulation({
  request: {
    principal: 'arn:aws:iam::111122223333:role/KarpenterControllerRole-demo',
    action: 'ec2:RunInstances',
    resource: { resource: 'arn:aws:ec2:us-east-1:111122223333:subnet/subnet-1', accountId: '111122223333' },
    contextVariables: { 'aws:RequestedRegion': 'us-east-1' },
  },
  identityPolicies: [{ name: 'p', policy: { Version: '2012-10-17', Statement: [
    { Effect: 'Allow', Action: 'ec2:RunInstances', Resource: '*',
      Condition: { StringEquals: { 'aws:RequestedRegion': 'us-east-1' } } }] } }],
  serviceControlPolicies: [],
  resourceControlPolicies: [],
}, {});
const simulated = performance.now();
if (result.resultType === 'error') throw new Error(JSON.stringify(result.errors));
console.log(JSON.stringify({ importMs: imported - started, firstSimulationMs: simulated - imported }));`;

function timeImport(): { importMs: number; firstSimulationMs: number } {
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', IMPORT_TIMER], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return JSON.parse(output) as { importMs: number; firstSimulationMs: number };
}

/** Preloaded into each CLI run: its peak RSS and CPU time on stderr's last line. */
const USAGE_HOOK = `process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write('\\nusage ' + usage.maxRSS + ' ' + (usage.userCPUTime + usage.systemCPUTime) + '\\n');
});`;

interface CliRun {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssMb: number;
}

/** One CLI run as a child process (exit 1, findings, is a run like exit 0). */
function timeCli(hook: string, cli: string, args: readonly string[]): CliRun {
  const started = performance.now();
  let stderr = '';
  try {
    stderr = execFileSync(process.execPath, [`--import=${hook}`, cli, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' },
    });
  } catch (error) {
    const failed = error as { status?: number; stderr?: string };
    stderr = failed.stderr ?? '';
    if (failed.status !== 1) throw new Error(`nodeclass-scan exited ${failed.status}: ${stderr}`);
  }
  const wallMs = performance.now() - started;
  const [, rssKb, cpuMicroseconds] = /usage (\d+) (\d+)/.exec(stderr) ?? [];
  return {
    wallMs,
    cpuMs: Number(cpuMicroseconds) / 1000,
    peakRssMb: Number(rssKb) / 1024,
  };
}

/** The built CLI on the example manifests, without and with the reference policy as files. */
async function cliFigures(runs: number) {
  // Inside node_modules, so the bundle's external import of the engine resolves from the repo.
  const out = join(ROOT, 'node_modules/.cache/nodeclass-scanner-bench/iam-engine');
  rmSync(out, { recursive: true, force: true });
  await build({
    ...nodeEntriesBuildOptions(join(out, 'lib')),
    absWorkingDir: ROOT,
    logLevel: 'error',
  });
  const work = mkdtempSync(join(tmpdir(), 'nodeclass-bench-iam-engine-'));
  try {
    cpSync(join(ROOT, 'examples/nodeclasses'), join(work, 'k8s'), { recursive: true });
    mkdirSync(join(work, 'iam'));
    const policies = referenceControllerPolicies('v1.14.1', {
      partition: 'aws',
      region: 'us-east-1',
      accountId: '111122223333',
      clusterName: 'demo',
    });
    const policyFlags = policies.flatMap((policy) => {
      const file = join(work, 'iam', `${policy.name}.json`);
      writeFileSync(file, policy.document);
      return ['--controller-policy', file];
    });
    const cli = join(out, 'lib/cli.js');
    const hook = join(work, 'usage-hook.mjs');
    writeFileSync(hook, USAGE_HOOK);
    const base = ['scan', join(work, 'k8s'), '--region', 'us-east-1', '--format', 'json'];
    const withPolicy = [
      ...base,
      '--controller-role',
      'demo=arn:aws:iam::111122223333:role/KarpenterControllerRole-demo',
      ...policyFlags,
    ];
    const without: CliRun[] = [];
    const withDocuments: CliRun[] = [];
    for (let run = 0; run < runs; run++) {
      without.push(timeCli(hook, cli, base));
      withDocuments.push(timeCli(hook, cli, withPolicy));
    }
    const summary = (list: readonly CliRun[]) => ({
      wallMs: Math.round(median(list.map((run) => run.wallMs))),
      cpuMs: Math.round(median(list.map((run) => run.cpuMs))),
      peakRssMb: Math.round(median(list.map((run) => run.peakRssMb)) * 10) / 10,
    });
    return {
      manifests: relative(ROOT, join(ROOT, 'examples/nodeclasses')),
      policyFiles: policies.length,
      withoutControllerPolicy: summary(without),
      withControllerPolicy: summary(withDocuments),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
}

async function measureIamEngine(runs = 7) {
  const packages = engineFootprint();
  const imports = Array.from({ length: runs }, () => timeImport());
  return {
    measuredAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    /** 1-minute load average when the run started: other work on the machine stretches wall times. */
    loadAverage: Math.round((loadavg()[0] ?? 0) * 10) / 10,
    runs,
    bundle: await bundleFigures(),
    installed: {
      packages,
      files: packages.reduce((sum, item) => sum + item.files, 0),
      bytes: packages.reduce((sum, item) => sum + item.bytes, 0),
    },
    importMs: Math.round(median(imports.map((run) => run.importMs)) * 10) / 10,
    firstSimulationMs: Math.round(median(imports.map((run) => run.firstSimulationMs)) * 10) / 10,
    cli: await cliFigures(runs),
  };
}

async function main(): Promise<void> {
  const [runs] = process.argv.slice(2).map(Number);
  const figures = await measureIamEngine(runs ?? 7);
  const text = `${JSON.stringify(figures, null, 2)}\n`;
  if (runs === undefined) writeFileSync(join(ROOT, 'bench/results/iam-engine.json'), text);
  process.stdout.write(text);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
