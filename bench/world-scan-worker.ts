// One timed run in a fresh process (bundled by bench/world-scan.ts), printing one JSON line:
//   world-scan-worker reference                      the fixed machine-speed workload
//   world-scan-worker scan <world file>              `nodeclass-scan scan --world FILE --format json`
// The scan runs the real CLI in this process, with the default input limits (no NODECLASS_SCAN_*
// variable), its report written to /dev/null as it comes.
import { closeSync, openSync, writeSync } from 'node:fs';
import { runCli } from '../lambda/cli/main.js';

const SCAN_TIME = new Date('2026-11-01T00:00:00Z');

/** User + system CPU time since `since`, in ms: less moved by other processes than wall time. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return Math.round((used.user + used.system) / 1000);
}

function peakRssMb(): number {
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}

/**
 * A fixed amount of the work a scan does (objects built, JSON written and read back, strings
 * hashed in a loop), independent of the scanner's code: its time says how fast this machine is
 * right now, so scan time / reference time compares runs on a loaded or another machine.
 */
function referenceWorkload(): number {
  let checksum = 0;
  for (let round = 0; round < 32; round++) {
    const items = Array.from({ length: 20_000 }, (_, index) => ({
      id: `item-${round}-${index}`,
      tags: { cluster: `cluster-${index % 100}`, pool: `pool-${index % 7}` },
      values: [index, index * 2, index % 13],
    }));
    const parsed = JSON.parse(JSON.stringify(items)) as typeof items;
    for (const item of parsed) {
      let hash = 0x811c9dc5;
      for (let char = 0; char < item.id.length; char++)
        hash = Math.imul(hash ^ item.id.charCodeAt(char), 0x01000193) >>> 0;
      checksum = (checksum + hash + (item.values[2] ?? 0)) >>> 0;
    }
  }
  return checksum;
}

async function scan(worldFile: string) {
  const sink = openSync('/dev/null', 'w');
  let stderr = '';
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    const env = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith('NODECLASS_SCAN_')) delete env[name];
    const exitCode = await runCli(['scan', '--world', worldFile, '--format', 'json'], {
      stdout: (text) => {
        writeSync(sink, text);
      },
      stderr: (text) => {
        stderr += text;
      },
      readStdin: async () => '',
      stdoutIsTty: false,
      stderrIsTty: false,
      env,
      now: () => SCAN_TIME,
    });
    return {
      kind: 'scan',
      exitCode,
      wallTimeMs: Math.round(performance.now() - started),
      cpuMs: cpuMs(cpu),
      peakRssMb: peakRssMb(),
      ...(exitCode > 1 ? { stderr: stderr.slice(0, 2000) } : {}),
    };
  } finally {
    closeSync(sink);
  }
}

const [mode, worldFile] = process.argv.slice(2);
if (mode === 'reference') {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const checksum = referenceWorkload();
  const wallTimeMs = Math.round(performance.now() - started);
  const result = { kind: 'reference', wallTimeMs, cpuMs: cpuMs(cpu), checksum };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} else if (mode === 'scan' && worldFile !== undefined) {
  process.stdout.write(`${JSON.stringify(await scan(worldFile))}\n`);
} else {
  throw new Error('usage: world-scan-worker reference | scan <world file>');
}
