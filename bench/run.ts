// `npm run bench`: every measurement in its own Node process (a bundled worker, so peak RSS is the
// scanner's, not a TypeScript loader's), results to bench/results/*.json and the README table.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { DEFAULT_LATENCY_MS, RATE_LIMITS } from './aws-model.js';
import { measureColdStart } from './cold-start.js';
import { type BenchResults, renderBenchTable, replaceBenchSection } from './readme-table.js';

const ROOT = process.cwd();
const SIZES = [
  { clusters: 1, nodeClassesPerCluster: 10 },
  { clusters: 10, nodeClassesPerCluster: 20 },
  { clusters: 50, nodeClassesPerCluster: 20 },
  { clusters: 100, nodeClassesPerCluster: 50 },
  // What one scan-cluster worker Lambda holds: a single cluster of the largest fleet.
  { clusters: 1, nodeClassesPerCluster: 50 },
] as const;
const EVENT_FLEET = { clusters: 100, nodeClassesPerCluster: 50 } as const;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function bundleWorker(directory: string): Promise<string> {
  const outfile = join(directory, 'scan-worker.mjs');
  await build({
    entryPoints: [join(ROOT, 'bench/scan-worker.ts')],
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
  return outfile;
}

function runWorker(worker: string, args: readonly string[]): unknown {
  const output = execFileSync(process.execPath, [worker, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}');
}

async function main(): Promise<void> {
  const started = performance.now();
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-bench-'));
  try {
    const worker = await bundleWorker(directory);
    const scans = [];
    for (const size of SIZES) {
      const label = `${size.clusters}x${size.nodeClassesPerCluster}`;
      log(`scan ${label}, no rate limits (deduplication)`);
      const dedup = runWorker(worker, [
        'size',
        String(size.clusters),
        String(size.nodeClassesPerCluster),
        '--no-rate-limits',
      ]);
      log(`scan ${label}, rate-limited`);
      const limited = runWorker(worker, [
        'size',
        String(size.clusters),
        String(size.nodeClassesPerCluster),
      ]);
      scans.push({ size: label, deduplication: dedup, rateLimited: limited });
    }
    log(`events on ${EVENT_FLEET.clusters}x${EVENT_FLEET.nodeClassesPerCluster}`);
    const events = runWorker(worker, [
      'events',
      String(EVENT_FLEET.clusters),
      String(EVENT_FLEET.nodeClassesPerCluster),
    ]);
    log('cold start');
    const coldStart = await measureColdStart(ROOT);

    const environment = {
      measuredAt: new Date().toISOString(),
      node: process.version,
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      latencyMs: DEFAULT_LATENCY_MS,
      rateLimits: RATE_LIMITS,
      benchDurationMs: 0,
    };
    environment.benchDurationMs = Math.round(performance.now() - started);
    const results = { environment, scans, events, coldStart } as unknown as BenchResults;

    const out = join(ROOT, 'bench/results');
    mkdirSync(out, { recursive: true });
    const write = (name: string, value: unknown) =>
      writeFileSync(join(out, name), `${JSON.stringify(value, null, 2)}\n`);
    write('environment.json', environment);
    write('scans.json', scans);
    write('events.json', events);
    write('cold-start.json', coldStart);

    const readmePath = join(ROOT, 'README.md');
    const readme = readFileSync(readmePath, 'utf8');
    writeFileSync(readmePath, replaceBenchSection(readme, renderBenchTable(results)));
    log(`done in ${Math.round(environment.benchDurationMs / 1000)} s; results in bench/results/`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
