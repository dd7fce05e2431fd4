import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ReportContract } from './support/report-contract.js';
import { tempTree } from './support/run-cli.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', '..', 'lambda', 'cli', 'nodeclass-scan.js');

const { dir, cleanup } = tempTree({
  'nodeclasses/arn.yaml': `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: arn-profile
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`,
  'nodeclasses/unrelated.json':
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}',
  'annotated/arn.yaml': `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: arn-profile
  annotations:
    ignore-check.nodeclass-scanner/instance-profile-is-name: "old chart; expires=2099-12-31"
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`,
});
afterAll(cleanup);

describe('nodeclass-scan bin (child process)', () => {
  it('scans a directory and prints the JSON report, exiting 1 on a critical finding', async () => {
    // Act
    const outcome = await run('node', [BIN, 'scan', join(dir, 'nodeclasses'), '--format', 'json'], {
      env: { ...process.env, NO_COLOR: '1' },
    }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error
    );
    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('');
    const report = ReportContract.parse(JSON.parse(outcome.stdout));
    expect(report.summary.nodeClasses).toBe(1);
    expect(
      report.findings.find((finding) => finding.checkId === 'instance-profile-is-name')
    ).toMatchObject({ status: 'fail', severity: 'critical', resource: { name: 'arn-profile' } });
  });

  it('--no-annotation-suppression: an annotated failure fails the build again, saying it was refused', async () => {
    // Act
    const exec = (args: string[]) =>
      run('node', [BIN, 'scan', join(dir, 'annotated'), '--format', 'json', ...args], {
        env: { ...process.env, NO_COLOR: '1' },
      }).then(
        (result) => ({ code: 0, stdout: result.stdout, stderr: result.stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error
      );
    const trusted = await exec([]);
    const refused = await exec(['--no-annotation-suppression']);
    // Assess
    const profileFinding = (stdout: string) =>
      ReportContract.parse(JSON.parse(stdout)).findings.find(
        (finding) => finding.checkId === 'instance-profile-is-name'
      );
    expect(trusted.code).toBe(0);
    expect(profileFinding(trusted.stdout)).toMatchObject({
      status: 'suppressed',
      suppression: { reason: 'old chart', source: 'annotation', expires: '2099-12-31' },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('');
    expect(profileFinding(refused.stdout)?.message).toContain(
      'refused: --no-annotation-suppression does not let annotations suppress instance-profile-is-name'
    );
  });

  it('exits quietly with the scan exit code when the reader closes the pipe early (| head)', async () => {
    // Prepare
    const world = join(import.meta.dirname, '..', '..', 'examples', 'world.json');
    const child = spawn('node', [BIN, 'scan', '--world', world, '--format', 'json'], {
      env: { ...process.env, NO_COLOR: '1' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    // Act: read one chunk, then close our end as `head -1` would.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // Assess
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(1);
  });
});
