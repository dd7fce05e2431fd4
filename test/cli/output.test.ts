// Output that reads well: the table wraps to the terminal, IAM policies are blocks, filters,
// -o/--output, --quiet, case-insensitive choices and one counting rule for table and JSON.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { visibleWidth } from '../../lambda/cli/formats/wrap.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from '../../lambda/cli/main.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const REPO = join(import.meta.dirname, '..', '..');
const BIN = join(REPO, 'lambda', 'cli', 'nodeclass-scan.js');
const EXAMPLES = join(REPO, 'examples');
const WORLD = join(EXAMPLES, 'world.json');

const tree = useTempTrees();

/** The real CLI in a child process, from the repository root, as a user runs it. */
async function bin(args: readonly string[], env: Record<string, string> = {}) {
  return promisify(execFile)('node', [BIN, ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: '1', ...env },
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error
  );
}

/** Lines wider than `width` that are not one unbreakable token (a URL, an ARN) after an indent. */
function overlong(text: string, width: number): string[] {
  return text.split('\n').filter((line) => [...line].length > width && /\S\s+\S/.test(line.trim()));
}

function json(stdout: string): ScanReport {
  return JSON.parse(stdout) as ScanReport;
}

describe('the table fits the terminal', () => {
  it('COLUMNS=80 nodeclass-scan scan examples/: no line over 80 but unbreakable tokens', async () => {
    // Act
    const run = await bin(['scan', 'examples/'], { COLUMNS: '80' });
    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(overlong(run.stdout, 80)).toEqual([]);
    // Wrapped, not cut: the long ARN still stands whole on a line of its own.
    expect(run.stdout).toMatch(
      /\n {17}"arn:aws:iam::111122223333:instance-profile\/KarpenterNodeInstanceProfile-demo",\n/
    );
    expect(run.stdout).toMatch(/\nSummary: .*\n {9}\S/);
  });

  it('holds for the example world too (permissions, IAM policies, NodePools)', async () => {
    const run = await bin(['scan', '--world', 'examples/world.json'], { COLUMNS: '80' });
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(overlong(run.stdout, 80)).toEqual([]);
  });

  it("uses the terminal's width without COLUMNS, COLUMNS before it, and 100 when piped", async () => {
    // Act
    const terminal = await runCliCaptured(['scan', EXAMPLES], { tty: true, columns: 60 });
    const columns = await runCliCaptured(['scan', EXAMPLES], {
      tty: true,
      columns: 60,
      env: { COLUMNS: '120' },
    });
    const piped = await runCliCaptured(['scan', EXAMPLES]);
    // Assess
    const widths = (text: string) =>
      text
        .split('\n')
        .filter((line) => /\S\s+\S/.test(line.trim()))
        .map(visibleWidth);
    expect(Math.max(...widths(terminal.stdout))).toBeLessThanOrEqual(60);
    expect(Math.max(...widths(columns.stdout))).toBeGreaterThan(100);
    expect(Math.max(...widths(columns.stdout))).toBeLessThanOrEqual(120);
    expect(Math.max(...widths(piped.stdout))).toBeGreaterThan(80);
    expect(Math.max(...widths(piped.stdout))).toBeLessThanOrEqual(100);
  });

  it('continues wrapped text under its start: messages and fixes at their column (hanging indents)', async () => {
    const run = await runCliCaptured(['scan', EXAMPLES, '--only', 'imds-v2-required'], {
      env: { COLUMNS: '80' },
    });
    const lines = run.stdout.split('\n');
    const first = lines.findIndex((line) => line.includes('metadataOptions.httpTokens'));
    expect(lines[first]).toMatch(/^ {2}MEDIUM {3}fail {2}imds-v2-required {2}\S/);
    expect(lines[first + 1]).toMatch(/^ {17}\S/);
    const fix = lines.findIndex((line) => line.startsWith('                 fix: '));
    expect(lines[fix + 1]).toMatch(/^ {22}\S/);
  });
});

describe('IAM policies in remediations', () => {
  it('are indented JSON blocks that parse back to the policy the finding carries', async () => {
    // Act
    const table = await runCliCaptured(
      ['scan', '--world', WORLD, '--only', 'controller-can-pass-node-role'],
      { env: { COLUMNS: '80' } }
    );
    const report = json(
      (
        await runCliCaptured([
          'scan',
          '--world',
          WORLD,
          '--only',
          'controller-can-pass-node-role',
          '--format',
          'json',
        ])
      ).stdout
    );
    // Assess
    const lines = table.stdout.split('\n');
    const open = lines.findIndex((line) => /^ {22}\{$/.test(line));
    const close = lines.findIndex((line, index) => index > open && /^ {22}\}$/.test(line));
    expect(open).toBeGreaterThan(0);
    expect(lines[open - 1]).toMatch(/if it has one\):$/);
    const block = lines.slice(open, close + 1);
    expect(block.every((line) => line.startsWith(' '.repeat(22)))).toBe(true);
    const policy = report.findings.find((finding) => finding.status === 'fail')?.evidence
      .remediationPolicy;
    expect(policy).toBeDefined();
    expect(JSON.parse(block.join('\n'))).toEqual(policy);
    expect(block).toContain('                        "Version": "2012-10-17",');
    expect(table.stdout).not.toContain('{"Version"');
  });
});

