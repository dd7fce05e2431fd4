// The repository's GitHub Action (action.yml), run step by step as a runner would: the package
// installed from the packed tarball (offline, from the npm cache), the repository's examples
// scanned in a temporary workspace, the SARIF report validated, the exit status following fail-on.
import {
  chmodSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Log } from 'sarif';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sarifValidator } from '../cli/support/sarif-schema.js';
import { consumerEnv } from '../package/consumer.js';
import { packedTarball, REPO_ROOT } from '../package/pack.js';
import {
  type Action,
  type ActionRun,
  loadAction,
  runCompositeAction,
  type StepResult,
} from './composite-action.js';

const action: Action = loadAction(join(REPO_ROOT, 'action.yml'));
const packageVersion = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

const scratch: string[] = [];
function temporaryDirectory(prefix: string): string {
  const directory = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(directory);
  return directory;
}
afterAll(() => {
  for (const directory of scratch) rmSync(directory, { recursive: true, force: true });
});

/** A job's checkout: the repository's examples, plus whatever a test adds. */
function workspace(files: Readonly<Record<string, string>> = {}): string {
  const directory = temporaryDirectory('action-workspace-');
  cpSync(join(REPO_ROOT, 'examples'), join(directory, 'examples'), { recursive: true });
  for (const [path, text] of Object.entries(files)) writeFileSync(join(directory, path), text);
  return directory;
}

// npm reads its configuration from the environment: installs come from the local cache only.
const runnerEnv = () => consumerEnv({ npm_config_offline: 'true' });

