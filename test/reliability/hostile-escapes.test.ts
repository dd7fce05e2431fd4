// Terminal escapes from hostile inputs: file names, world-file keys, manifest fields, config rules and
// a Kubernetes API server's answer. Whatever carries them, the bytes the CLI writes hold no raw
// control or bidi character (only the table's own colour, when colour is on): they are shown as
// `\uXXXX`. The test timeouts are hang guards, not benchmarks.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DescribeClusterCommand } from '@aws-sdk/client-eks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanReport } from '../../lambda/core/report.js';
import {
  generatePki,
  sendJson,
  startApiServer,
  statusBody,
  type TestApiServer,
} from '../adapters/kube/tls-fixtures.js';
import { type CliRun, runCliCaptured, useTempTrees } from '../cli/support/run-cli.js';
import { eksCluster, mockLiveAws } from '../support/live-aws-mocks.js';

/**
 * A YAML double-quoted scalar holding `text`. JSON.stringify leaves DEL and C1 characters raw,
 * which kubectl (and so the scanner) refuses in a file; YAML escapes them, and they still reach
 * the scanner's output as the characters themselves.
 */
const yamlQuoted = (text: string): string =>
  JSON.stringify(text).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  );

const GUARD_MS = 60_000;
const BIN = join(import.meta.dirname, '..', '..', 'lambda', 'cli', 'nodeclass-scan.js');
const EXAMPLE_WORLD = join(import.meta.dirname, '..', '..', 'examples', 'world.json');
const ESC = '\u001b';
const BEL = '\u0007';

/** What an attacker would embed: clear screen, retitle, C1 CSI, DEL, backspace, bidi overrides. */
const HOSTILE = [
  `${ESC}[2J`,
  `${ESC}]0;pwned${BEL}`,
  '\u009b31m',
  '\u007f\b\r',
  '\u202eevil\u202c',
  '\u2066iso\u2069',
];
const HOSTILE_TEXT = HOSTILE.join('');

const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, 'g');

/**
 * Offsets of raw unsafe characters in UTF-8 output: C0 but tab and line feed, DEL, C1 (C2 80–9F),
 * ALM (D8 9C), LRM/RLM (E2 80 8E/8F), line/paragraph separators and bidi embeddings/overrides
 * (E2 80 A8–AE), bidi isolates (E2 81 A6–A9).
 */
function unsafeBytes(output: string | Buffer): number[] {
  const bytes = typeof output === 'string' ? Buffer.from(output, 'utf8') : output;
  const found: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] ?? 0;
    const next = bytes[i + 1] ?? 0;
    const third = bytes[i + 2] ?? 0;
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a) || byte === 0x7f) found.push(i);
    else if (byte === 0xc2 && next >= 0x80 && next <= 0x9f) found.push(i);
    else if (byte === 0xd8 && next === 0x9c) found.push(i);
    else if (byte === 0xe2 && next === 0x80 && (third === 0x8e || third === 0x8f)) found.push(i);
    else if (byte === 0xe2 && next === 0x80 && third >= 0xa8 && third <= 0xae) found.push(i);
    else if (byte === 0xe2 && next === 0x81 && third >= 0xa6 && third <= 0xa9) found.push(i);
  }
  return found;
}

function expectClean(run: CliRun): void {
  expect(unsafeBytes(run.stdout)).toEqual([]);
  expect(unsafeBytes(run.stderr)).toEqual([]);
}

const errorLines = (stderr: string) => stderr.split('\n').filter((line) => line !== '');