describe('--severity and --status: what is shown, not what counts', () => {
  it('shows only the matching findings; the summary and --fail-on still count the whole scan', async () => {
    // Act
    const all = await runCliCaptured(['scan', EXAMPLES]);
    const shown = await runCliCaptured(['scan', EXAMPLES, '--severity', 'LOW', '--status', 'Fail']);
    const nothing = await runCliCaptured([
      'scan',
      EXAMPLES,
      '--severity',
      'info',
      '--status',
      'fail',
    ]);
    // Assess
    expect(shown.code).toBe(EXIT_FINDINGS);
    expect(nothing.code).toBe(EXIT_FINDINGS);
    expect(shown.stdout).toMatch(/ {2}LOW {6}fail {2}ami-selector-pinned/);
    const findings = shown.stdout.slice(0, shown.stdout.lastIndexOf('\nSummary: '));
    expect(findings).not.toMatch(/CRITICAL|HIGH|MEDIUM|notice|^ {2}\d+ passed/m);
    const summary = (text: string) =>
      text.slice(text.lastIndexOf('\nSummary: ')).replace(/\n +/g, ' ');
    expect(summary(shown.stdout)).toContain(
      summary(all.stdout).replace(/\n$/, ' · 3 of 242 findings shown (severity low; status fail)\n')
    );
    expect(nothing.stdout).toMatch(/^No findings to show\.\n/);
  });

  it('filters the findings of every format; JSON keeps the summary of the whole scan', async () => {
    // Act
    const all = json((await runCliCaptured(['scan', EXAMPLES, '--format', 'json'])).stdout);
    const run = await runCliCaptured([
      'scan',
      EXAMPLES,
      '--format',
      'json',
      '--severity',
      'critical,high',
      '--status',
      'fail,error',
    ]);
    const sarif = await runCliCaptured([
      'scan',
      EXAMPLES,
      '--format',
      'sarif',
      '--severity',
      'low',
    ]);
    // Assess
    const shown = json(run.stdout);
    expect(shown.findings.length).toBeGreaterThan(0);
    expect(
      shown.findings.every(
        (f) => ['critical', 'high'].includes(f.severity) && ['fail', 'error'].includes(f.status)
      )
    ).toBe(true);
    expect(shown.findings.length).toBe(
      all.findings.filter(
        (f) => ['critical', 'high'].includes(f.severity) && ['fail', 'error'].includes(f.status)
      ).length
    );
    expect(shown.summary).toEqual(all.summary);
    const results = (JSON.parse(sarif.stdout) as { runs: { results: { level: string }[] }[] })
      .runs[0]?.results;
    // Low findings are SARIF notes: nothing else is left.
    expect(results?.length).toBeGreaterThan(0);
    expect(new Set(results?.map((result) => result.level))).toEqual(new Set(['note']));
  });

  it('refuses values that are no severity or status, suggesting the closest', async () => {
    const run = await runCliCaptured(['scan', EXAMPLES, '--status', 'failed']);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stderr).toContain(
      '"failed" is not one of fail, error, notice, pass, not-applicable, suppressed (did you mean "fail"?)'
    );
  });
});

describe('-o/--output FILE', () => {
  it.each([
    ['table', (text: string) => expect(text).toMatch(/\nSummary: /)],
    ['json', (text: string) => expect(json(text).version).toBe(1)],
    ['sarif', (text: string) => expect(JSON.parse(text).version).toBe('2.1.0')],
    ['junit', (text: string) => expect(text).toMatch(/^<\?xml/)],
    ['asff', (text: string) => expect(Array.isArray(JSON.parse(text))).toBe(true)],
  ])('writes the %s report to the file, nothing to stdout', async (format, check) => {
    // Prepare
    const dir = tree();
    const file = join(dir, `report.${format}`);
    // Act
    const run = await runCliCaptured([
      'scan',
      EXAMPLES,
      '--format',
      format,
      '-o',
      file,
      '--region',
      'us-east-1',
      '--aws-account-id',
      '111122223333',
    ]);
    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    expect(run.stdout).toBe('');
    const written = readFileSync(file, 'utf8');
    check(written);
    expect(written).not.toContain('\u001b');
  });

  it('writes - to stdout, and an unwritable file is a usage error on one line', async () => {
    const stdout = await runCliCaptured(['scan', EXAMPLES, '--output', '-', '--format', 'json']);
    expect(json(stdout.stdout).version).toBe(1);
    const dir = tree();
    const run = await runCliCaptured(['scan', EXAMPLES, '-o', join(dir, 'missing', 'r.json')]);
    expect(run.code).toBe(EXIT_USAGE);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `nodeclass-scan: --output ${join(dir, 'missing', 'r.json')}: cannot write (ENOENT)\n`
    );
  });
});