const step = (run: ActionRun, name: string): StepResult => {
  const found = run.steps.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no step ${name}`);
  return found;
};
/** `${{ path }}` as written in action.yml. */
const expression = (path: string) => `\${{ ${path} }}`;
const INSTALL = 'Install nodeclass-scanner';
const SCAN = 'Scan';
const UPLOAD = 'Upload SARIF to code scanning';
const FAIL = 'Fail on findings at or above fail-on';

function sarifAt(path: string): Log {
  const log = JSON.parse(readFileSync(path, 'utf8')) as Log;
  const validate = sarifValidator();
  expect(validate(log), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
  expect(log.version).toBe('2.1.0');
  return log;
}

describe('action.yml', () => {
  it('builds the package from its own checkout by default, fetching nothing by name', () => {
    // Prepare: an npm that records its calls; `pack` leaves a tarball, `install` a scanner.
    const actionPath = temporaryDirectory('action-path-');
    const bin = temporaryDirectory('fake-npm-');
    const calls = join(bin, 'calls.jsonl');
    writeFileSync(
      join(bin, 'npm'),
      [
        '#!/usr/bin/env node',
        "const { appendFileSync, mkdirSync, writeFileSync, chmodSync } = require('node:fs');",
        "const { join } = require('node:path');",
        'const args = process.argv.slice(2);',
        `appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ cwd: process.cwd(), args }) + '\\n');`,
        "if (args[0] === 'pack') writeFileSync(join(args[args.indexOf('--pack-destination') + 1], 'nodeclass-scanner-9.9.9.tgz'), '');",
        "if (args[0] === 'install') {",
        "  const dir = join(args[args.indexOf('--prefix') + 1], 'node_modules', '.bin');",
        '  mkdirSync(dir, { recursive: true });',
        "  writeFileSync(join(dir, 'nodeclass-scan'), '#!/bin/sh\\necho 9.9.9\\n');",
        "  chmodSync(join(dir, 'nodeclass-scan'), 0o755);",
        '}',
      ].join('\n')
    );
    chmodSync(join(bin, 'npm'), 0o755);
    const env = runnerEnv();
    // Act
    const run = runCompositeAction(action, {
      workspace: workspace(),
      env: { ...env, PATH: `${bin}:${env.PATH ?? ''}`, GITHUB_ACTION_PATH: actionPath },
      with: {},
    });
    // Assess
    expect(action.inputs.package?.default).toBe('');
    expect(step(run, INSTALL).outcome, step(run, INSTALL).stderr).toBe('success');
    const recorded = readFileSync(calls, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { cwd: string; args: string[] });
    expect(recorded.map((call) => call.args[0])).toEqual(['ci', 'pack', 'install']);
    expect(recorded[0]?.cwd).toBe(realpathSync(actionPath));
    expect(recorded[2]?.args.at(-1)).toMatch(
      /\/nodeclass-scanner\/nodeclass-scanner-9\.9\.9\.tgz$/
    );
  });

  it('passes every input through the environment, never spliced into a script', () => {
    const steps = action.runs.steps;
    for (const candidate of steps) expect(candidate.run ?? '').not.toContain('${{');
    const referenced = JSON.stringify(steps);
    for (const input of Object.keys(action.inputs)) {
      expect(referenced, input).toContain(`inputs.${input}`);
    }
  });

  it('uploads with upload-sarif whatever the scan found, when a report was written', () => {
    const upload = action.runs.steps.find((candidate) => candidate.name === UPLOAD);
    expect(upload?.uses).toMatch(/^github\/codeql-action\/upload-sarif@v\d+$/);
    expect(upload?.if).toMatch(/^always\(\) && /);
    expect(upload?.with).toEqual({
      sarif_file: expression('steps.scan.outputs.sarif-file'),
      category: expression('inputs.category'),
    });
  });
});

describe('the action run against a stand-in scanner', () => {
  let standIn: string;

  beforeAll(() => {
    // A package whose nodeclass-scan records its arguments and writes a minimal report.
    standIn = temporaryDirectory('stand-in-scanner-');
    writeFileSync(
      join(standIn, 'package.json'),
      JSON.stringify({
        name: 'stand-in-scanner',
        version: '1.0.0',
        bin: { 'nodeclass-scan': 'cli.js' },
      })
    );
    writeFileSync(
      join(standIn, 'cli.js'),
      [
        '#!/usr/bin/env node',
        "const { appendFileSync } = require('node:fs');",
        "if (process.argv[2] === '--version') { console.log('1.0.0'); process.exit(0); }",
        "appendFileSync(process.env.ARGS_FILE, JSON.stringify(process.argv.slice(2)) + '\\n');",
        'console.log(\'{"version":"2.1.0","runs":[]}\');',
        'process.exit(Number(process.env.STAND_IN_EXIT ?? 0));',
      ].join('\n')
    );
  });

  const argsOf = (directory: string) =>
    readFileSync(join(directory, 'args.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);

  it('turns each input into its flag, paths split on spaces and lines, globs left alone', () => {
    // Prepare
    const directory = workspace();
    // Act
    const run = runCompositeAction(action, {
      workspace: directory,
      env: { ...runnerEnv(), ARGS_FILE: join(directory, 'args.jsonl') },
      with: {
        package: standIn,
        paths: 'k8s/prod   k8s/*.yaml\nrendered/all.yaml',
        world: 'world.json',
        region: 'us-gov-west-1',
        'karpenter-version': '1.3.0',
        'fail-on': 'medium',
        config: 'scan.yaml',
        baseline: 'baseline.json',
      },
    });
    // Assess
    expect(step(run, INSTALL).outcome, step(run, INSTALL).stderr).toBe('success');
    expect(argsOf(directory)).toEqual([
      [
        'scan',
        '--format',
        'sarif',
        '--fail-on',
        'medium',
        'k8s/prod',
        'k8s/*.yaml',
        'rendered/all.yaml',
        '--world',
        'world.json',
        '--region',
        'us-gov-west-1',
        '--karpenter-version',
        '1.3.0',
        '--config',
        'scan.yaml',
        '--baseline',
        'baseline.json',
      ],
    ]);
    expect(run.conclusion).toBe('success');
  });

  it('gives only the defaults when no optional input is set', () => {
    const directory = workspace();
    runCompositeAction(action, {
      workspace: directory,
      env: { ...runnerEnv(), ARGS_FILE: join(directory, 'args.jsonl') },
      with: { package: standIn },
    });
    expect(argsOf(directory)).toEqual([['scan', '--format', 'sarif', '--fail-on', 'high', '.']]);
  });

  it('skips the Node.js set-up unless a version is asked for, and passes it on', () => {
    const directory = workspace();
    const env = { ...runnerEnv(), ARGS_FILE: join(directory, 'args.jsonl') };
    const without = runCompositeAction(action, {
      workspace: directory,
      env,
      with: { package: standIn },
    });
    const withNode = runCompositeAction(action, {
      workspace: directory,
      env,
      with: { package: standIn, 'node-version': '24' },
    });
    expect(step(without, 'Set up Node.js').outcome).toBe('skipped');
    expect(step(withNode, 'Set up Node.js')).toMatchObject({
      outcome: 'not-run',
      with: { 'node-version': '24' },
    });
  });
});

// Each run installs the package with npm, as a runner does: seconds each on a busy machine.
describe('the action run with the packed package on the repository examples', {
  timeout: 120_000,
}, () => {
  let tarball: string;

  beforeAll(async () => {
    tarball = await packedTarball();
  }, 600_000);

  const run = (directory: string, inputs: Record<string, string>) =>
    runCompositeAction(action, {
      workspace: directory,
      env: runnerEnv(),
      with: { package: tarball, ...inputs },
    });

  it('writes SARIF 2.1.0, hands it to upload-sarif and fails the job on findings at or above high', () => {
    // Prepare
    const directory = workspace();
    // Act
    const result = run(directory, { paths: 'examples/nodeclasses' });
    // Assess
    expect(step(result, INSTALL).outcome, step(result, INSTALL).stderr).toBe('success');
    expect(step(result, INSTALL).stdout).toContain(packageVersion);
    expect(step(result, SCAN).outcome, step(result, SCAN).stderr).toBe('success');
    expect(result.outputs).toEqual({ 'exit-code': '1', 'sarif-file': 'nodeclass-scan.sarif' });
    const log = sarifAt(join(directory, 'nodeclass-scan.sarif'));
    const results = log.runs[0]?.results ?? [];
    expect(results.length).toBeGreaterThan(5);
    // Relative to the workspace, as code scanning needs; cluster-level findings on a pseudo-path.
    const uris = new Set(
      results.map((r) => r.locations?.[0]?.physicalLocation?.artifactLocation?.uri)
    );
    expect(uris).toContain('examples/nodeclasses/imds.yaml');
    for (const uri of uris) {
      expect(uri).toMatch(/^(examples\/nodeclasses\/[\w-]+\.(yaml|json)|clusters\/cluster\.yaml)$/);
    }
    expect(step(result, UPLOAD)).toMatchObject({
      outcome: 'not-run',
      with: { sarif_file: 'nodeclass-scan.sarif', category: 'nodeclass-scan' },
    });
    expect(step(result, FAIL)).toMatchObject({ outcome: 'failure', exitCode: 1 });
    expect(step(result, FAIL).stdout).toContain(
      '::error title=nodeclass-scan::findings at or above high'
    );
    expect(result.conclusion).toBe('failure');
  });

  it('passes the same scan with fail-on none, writing the report where asked, not uploading it', () => {
    // Prepare
    const directory = workspace();
    // Act
    const result = run(directory, {
      paths: 'examples/nodeclasses',
      'fail-on': 'none',
      'sarif-file': 'reports/nodeclass.sarif',
      'upload-sarif': 'false',
    });
    // Assess
    expect(result.outputs).toEqual({ 'exit-code': '0', 'sarif-file': 'reports/nodeclass.sarif' });
    expect(
      sarifAt(join(directory, 'reports/nodeclass.sarif')).runs[0]?.results?.length
    ).toBeGreaterThan(5);
    expect(step(result, UPLOAD).outcome).toBe('skipped');
    expect(step(result, FAIL).outcome).toBe('skipped');
    expect(result.conclusion).toBe('success');
  });

  it('scans a world file with the Karpenter version and the config file given', () => {
    // Prepare: ignore one check through a config file
    const directory = workspace({
      'scan.yaml':
        'ignore:\n  - check: ami-not-deprecated\n    resource: "*/*/*"\n    reason: tracked in PLAT-1\n',
    });
    // Act
    const result = run(directory, {
      paths: '',
      world: 'examples/world.json',
      region: 'us-east-1',
      'karpenter-version': '1.3.0',
      config: 'scan.yaml',
      'fail-on': 'critical',
    });
    // Assess
    expect(step(result, SCAN).stderr).toBe('');
    expect(result.outputs['exit-code']).toBe('1');
    const results = sarifAt(join(directory, 'nodeclass-scan.sarif')).runs[0]?.results ?? [];
    expect(results.some((r) => r.message.text?.includes('Karpenter 1.3.0'))).toBe(true);
    const ignored = results.filter((r) => r.ruleId === 'ami-not-deprecated');
    expect(ignored.length).toBeGreaterThan(0);
    expect(ignored.every((r) => r.suppressions?.[0]?.justification === 'tracked in PLAT-1')).toBe(
      true
    );
    expect(result.conclusion).toBe('failure');
  });

  it('fails only on what is new against a baseline', () => {
    // Prepare: the baseline is the same scan's JSON report
    const directory = workspace();
    const report = runCompositeAction(
      {
        ...action,
        runs: {
          using: 'composite',
          steps: [
            ...action.runs.steps.filter((candidate) => candidate.name === INSTALL),
            {
              name: 'Baseline',
              shell: 'bash',
              run: '"$NODECLASS_SCAN" scan examples/nodeclasses --format json > baseline.json || test $? = 1',
            },
          ],
        },
      },
      { workspace: directory, env: runnerEnv(), with: { package: tarball } }
    );
    expect(report.conclusion, step(report, 'Baseline').stderr).toBe('success');
    // Act
    const result = run(directory, { paths: 'examples/nodeclasses', baseline: 'baseline.json' });
    // Assess
    expect(result.outputs['exit-code']).toBe('0');
    const results = sarifAt(join(directory, 'nodeclass-scan.sarif')).runs[0]?.results ?? [];
    expect(results.length).toBeGreaterThan(5);
    expect(results.every((r) => r.baselineState === 'unchanged')).toBe(true);
    expect(result.conclusion).toBe('success');
  });

  it('fails with exit 2 on an unreadable path, still uploading what was scanned', () => {
    // Prepare
    const directory = workspace();
    // Act
    const result = run(directory, { paths: 'missing-dir examples/nodeclasses/imds.yaml' });
    // Assess
    expect(step(result, SCAN).stderr).toContain('missing-dir');
    expect(result.outputs['exit-code']).toBe('2');
    expect(
      sarifAt(join(directory, 'nodeclass-scan.sarif')).runs[0]?.results?.length
    ).toBeGreaterThan(0);
    expect(step(result, UPLOAD).outcome).toBe('not-run');
    expect(step(result, FAIL)).toMatchObject({ outcome: 'failure', exitCode: 2 });
    expect(step(result, FAIL).stdout).toContain('could not run as asked (exit 2)');
    expect(result.conclusion).toBe('failure');
  });
});
