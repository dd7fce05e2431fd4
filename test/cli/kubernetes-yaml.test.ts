// The CLI reads manifests as kubectl does (docs/yaml-as-kubernetes-reads-it.md): merge keys,
// YAML 1.1 booleans, the last of duplicate keys, UTF-16 files, and an empty standard input
// refused. Run through the real binary (a child process), as CI runs it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';

const BIN = join(import.meta.dirname, '..', '..', 'lambda', 'cli', 'nodeclass-scan.js');

const nodeClass = (name: string, extra: string) => `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ${name}
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
  role: KarpenterNodeRole
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
${extra}`;

const MERGED = `insecure: &insecure {httpTokens: optional}
${nodeClass('merged', '  metadataOptions: {<<: *insecure}\n')}`;

const withBom = (bom: number[], text: Buffer) => Buffer.concat([Buffer.from(bom), text]);

const { dir, cleanup } = tempTree({
  'merge/nc.yaml': MERGED,
  'utf16/plain.yaml': nodeClass('plain', ''),
});
afterAll(cleanup);

interface BinRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs bin/nodeclass-scan with `stdin` written to its standard input (closed after). */
async function runBin(args: readonly string[], stdin: string | Buffer = ''): Promise<BinRun> {
  const child = spawn('node', [BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdin.end(stdin);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

const imdsFinding = (stdout: string, name: string) =>
  ReportContract.parse(JSON.parse(stdout)).findings.find(
    (finding) => finding.checkId === 'imds-v2-required' && finding.resource.name === name
  );

describe('nodeclass-scan reads YAML as Kubernetes does (child process)', () => {
  it('applies a `<<` merge key: the merged httpTokens: optional fails imds-v2-required', async () => {
    const run = await runBin([
      'scan',
      join(dir, 'merge'),
      '--format',
      'json',
      '--fail-on',
      'medium',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    expect(imdsFinding(run.stdout, 'merged')).toMatchObject({
      status: 'fail',
      severity: 'medium',
      location: { path: 'spec.metadataOptions.httpTokens' },
    });
  });

  it('scans UTF-16LE and UTF-16BE files with a byte order mark, found in a directory', async () => {
    const trees = tempTree({});
    try {
      writeFileSync(
        join(trees.dir, 'le.yaml'),
        withBom([0xff, 0xfe], Buffer.from(nodeClass('le', ''), 'utf16le'))
      );
      writeFileSync(
        join(trees.dir, 'be.yaml'),
        withBom(
          [0xfe, 0xff],
          Buffer.from(
            nodeClass('be', '  metadataOptions:\n    httpTokens: optional\n'),
            'utf16le'
          ).swap16()
        )
      );
      const run = await runBin(['scan', trees.dir, '--format', 'json', '--fail-on', 'medium']);
      expect(run.stderr).toBe('');
      const report = ReportContract.parse(JSON.parse(run.stdout));
      expect(report.summary.nodeClasses).toBe(2);
      expect(imdsFinding(run.stdout, 'be')?.status).toBe('fail');
      expect(imdsFinding(run.stdout, 'le')?.status).toBe('pass');
      expect(run.code).toBe(1);
    } finally {
      trees.cleanup();
    }
  });

  it('exits 2 with a clear message on an empty standard input', async () => {
    const run = await runBin(['scan', '-', '--format', 'json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'nodeclass-scan: <stdin>: is empty: no manifest to scan (did the command before the pipe fail?)\n'
    );
    expect(ReportContract.parse(JSON.parse(run.stdout)).summary.nodeClasses).toBe(0);
  });

  it('reads UTF-16 on standard input', async () => {
    const run = await runBin(
      ['scan', '-', '--format', 'json', '--fail-on', 'none'],
      withBom([0xff, 0xfe], Buffer.from(nodeClass('piped', ''), 'utf16le'))
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(ReportContract.parse(JSON.parse(run.stdout)).summary.nodeClasses).toBe(1);
  });
});

describe('nodeclass-scan reads YAML as Kubernetes does (in process)', () => {
  const scan = (stdin: string, ...flags: string[]) =>
    runCliCaptured(['scan', '-', '--format', 'json', ...flags], { stdin });

  it('reads yes/off as booleans: no schema failure for detailedMonitoring and associatePublicIPAddress', async () => {
    const run = await scan(
      nodeClass('bools', '  detailedMonitoring: yes\n  associatePublicIPAddress: off\n'),
      '--fail-on',
      'none'
    );
    expect(run.stderr).toBe('');
    const report = ReportContract.parse(JSON.parse(run.stdout));
    const schema = report.findings.find((finding) => finding.checkId === 'nodeclass-schema-valid');
    expect(schema?.status).toBe('pass');
  });

  it('takes the last of duplicate keys, as kubectl apply does', async () => {
    const optionalLast = await scan(
      nodeClass('dup', '  metadataOptions:\n    httpTokens: required\n    httpTokens: optional\n'),
      '--fail-on',
      'medium'
    );
    expect(optionalLast.code).toBe(1);
    expect(imdsFinding(optionalLast.stdout, 'dup')?.status).toBe('fail');
    const requiredLast = await scan(
      nodeClass('dup', '  metadataOptions:\n    httpTokens: optional\n    httpTokens: required\n'),
      '--fail-on',
      'medium'
    );
    expect(imdsFinding(requiredLast.stdout, 'dup')?.status).toBe('pass');
    expect(requiredLast.code).toBe(0);
  });

  it('exits 2 on standard input holding only comments, and on a file kubectl refuses', async () => {
    const comments = await scan('# nothing here\n---\n');
    expect(comments.code).toBe(2);
    expect(comments.stderr).toContain('<stdin>: holds no manifest');
    const nan = await scan(nodeClass('nan', '  tags: {weight: .nan}\n'));
    expect(nan.code).toBe(2);
    expect(nan.stderr).toContain('<stdin>:1: document 1 cannot be read: it holds .nan or .inf');
  });
});
