// Hostile input files: memory bombs under the byte cap, endless standard input, FIFOs, devices and
// trees too large to walk. Each runs the real CLI and must end with exit 2, a report, and one clear
// error line naming the input and the limit, while the other inputs are still scanned. The test
// timeouts are hang guards, not benchmarks.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_INPUT_LIMITS } from '../../lambda/adapters/files/limits.js';
import { readCapped } from '../../lambda/adapters/files/read-input.js';
import { type CliIo, runCli } from '../../lambda/cli/main.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { countedStream, mkfifo } from '../adapters/files/hostile-inputs.js';
import { type CliRun, runCliCaptured, SCAN_TIME, useTempTrees } from '../cli/support/run-cli.js';

const GUARD_MS = 180_000;
const MiB = 1024 * 1024;
const BIN = join(import.meta.dirname, '..', '..', 'lambda', 'cli', 'nodeclass-scan.js');
const EXAMPLE_WORLD = join(import.meta.dirname, '..', '..', 'examples', 'world.json');

const GOOD = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: good
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  role: KarpenterNodeRole
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

const tree = useTempTrees();
afterEach(() => {
  vi.unstubAllEnvs();
});

/** A temporary directory holding `good.yaml` (one NodeClass) and the given files. */
function inputs(files: Record<string, string> = {}): string {
  return tree({ 'good.yaml': GOOD, ...files });
}

const errorLines = (run: CliRun) => run.stderr.split('\n').filter((line) => line !== '');

/** Exit 2, a JSON report that still scanned good.yaml, and exactly one error line. */
function expectRefusedAlongsideGood(run: CliRun, source: string, reason: RegExp | string): void {
  expect(run.code).toBe(2);
  const report = JSON.parse(run.stdout) as ScanReport;
  expect(report.summary.nodeClasses).toBe(1);
  expect(report.summary.inputErrors).toHaveLength(1);
  const lines = errorLines(run);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`nodeclass-scan: ${source}`);
  expect(lines[0]).toMatch(reason);
}

