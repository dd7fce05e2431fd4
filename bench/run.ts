// `npm run bench`: every measurement in its own Node process (a bundled worker, so peak RSS is the
// scanner's, not a TypeScript loader's), results to bench/results/*.json and the README table.
//   --skip-cold-start   keep bench/results/cold-start.json as it is (measured separately)
//   --sizes 1x10,10x20  only these fleet scans, printed on stdout; nothing is written
//   --render-only       the README section again from bench/results/*.json, nothing measured
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LATENCY_MS, RATE_LIMITS } from './aws-model.js';
import { measureColdStart } from './cold-start.js';
import { buildFleetWorld } from './fleet.js';
import { bundleNodeWorker } from './harness.js';
import { type BenchResults, renderBenchTable, replaceBenchSection } from './readme-table.js';

const ROOT = process.cwd();
const SIZES = [
  { clusters: 1, nodeClassesPerCluster: 10 },
  { clusters: 10, nodeClassesPerCluster: 20 },
  // The fleet of issue 15's live CLI scan (1,000 NodeClasses).
  { clusters: 40, nodeClassesPerCluster: 25 },
  { clusters: 50, nodeClassesPerCluster: 20 },
  { clusters: 100, nodeClassesPerCluster: 50 },
  // What one scan-cluster worker Lambda holds: a single cluster of the largest fleet.
  { clusters: 1, nodeClassesPerCluster: 50 },
] as const;
const EVENT_FLEET = { clusters: 100, nodeClassesPerCluster: 50 } as const;
/** Peak memory of each output format, for the whole largest fleet in one CLI process. */
const FORMAT_FLEET = { clusters: 100, nodeClassesPerCluster: 50 } as const;
const FORMATS = ['table', 'json', 'sarif', 'junit'] as const;

const args = process.argv.slice(2);
const skipColdStart = args.includes('--skip-cold-start');
const sizesArg = args[args.indexOf('--sizes') + 1];
const selectedSizes =
  args.includes('--sizes') && sizesArg !== undefined
    ? SIZES.filter((size) =>
        sizesArg.split(',').includes(`${size.clusters}x${size.nodeClassesPerCluster}`)
      )
    : SIZES;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

async function bundleWorker(directory: string): Promise<string> {
  const outfile = join(directory, 'scan-worker.mjs');
  await bundleNodeWorker(join(ROOT, 'bench/scan-worker.ts'), outfile);
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

/** The README's Benchmarks section from the stored results. */
function renderReadme(results: BenchResults): void {
  const readmePath = join(ROOT, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  writeFileSync(readmePath, replaceBenchSection(readme, renderBenchTable(results)));
}

function storedResults(): BenchResults {
  const read = (name: string): unknown =>
    JSON.parse(readFileSync(join(ROOT, 'bench/results', name), 'utf8'));
  return {
    environment: read('environment.json'),
    scans: read('scans.json'),
    events: read('events.json'),
    formats: read('formats.json'),
    coldStart: read('cold-start.json'),
  } as BenchResults;
}

async function main(): Promise<void> {
  if (args.includes('--render-only')) {
    renderReadme(storedResults());
    return;
  }
  const started = performance.now();
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-bench-'));
  try {
    const worker = await bundleWorker(directory);
    const scans = [];
    for (const size of selectedSizes) {
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
    if (selectedSizes !== SIZES) {
      process.stdout.write(`${JSON.stringify(scans, null, 2)}\n`);
      return;
    }
    log(`events on ${EVENT_FLEET.clusters}x${EVENT_FLEET.nodeClassesPerCluster}`);
    const events = runWorker(worker, [
      'events',
      String(EVENT_FLEET.clusters),
      String(EVENT_FLEET.nodeClassesPerCluster),
    ]);
    const worldFile = join(directory, 'fleet-world.json');
    writeFileSync(worldFile, JSON.stringify(buildFleetWorld(FORMAT_FLEET)));
    const formats = FORMATS.map((format) => {
      log(
        `output format ${format} on ${FORMAT_FLEET.clusters}x${FORMAT_FLEET.nodeClassesPerCluster}`
      );
      return runWorker(worker, ['format', format, worldFile]);
    });
    const coldStartFile = join(ROOT, 'bench/results/cold-start.json');
    let coldStart: unknown;
    if (skipColdStart) {
      log('cold start: kept from bench/results/cold-start.json');
      coldStart = JSON.parse(readFileSync(coldStartFile, 'utf8'));
    } else {
      log('cold start');
      coldStart = await measureColdStart(ROOT);
    }

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
    const results = { environment, scans, events, formats, coldStart } as unknown as BenchResults;

    const out = join(ROOT, 'bench/results');
    mkdirSync(out, { recursive: true });
    const write = (name: string, value: unknown) =>
      writeFileSync(join(out, name), `${JSON.stringify(value, null, 2)}\n`);
    write('environment.json', environment);
    write('scans.json', scans);
    write('events.json', events);
    write('formats.json', formats);
    if (!skipColdStart) write('cold-start.json', coldStart);

    renderReadme(results);
    log(`done in ${Math.round(environment.benchDurationMs / 1000)} s; results in bench/results/`);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