const NODE_CLASS = (name: string, reason: string) => `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ${yamlQuoted(name)}
  annotations:
    ignore-check.nodeclass-scanner/ami-selector-pinned: ${yamlQuoted(reason)}
spec:
  amiSelectorTerms:
    - alias: al2023@latest
  role: ${yamlQuoted(`Role${HOSTILE_TEXT}`)}
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: ${yamlQuoted(`demo${HOSTILE_TEXT}`)}
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

const tree = useTempTrees();

/** Runs the real binary; output kept as raw bytes. */
async function runBinary(
  argv: readonly string[],
  env: NodeJS.ProcessEnv
): Promise<{ code: number | null; stdout: Buffer; stderr: Buffer }> {
  const child = spawn(process.execPath, [BIN, ...argv], { env });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) };
}

describe('hostile terminal escapes in input files', () => {
  it(
    'shows a manifest file name holding ESC[2J and ESC]0;…BEL escaped in its one error line',
    async () => {
      const name = `bad${ESC}[2J${ESC}]0;title${BEL}\u202e.yaml`;
      const dir = tree({ [name]: 'kind: [\n' });
      const expected = `nodeclass-scan: ${join(dir, 'bad\\u001B[2J\\u001B]0;title\\u0007\\u202E.yaml')}:2: `;

      const inProcess = await runCliCaptured(['scan', dir]);
      expect(inProcess.code).toBe(2);
      expectClean(inProcess);
      expect(errorLines(inProcess.stderr)).toEqual([expect.stringContaining(expected)]);

      const binary = await runBinary(['scan', dir], { ...process.env, NO_COLOR: '1' });
      expect(binary.code).toBe(2);
      expect(unsafeBytes(binary.stdout)).toEqual([]);
      expect(unsafeBytes(binary.stderr)).toEqual([]);
      expect(binary.stderr.includes(0x1b)).toBe(false);
      expect(binary.stderr.includes(0x07)).toBe(false);
      expect(errorLines(binary.stderr.toString('utf8'))).toEqual([
        expect.stringContaining(expected),
      ]);
    },
    GUARD_MS
  );

  it('shows a world-file key holding escapes escaped in the error line', async () => {
    // The example account, valid apart from the hostile key.
    const world = JSON.parse(readFileSync(EXAMPLE_WORLD, 'utf8')) as Record<string, unknown>;
    world.ssm = { parameters: { [`/x/${HOSTILE_TEXT}`]: 5 } };
    const dir = tree({ 'world.json': JSON.stringify(world) });

    const run = await runCliCaptured(['scan', '--world', join(dir, 'world.json')]);

    expect(run.code).toBe(2);
    expectClean(run);
    const lines = errorLines(run.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('ssm.parameters./x/\\u001B[2J\\u001B]0;pwned\\u0007\\u009B31m');
    expect(lines[0]).toContain('\\u202Eevil\\u202C\\u2066iso\\u2069');
  });

  it('prints NodeClass names, annotation values and spec fields in every format without raw escapes', async () => {
    const name = `web${HOSTILE_TEXT}`;
    const reason = `accepted${HOSTILE_TEXT}`;
    const dir = tree({ 'nc.yaml': NODE_CLASS(name, reason) });

    const plain = await runCliCaptured(['scan', dir, '--fail-on', 'none']);
    expect(plain.code).toBe(0);
    expectClean(plain);
    expect(Buffer.from(plain.stdout).includes(0x1b)).toBe(false);
    // The table wraps long lines (hanging indents): read it as one line per entry.
    const table = plain.stdout.replace(/\n +/g, ' ');
    expect(table).toContain('EC2NodeClass web\\u001B[2J\\u001B]0;pwned\\u0007');
    expect(table).toContain('annotation): accepted\\u001B[2J');

    // Colour on: the table's own SGR sequences are the only escapes.
    const coloured = await runCliCaptured(['scan', dir, '--fail-on', 'none'], { tty: true });
    expect(coloured.stdout).toMatch(SGR);
    expect(unsafeBytes(coloured.stdout.replace(SGR, ''))).toEqual([]);
    expect(coloured.stdout).toContain('web\\u001B[2J');

    const asffTarget = ['--region', 'eu-west-1', '--aws-account-id', '123456789012'];
    for (const format of ['json', 'sarif', 'junit', 'asff']) {
      const target = format === 'asff' ? asffTarget : [];
      const run = await runCliCaptured(
        ['scan', dir, '--fail-on', 'none', '--format', format, ...target],
        { tty: true }
      );
      expect(run.stdout, format).not.toBe('');
      expect(run.code, format).toBe(0);
      expectClean(run);
    }
    // JSON escapes keep the value: the report still names the object exactly.
    const json = await runCliCaptured(['scan', dir, '--fail-on', 'none', '--format', 'json']);
    const report = JSON.parse(json.stdout) as ScanReport;
    expect(report.findings.map((finding) => finding.resource.name)).toContain(name);
  });

  it('escapes config-file names and rules in the expiry warning and usage errors', async () => {
    const config = `cfg${ESC}]0;t${BEL}.yaml`;
    const dir = tree({
      'nc.yaml': NODE_CLASS('web', 'ok'),
      [config]: `ignore:\n  - check: ami-selector-pinned\n    resource: ${yamlQuoted(`*/EC2NodeClass/w*${HOSTILE_TEXT}`)}\n    reason: old\n    expires: 2026-01-01\n`,
    });

    const warned = await runCliCaptured(['scan', join(dir, 'nc.yaml'), '--config', config], {
      cwd: dir,
    });
    expectClean(warned);
    expect(errorLines(warned.stderr)).toEqual([
      expect.stringMatching(/^nodeclass-scan: warning: cfg\\u001B\]0;t\\u0007\.yaml: ignore\[0\]/),
    ]);

    for (const argv of [
      ['scan', join(dir, 'nc.yaml'), '--baseline', `missing${HOSTILE_TEXT}.json`],
      ['scan', join(dir, 'nc.yaml'), '--format', `x${HOSTILE_TEXT}`],
      ['scan', join(dir, 'nc.yaml'), `--bogus${HOSTILE_TEXT}`],
      ['scan', '--world', `nope${HOSTILE_TEXT}.json`],
      ['scan', '--cluster', 'prod', '--region', `eu${HOSTILE_TEXT}`],
    ]) {
      const run = await runCliCaptured(argv);
      expect(run.code, argv.join(' ')).toBe(2);
      expectClean(run);
      expect(run.stderr, argv.join(' ')).toContain('\\u001B[2J');
    }
  });
});

describe('hostile terminal escapes from a Kubernetes API server', () => {
  const aws = mockLiveAws();
  let server: TestApiServer;
  let caPem: string;

  beforeAll(async () => {
    const pki = generatePki();
    caPem = pki.caPem;
    server = await startApiServer(pki);
  });

  afterAll(async () => {
    await server.close();
    aws.restore();
  });

  it(
    'shows the body excerpt of a 500 answer escaped in the progress line and the report',
    async () => {
      aws.reset();
      aws.eks.on(DescribeClusterCommand).resolves(eksCluster('prod', server.endpoint, caPem));
      server.handle((_req, res) => {
        sendJson(res, 500, statusBody(500, 'InternalError', `boom ${HOSTILE_TEXT} end`));
      });

      const run = await runCliCaptured(['scan', '--cluster', 'prod', '--region', 'eu-west-1'], {
        stderrTty: true,
      });

      // The cluster's read failure is an error finding (high): exit 1, with a report.
      expect(run.code).toBe(1);
      expectClean(run);
      const progress = errorLines(run.stderr).filter((line) => line.startsWith('[1/1] prod:'));
      expect(progress).toEqual([expect.stringContaining('boom \\u001B[2J\\u001B]0;pwned\\u0007')]);
      expect(progress[0]).toContain('\\u202Eevil\\u202C');
      expect(run.stdout.replace(/\n +/g, ' ')).toContain('boom \\u001B[2J');
    },
    GUARD_MS
  );
});

describe('the real process on stderr', () => {
  it(
    'prints only its own error line when credentials are missing (no SDK Node-version warning)',
    async () => {
      const dir = tree({});
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: dir,
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_CONFIG_FILE: join(dir, 'none'),
        AWS_SHARED_CREDENTIALS_FILE: join(dir, 'none'),
        NO_COLOR: '1',
      };
      const run = await runBinary(['scan', '--cluster', 'prod', '--region', 'eu-west-1'], env);
      expect(run.code).toBe(2);
      expect(errorLines(run.stderr.toString('utf8'))).toEqual([
        expect.stringMatching(/^nodeclass-scan: no usable AWS credentials/),
      ]);
    },
    GUARD_MS
  );
});