describe('hostile input files', () => {
  it(
    'refuses a 9.9 MiB flow array [1,1,…] while parsing it, not after',
    async () => {
      const dir = inputs();
      const bomb = join(dir, 'flow.yaml');
      writeFileSync(bomb, `[${'1,'.repeat(Math.floor(4.95 * MiB))}1]`);
      const run = await runCliCaptured(['scan', dir, '--format', 'json']);
      expectRefusedAlongsideGood(
        run,
        `${bomb}:1`,
        /document 1 holds too many YAML tokens \(limit 500000, set NODECLASS_SCAN_MAX_DOCUMENT_TOKENS to raise it\); file not scanned$/
      );
    },
    GUARD_MS
  );

  it(
    'refuses 10 MB of `---` (2.5 million empty documents)',
    async () => {
      const dir = inputs();
      const bomb = join(dir, 'dashes.yaml');
      writeFileSync(bomb, '---\n'.repeat(2_500_000));
      const run = await runCliCaptured(['scan', dir, '--format', 'json']);
      expectRefusedAlongsideGood(
        run,
        `${bomb}:10001`,
        /holds too many documents \(limit 10000, set NODECLASS_SCAN_MAX_DOCUMENTS to raise it\); not scanned$/
      );
    },
    GUARD_MS
  );

  it(
    'refuses 10,001 real documents in one file, and reads them once the limit is raised',
    async () => {
      const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: v\n';
      const dir = inputs({ 'many.yaml': `${configMap}---\n`.repeat(10_000) + configMap });
      const run = await runCliCaptured(['scan', dir, '--format', 'json']);
      expectRefusedAlongsideGood(run, join(dir, 'many.yaml'), /NODECLASS_SCAN_MAX_DOCUMENTS/);

      vi.stubEnv('NODECLASS_SCAN_MAX_DOCUMENTS', '10001');
      const raised = await runCliCaptured(['scan', dir, '--format', 'json', '--fail-on', 'none']);
      expect(raised.stderr).toBe('');
      expect(raised.code).toBe(0);
    },
    GUARD_MS
  );

  it(
    'stops reading a 50 MiB standard-input stream at the cap',
    async () => {
      const { stream, pulled } = countedStream(50 * MiB);
      let stdout = '';
      let stderr = '';
      // The binding of lambda/cli/run.ts, on a generated stream instead of process.stdin.
      const io: CliIo = {
        stdout: (text) => {
          stdout += text;
        },
        stderr: (text) => {
          stderr += text;
        },
        readStdin: (maxBytes = DEFAULT_INPUT_LIMITS.maxInputBytes) =>
          readCapped(stream, maxBytes, 'maxInputBytes'),
        stdoutIsTty: false,
        stderrIsTty: false,
        env: {},
        now: () => SCAN_TIME,
      };
      const code = await runCli(['scan', '-', '--format', 'json'], io);
      expect(code).toBe(2);
      expect(JSON.parse(stdout).summary.inputErrors).toHaveLength(1);
      expect(stderr).toBe(
        'nodeclass-scan: <stdin>: too large (limit 10485760 bytes, set NODECLASS_SCAN_MAX_INPUT_BYTES to raise it); not read further\n'
      );
      // At most one chunk past the cap was ever taken from the stream.
      expect(pulled()).toBeLessThanOrEqual(10 * MiB + 64 * 1024);
      expect(stream.destroyed).toBe(true);
    },
    GUARD_MS
  );

  it(
    'stops the real binary reading a 50 MiB pipe at the cap',
    async () => {
      const child = spawn(process.execPath, [BIN, 'scan', '-', '--format', 'json'], {
        env: { ...process.env, NO_COLOR: '1' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const { stream, pulled } = countedStream(50 * MiB);
      // The scanner closes its end at the cap: the writer then fails with EPIPE, as `yes |` would.
      const writing = pipeline(stream, child.stdin).catch(() => undefined);
      const [code] = (await once(child, 'close')) as [number];
      await writing;
      expect(code).toBe(2);
      expect(JSON.parse(stdout).summary.inputErrors).toHaveLength(1);
      expect(stderr).toBe(
        'nodeclass-scan: <stdin>: too large (limit 10485760 bytes, set NODECLASS_SCAN_MAX_INPUT_BYTES to raise it); not read further\n'
      );
      expect(pulled()).toBeLessThan(20 * MiB);
    },
    GUARD_MS
  );

  it(
    'refuses both bombs in the real binary within a 256 MB heap',
    async () => {
      const dir = inputs({
        'dashes.yaml': '---\n'.repeat(2_500_000),
        'flow.yaml': `[${'1,'.repeat(Math.floor(4.95 * MiB))}1]`,
      });
      const child = spawn(
        process.execPath,
        ['--max-old-space-size=256', BIN, 'scan', dir, '--format', 'json'],
        { env: { ...process.env, NO_COLOR: '1' } }
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const [code] = (await once(child, 'close')) as [number | null];
      // Out of heap, V8 aborts with a signal and no report.
      expect(code).toBe(2);
      expect(JSON.parse(stdout).summary.nodeClasses).toBe(1);
      expect(stderr.split('\n').filter((line) => line !== '')).toEqual([
        expect.stringMatching(/dashes\.yaml:10001: .*NODECLASS_SCAN_MAX_DOCUMENTS/),
        expect.stringMatching(/flow\.yaml:1: .*NODECLASS_SCAN_MAX_DOCUMENT_TOKENS/),
      ]);
    },
    GUARD_MS
  );

  it(
    'refuses a FIFO named *.yaml without waiting for a writer',
    async (context) => {
      const dir = inputs();
      const fifo = join(dir, 'pipe.yaml');
      if (!mkfifo(fifo)) context.skip();
      const run = await runCliCaptured(['scan', dir, '--format', 'json']);
      expectRefusedAlongsideGood(run, fifo, 'a named pipe (FIFO), not a regular file; not read');
      // Named on the command line too.
      const named = await runCliCaptured([
        'scan',
        fifo,
        join(dir, 'good.yaml'),
        '--format',
        'json',
      ]);
      expectRefusedAlongsideGood(named, fifo, 'named pipe');
    },
    GUARD_MS
  );

  it.skipIf(!existsSync('/dev/zero'))(
    'refuses x.yaml → /dev/zero before reading from it',
    async () => {
      const dir = inputs();
      const link = join(dir, 'x.yaml');
      symlinkSync('/dev/zero', link);
      const run = await runCliCaptured(['scan', dir, '--format', 'json']);
      expectRefusedAlongsideGood(
        run,
        link,
        'a symbolic link to a character device, not a regular file; not read'
      );
    },
    GUARD_MS
  );

  it(
    'refuses a directory over the file cap by name, and walks it once the cap is raised',
    async () => {
      const root = inputs();
      const tree = join(root, 'tree');
      for (let d = 0; d < 15; d++) {
        mkdirSync(join(tree, `d${d}`), { recursive: true });
        for (let f = 0; f < 10; f++) {
          writeFileSync(join(tree, `d${d}`, `f${f}.yaml`), 'kind: ConfigMap\napiVersion: v1\n');
        }
      }
      vi.stubEnv('NODECLASS_SCAN_MAX_FILES', '100');
      const run = await runCliCaptured(['scan', join(root, 'good.yaml'), tree, '--format', 'json']);
      expectRefusedAlongsideGood(
        run,
        tree,
        /holds too many manifest files and directories \(limit 100, set NODECLASS_SCAN_MAX_FILES to raise it\); not scanned$/
      );

      // 150 files and 16 directories, the good file among the budget: 167.
      vi.stubEnv('NODECLASS_SCAN_MAX_FILES', '167');
      const raised = await runCliCaptured(['scan', root, '--format', 'json', '--fail-on', 'none']);
      expect(raised.stderr).toBe('');
      expect(raised.code).toBe(0);
    },
    GUARD_MS
  );

  it(
    'refuses a world file of 240,000 `{}` images with its first problems',
    async () => {
      const world = JSON.parse(readFileSync(EXAMPLE_WORLD, 'utf8'));
      world.ec2.images = [];
      const dir = inputs({
        'world.json': JSON.stringify(world).replace(
          '"images":[]',
          `"images":[${'{},'.repeat(239_999)}{}]`
        ),
      });
      const run = await runCliCaptured(['scan', '--world', join(dir, 'world.json')]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = errorLines(run);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^nodeclass-scan: .*world\.json: not a valid world file: ec2\.images\[0\]\.ImageId: .* …$/
      );
    },
    GUARD_MS
  );

  it(
    'refuses a world file that is a FIFO without waiting for a writer',
    async (context) => {
      const dir = inputs();
      const fifo = join(dir, 'world.json');
      if (!mkfifo(fifo)) context.skip();
      const run = await runCliCaptured(['scan', '--world', fifo]);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `nodeclass-scan: ${fifo}: a named pipe (FIFO), not a regular file; not read\n`
      );
    },
    GUARD_MS
  );

  it(
    'refuses a config file or a baseline that is a FIFO or a link to /dev/zero, before scanning',
    async (context) => {
      const dir = inputs();
      const fifo = join(dir, 'pipe.yaml');
      if (!mkfifo(fifo)) context.skip();
      const zero = join(dir, 'zero.json');
      symlinkSync('/dev/zero', zero);
      for (const [argv, label] of [
        [['--config', fifo], fifo],
        [['--config', zero], zero],
        [['--baseline', fifo], `--baseline ${fifo}`],
        [['--baseline', zero], `--baseline ${zero}`],
      ] as const) {
        const run = await runCliCaptured(['scan', join(dir, 'good.yaml'), ...argv]);
        expect(run.code).toBe(2);
        expect(run.stdout).toBe('');
        expect(errorLines(run)).toHaveLength(1);
        expect(run.stderr).toContain(label);
        expect(run.stderr).toMatch(/not a regular file; not read/);
      }
    },
    GUARD_MS
  );
});
