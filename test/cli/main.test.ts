import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const ONLY = ['--only', 'instance-profile-is-name'];

function nodeClass(name: string, spec: string): string {
  return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ${name}
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
${spec}`;
}

const GOOD = nodeClass('good', '  instanceProfile: KarpenterNodeInstanceProfile\n');
const ARN = nodeClass(
  'arn',
  '  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode\n'
);

const tree = useTempTrees();

function jsonReport(stdout: string): ScanReport {
  return ReportContract.parse(JSON.parse(stdout)) as ScanReport;
}

describe('nodeclass-scan scan: exit codes', () => {
  it('exits 0 when nothing is at or above --fail-on', async () => {
    const dir = tree({ 'good.yaml': GOOD });
    const run = await runCliCaptured(['scan', dir, ...ONLY]);
    expect(run.code).toBe(EXIT_OK);
    expect(run.stderr).toBe('');
  });

  it('exits 1 on a finding at or above the default threshold (high)', async () => {
    const dir = tree({ 'arn.yaml': ARN });
    const run = await runCliCaptured(['scan', dir, ...ONLY]);
    expect(run.code).toBe(EXIT_FINDINGS);
  });

  it.each([
    ['none', EXIT_OK],
    ['critical', EXIT_FINDINGS],
    ['info', EXIT_FINDINGS],
  ])('honours --fail-on %s', async (failOn, code) => {
    const dir = tree({ 'arn.yaml': ARN });
    const run = await runCliCaptured(['scan', dir, ...ONLY, '--fail-on', failOn]);
    expect(run.code).toBe(code);
  });

  it.each([
    ['an unknown flag', ['--bogus'], /unknown option '--bogus'/],
    ['a bad --format', ['--format', 'xml'], /argument 'xml' is invalid/],
    ['a bad --fail-on', ['--fail-on', 'severe'], /argument 'severe' is invalid/],
    [
      'an unknown --only id',
      ['--only', 'no-such-check'],
      /--only: unknown check id "no-such-check"/,
    ],
    ['an unknown --skip id', ['--skip', 'nope'], /--skip: unknown check id "nope"/],
    [
      'a bad --karpenter-version',
      ['--karpenter-version', 'banana'],
      /--karpenter-version "banana"/,
    ],
    [
      '--kubernetes-version without --aws (the version would be ignored)',
      ['--kubernetes-version', '1.33'],
      /--kubernetes-version applies to manifests scanned with --aws or --profile only/,
    ],
  ])('exits 2 on %s, explaining on stderr and printing no report', async (_, flags, message) => {
    const dir = tree({ 'good.yaml': GOOD });
    const run = await runCliCaptured(['scan', dir, ...flags]);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  it.each([
    ['--controller-role', 'prod=arn:aws:iam::111122223333:role/KarpenterController'],
    ['--dry-run-role', 'arn:aws:iam::111122223333:role/DryRun'],
  ])(
    'exits 2 for %s on manifests alone (no permission check would use it)',
    async (flag, value) => {
      // Prepare
      const dir = tree({ 'good.yaml': GOOD });
      // Act
      const run = await runCliCaptured(['scan', dir, flag, value]);
      // Assess
      expect(run.code).toBe(EXIT_USAGE);
      expect(run.stderr).toContain(flag);
    }
  );

  it('exits 2 when there is nothing to scan', async () => {
    const run = await runCliCaptured(['scan']);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain('nothing to scan');
  });

  it('exits 2 on an unknown command or none at all', async () => {
    expect((await runCliCaptured(['scna'])).code).toBe(EXIT_USAGE);
    expect((await runCliCaptured([])).code).toBe(EXIT_USAGE);
  });

  it('exits 0 for --help and --version', async () => {
    const help = await runCliCaptured(['scan', '--help']);
    expect(help.code).toBe(EXIT_OK);
    expect(help.stdout).toContain('--fail-on <severity>');
    const version = await runCliCaptured(['--version']);
    expect(version.code).toBe(EXIT_OK);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('exits 2 for a missing path, naming it, and still reports the other paths', async () => {
    const dir = tree({ 'arn.yaml': ARN });
    const missing = join(dir, 'typo.yaml');
    const run = await runCliCaptured(['scan', missing, dir, ...ONLY, '--format', 'json']);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toBe(`nodeclass-scan: ${missing}: no such file or directory\n`);
    const report = jsonReport(run.stdout);
    expect(report.findings.map((f) => [f.resource.name, f.status])).toEqual([['arn', 'fail']]);
    expect(report.summary.inputErrors).toEqual([
      { source: missing, message: 'no such file or directory' },
    ]);
  });

  it('exits 2 for an unreadable file next to a good one, with the good file still reported', async () => {
    const dir = tree({ 'arn.yaml': ARN });
    symlinkSync(join(dir, 'gone.yaml'), join(dir, 'broken.yaml'));
    const run = await runCliCaptured(['scan', dir, ...ONLY, '--format', 'json']);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain(`${join(dir, 'broken.yaml')}: no such file or directory`);
    expect(jsonReport(run.stdout).findings.map((f) => f.resource.name)).toEqual(['arn']);
  });

  it('exits 2 for a YAML syntax error, naming the file and line', async () => {
    const dir = tree({
      'bad.yaml': 'apiVersion: v1\nkind: [oops\nmetadata: {}\n',
      'good.yaml': GOOD,
    });
    const run = await runCliCaptured(['scan', dir, ...ONLY]);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toMatch(
      new RegExp(
        `^nodeclass-scan: ${join(dir, 'bad.yaml')}:[2-4]: document 1 is not valid YAML/JSON`
      )
    );
    expect(run.stdout).toContain('EC2NodeClass good');
  });

  it('reads manifests from standard input with "-"', async () => {
    const run = await runCliCaptured(['scan', '-', ...ONLY, '--format', 'json'], { stdin: ARN });
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(jsonReport(run.stdout).findings[0]?.resource.name).toBe('arn');
  });
});

describe('nodeclass-scan scan: output', () => {
  it('prints the JSON report contract', async () => {
    const dir = tree({ 'arn.yaml': ARN, 'good.yaml': GOOD });
    const run = await runCliCaptured(['scan', dir, '--format', 'json']);
    const report = jsonReport(run.stdout);
    expect(report.scannedAt).toBe('2026-11-01T12:00:00.000Z');
    expect(report.summary.nodeClasses).toBe(2);
  });

  it('points SARIF results at the manifest line, relative to the working directory', async () => {
    const dir = tree({ 'k8s/arn.yaml': ARN });
    const run = await runCliCaptured(['scan', join(dir, 'k8s'), ...ONLY, '--format', 'sarif'], {
      cwd: dir,
    });
    const log = JSON.parse(run.stdout);
    expect(log.runs[0].results[0].locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: 'k8s/arn.yaml' },
      region: { startLine: 14, startColumn: 3 },
    });
  });

  it('colours the table only on a terminal without NO_COLOR', async () => {
    const dir = tree({ 'arn.yaml': ARN });
    const plain = await runCliCaptured(['scan', dir, ...ONLY]);
    const tty = await runCliCaptured(['scan', dir, ...ONLY], { tty: true });
    const noColor = await runCliCaptured(['scan', dir, ...ONLY], {
      tty: true,
      env: { NO_COLOR: '1' },
    });
    expect(plain.stdout).not.toContain('\u001b[');
    expect(tty.stdout).toContain('\u001b[');
    expect(noColor.stdout).not.toContain('\u001b[');
  });
});

describe('nodeclass-scan checks', () => {
  it('lists the catalog as JSON', async () => {
    const run = await runCliCaptured(['checks', '--format', 'json']);
    expect(run.code).toBe(EXIT_OK);
    expect(JSON.parse(run.stdout)).toEqual(
      CHECKS.map(({ id, severity, group, title, inputs, rationale, remediation, references }) => ({
        id,
        severity,
        group,
        title,
        inputs,
        rationale,
        remediation,
        references,
      }))
    );
  });

  it('lists the catalog as a table with one row per check', async () => {
    const run = await runCliCaptured(['checks']);
    expect(run.code).toBe(EXIT_OK);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^ID\s+SEVERITY\s+GROUP\s+INPUTS\s+TITLE\s+REFERENCES$/);
    for (const check of CHECKS) {
      expect(
        lines.some((line) => line.startsWith(`${check.id} `) && line.includes(check.title))
      ).toBe(true);
    }
  });

  it('rejects formats it does not offer', async () => {
    expect((await runCliCaptured(['checks', '--format', 'sarif'])).code).toBe(EXIT_USAGE);
  });
});