describe('--quiet', () => {
  it('prints findings and errors only: no pass counts, no summary, no clean resources', async () => {
    // Act
    const quiet = await runCliCaptured(['scan', EXAMPLES, '-q']);
    // Assess
    expect(quiet.code).toBe(EXIT_FINDINGS);
    expect(quiet.stdout).toContain('CRITICAL fail');
    expect(quiet.stdout).not.toMatch(/Summary:|^ {2}\d+ passed|EC2NodeClass default-al2023/m);
    const clean = await runCliCaptured([
      'scan',
      join(EXAMPLES, 'nodeclasses', 'good-al2023.yaml'),
      '--quiet',
    ]);
    expect(clean).toEqual({ code: EXIT_OK, stdout: '', stderr: '' });
  });

  it('keeps expired-rule warnings off stderr', async () => {
    const dir = tree({
      '.nodeclass-scanner.yaml':
        'ignore:\n  - check: imds-v2-required\n    resource: "*/*/*"\n    reason: old\n    expires: 2020-01-01\n',
    });
    const loud = await runCliCaptured(['scan', EXAMPLES], { cwd: dir });
    const quiet = await runCliCaptured(['scan', EXAMPLES, '--quiet'], { cwd: dir });
    expect(loud.stderr).toContain('expired 2020-01-01');
    expect(quiet.stderr).toBe('');
  });
});

describe('choices in any case', () => {
  it('takes --fail-on HIGH, --format JSON and checks --format Json', async () => {
    const failOn = await runCliCaptured([
      'scan',
      EXAMPLES,
      '--fail-on',
      'CRITICAL',
      '--only',
      'ami-selector-pinned',
    ]);
    const format = await runCliCaptured([
      'scan',
      EXAMPLES,
      '--format',
      'JSON',
      '--fail-on',
      'NONE',
    ]);
    const catalog = await runCliCaptured(['checks', '--format', 'Json']);
    expect(failOn.code).toBe(EXIT_OK);
    expect(format.code).toBe(EXIT_OK);
    expect(json(format.stdout).version).toBe(1);
    expect(Array.isArray(JSON.parse(catalog.stdout))).toBe(true);
    const typo = await runCliCaptured(['scan', EXAMPLES, '--format', 'sarf']);
    expect(typo.code).toBe(EXIT_USAGE);
    expect(typo.stderr).toContain('(did you mean "sarif"?)');
  });
});

describe('one counting rule for the table and JSON', () => {
  it.each([
    ['manifests', [EXAMPLES]],
    ['the world', ['--world', WORLD]],
  ])(
    'the table summary of %s says what summary.byStatus and failuresBySeverity say',
    async (_name, args) => {
      // Act
      const table = await runCliCaptured(['scan', ...args], { env: { COLUMNS: '1000' } });
      const report = json((await runCliCaptured(['scan', ...args, '--format', 'json'])).stdout);
      // Assess
      const summary = table.stdout.slice(table.stdout.lastIndexOf('\nSummary: ') + 1);
      for (const [status, count] of Object.entries(report.summary.byStatus)) {
        const word = status === 'notice' && count !== 1 ? 'notices' : status;
        if (count === 0 && (status === 'suppressed' || status === 'notice')) {
          expect(summary).not.toContain(` ${status}`);
          continue;
        }
        expect(summary).toMatch(new RegExp(`[ (]${count} ${word}\\b`));
      }
      for (const [severity, count] of Object.entries(report.summary.failuresBySeverity)) {
        if (count > 0) expect(summary).toContain(`${count} ${severity}`);
      }
      // Follow-ons are counted in their status and named there, never added on top.
      const followOns = report.findings.filter((f) => f.causedBy !== undefined);
      const errors = followOns.filter((f) => f.status === 'error').length;
      if (errors > 0)
        expect(summary).toContain(`${report.summary.byStatus.error} error (${errors} follow-on)`);
      expect(summary).not.toMatch(/, \d+ follow-on,/);
    }
  );
});
