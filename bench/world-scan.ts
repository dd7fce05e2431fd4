// Offline scan time against a machine-speed reference measured in the same run (issue 28):
// `nodeclass-scan scan --world FILE --format json` of synthetic fleets with the default input
// limits, each run in a fresh process, between two runs of a fixed reference workload
// (world-scan-worker.ts). scan / reference compares runs made at different times or machine loads;
// CPU time (user + system) is compared as well as wall time, as other processes move it less.
//   npm run bench:world-scan                          100 × 50 and 200 × 50, prints only
//   npm run bench:world-scan -- --record after        also stores them in bench/results/world-scan.json
//   … --root DIR                                      the scanner of another checkout (same worlds)
//   … --sizes 100x50 --repeat 5
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildFleetWorld } from './fleet.js';
import { bundleNodeWorker, median, optionValue, recordMeasurement } from './harness.js';

const HERE = process.cwd();
const args = process.argv.slice(2);
const option = (name: string): string | undefined => optionValue(args, name);
const root = resolve(option('--root') ?? HERE);
const record = option('--record');
const repeat = Number(option('--repeat') ?? 3);
const sizes = (option('--sizes') ?? '100x50,200x50').split(',').map((label) => {
  const [clusters, perCluster] = label.split('x').map(Number);
  if (!Number.isInteger(clusters) || !Number.isInteger(perCluster))
    throw new Error(`--sizes: ${label} is not CLUSTERSxNODECLASSES`);
  return { label, clusters: clusters as number, nodeClassesPerCluster: perCluster as number };
});

interface WorkerOutput {
  readonly wallTimeMs: number;
  readonly cpuMs: number;
  readonly exitCode?: number;
  readonly peakRssMb?: number;
  readonly stderr?: string;
}

function log(message: string): void {
  process.stderr.write(`[world-scan] ${message}\n`);
}

/** JSON values as the world loader counts them: one, plus one per comma, `[` and `{` outside strings. */
function jsonValues(text: string): number {
  let values = 1;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index += 1;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x2c || code === 0x5b || code === 0x7b) values += 1;
  }
  return values;
}

async function main(): Promise<void> {
  const source = join(root, 'bench/world-scan-worker.ts');
  if (!existsSync(source)) throw new Error(`${source} not found`);
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-world-scan-'));
  try {
    const worker = join(directory, 'world-scan-worker.mjs');
    await bundleNodeWorker(source, worker);
    const run = (workerArgs: readonly string[]): WorkerOutput => {
      const output = execFileSync(process.execPath, [worker, ...workerArgs], {
        cwd: root,
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as WorkerOutput;
    };
    const results = [];
    for (const size of sizes) {
      const worldFile = join(directory, `world-${size.label}.json`);
      const text = JSON.stringify(buildFleetWorld(size));
      writeFileSync(worldFile, text);
      const references: WorkerOutput[] = [run(['reference'])];
      const scans: WorkerOutput[] = [];
      for (let index = 0; index < repeat; index++) {
        const scan = run(['scan', worldFile]);
        scans.push(scan);
        references.push(run(['reference']));
        log(
          `${size.label} run ${index + 1}: scan ${scan.wallTimeMs} ms wall, ${scan.cpuMs} ms CPU (exit ${scan.exitCode}, ${scan.peakRssMb} MB); reference ${references.at(-1)?.wallTimeMs} ms wall, ${references.at(-1)?.cpuMs} ms CPU`
        );
        if ((scan.exitCode ?? 0) > 1) {
          log(`${size.label}: not scanned: ${scan.stderr ?? ''}`);
          break;
        }
      }
      const scanned = scans.every((scan) => (scan.exitCode ?? 0) <= 1);
      const ratio = (scanMs: number, referenceMs: number) =>
        scanned ? Math.round((scanMs / referenceMs) * 100) / 100 : undefined;
      const referenceWall = median(references.map((reference) => reference.wallTimeMs));
      const referenceCpu = median(references.map((reference) => reference.cpuMs));
      const scanWall = median(scans.map((scan) => scan.wallTimeMs));
      const scanCpu = median(scans.map((scan) => scan.cpuMs));
      results.push({
        size: size.label,
        nodeClasses: size.clusters * size.nodeClassesPerCluster,
        worldBytes: Buffer.byteLength(text),
        worldJsonValues: jsonValues(text),
        scanned,
        ...(scanned ? {} : { refusal: scans.at(-1)?.stderr?.trim() }),
        reference: references.map(({ wallTimeMs, cpuMs }) => ({ wallTimeMs, cpuMs })),
        scans: scans.map(({ wallTimeMs, cpuMs }) => ({ wallTimeMs, cpuMs })),
        median: {
          referenceWallMs: referenceWall,
          referenceCpuMs: referenceCpu,
          scanWallMs: scanWall,
          scanCpuMs: scanCpu,
        },
        /** Median scan / median reference. */
        scanToReference: {
          wall: ratio(scanWall, referenceWall),
          cpu: ratio(scanCpu, referenceCpu),
        },
        peakRssMb: Math.max(...scans.map((scan) => scan.peakRssMb ?? 0)),
      });
    }
    const measurement = {
      measuredAt: new Date().toISOString(),
      node: process.version,
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      repeat,
      results,
    };
    process.stdout.write(`${JSON.stringify(measurement, null, 2)}\n`);
    if (record !== undefined) {
      const file = recordMeasurement(HERE, 'world-scan.json', record, measurement);
      log(`recorded as "${record}" in ${file}`);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
