// The repository's GitHub Action (action.yml), run step by step as a runner would: the package
// installed from the packed tarball (offline, from the npm cache), the repository's examples
// scanned in a temporary workspace, the SARIF report validated, the exit status following fail-on.
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
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

const RESOLVE = 'Resolve nodeclass-scanner';
const RESTORE = 'Restore the installed nodeclass-scanner';
const SAVE = 'Save the installed nodeclass-scanner';
const repositoryUrl = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    repository: { url: string };
  }
).repository.url
  .replace(/^git\+/, '')
  .replace(/\.git$/, '');

interface ToolCall {
  readonly tool: string;
  readonly cwd: string;
  readonly args: string[];
}

/**
 * A PATH directory with a recording `npm` (`pack` leaves a tarball, `install` a scanner answering
 * --version) and a recording `curl` that serves `release` as the downloaded file, or fails as for
 * an HTTP 404 (exit 22) when there is none. `only: ['curl']` puts the real npm to work.
 */
function fakeTools(options: { release?: string; only?: readonly string[] } = {}) {
  const bin = temporaryDirectory('fake-tools-');
  const calls = join(bin, 'calls.jsonl');
  const record = (tool: string) =>
    `appendFileSync(${JSON.stringify(calls)}, JSON.stringify({ tool: '${tool}', cwd: process.cwd(), args }) + '\\n');`;
  const tools: Record<string, string[]> = {
    npm: [
      "if (args[0] === 'pack') writeFileSync(join(args[args.indexOf('--pack-destination') + 1], 'nodeclass-scanner-9.9.9.tgz'), '');",
      "if (args[0] === 'install') {",
      "  const dir = join(args[args.indexOf('--prefix') + 1], 'node_modules', '.bin');",
      '  mkdirSync(dir, { recursive: true });',
      "  writeFileSync(join(dir, 'nodeclass-scan'), '#!/bin/sh\\necho 9.9.9\\n');",
      "  chmodSync(join(dir, 'nodeclass-scan'), 0o755);",
      '}',
    ],
    curl:
      options.release === undefined
        ? [
            "process.stderr.write('curl: (22) The requested URL returned error: 404\\n');",
            'process.exit(22);',
          ]
        : [`copyFileSync(${JSON.stringify(options.release)}, args[args.indexOf('--output') + 1]);`],
  };
  for (const [tool, body] of Object.entries(tools)) {
    if (options.only !== undefined && !options.only.includes(tool)) continue;
    writeFileSync(
      join(bin, tool),
      [
        '#!/usr/bin/env node',
        "const { appendFileSync, chmodSync, copyFileSync, mkdirSync, writeFileSync } = require('node:fs');",
        "const { join } = require('node:path');",
        'const args = process.argv.slice(2);',
        record(tool),
        ...body,
      ].join('\n')
    );
    chmodSync(join(bin, tool), 0o755);
  }
  return {
    bin,
    calls: (): ToolCall[] =>
      existsSync(calls)
        ? readFileSync(calls, 'utf8')
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as ToolCall)
        : [],
  };
}

/** The action's own checkout, as the runner downloads it: package.json and a source file. */
function actionCheckout(version = '9.9.9'): string {
  const directory = temporaryDirectory('action-path-');
  writeFileSync(
    join(directory, 'package.json'),
    JSON.stringify({
      name: 'nodeclass-scanner',
      version,
      repository: { type: 'git', url: `git+${repositoryUrl}.git` },
    })
  );
  writeFileSync(join(directory, 'action.yml'), readFileSync(join(REPO_ROOT, 'action.yml')));
  return directory;
}

/** The action with its default `package`, at `ref`, with the fake tools first on PATH. */
function runDefault(
  tools: { bin: string },
  actionPath: string,
  ref: string,
  runAction: Action = action
): ActionRun {
  const env = runnerEnv();
  return runCompositeAction(runAction, {
    workspace: workspace(),
    env: { ...env, PATH: `${tools.bin}:${env.PATH ?? ''}`, GITHUB_ACTION_PATH: actionPath },
    with: {},
    github: { action_ref: ref },
  });
}

const npmCalls = (calls: readonly ToolCall[]) => calls.filter((call) => call.tool === 'npm');

describe('action.yml: installing the package', () => {
  it('at its release tag, installs the tarball that release carries: no dev toolchain, no build', () => {
    // Prepare
    const release = join(temporaryDirectory('release-'), 'downloaded.tgz');
    writeFileSync(release, '');
    const tools = fakeTools({ release });
    // Act
    const run = runDefault(tools, actionCheckout(), 'v9.9.9');
    // Assess
    expect(action.inputs.package?.default).toBe('');
    expect(step(run, INSTALL).outcome, step(run, INSTALL).stderr).toBe('success');
    const calls = tools.calls();
    expect(calls.filter((call) => call.tool === 'curl').map((call) => call.args.at(-1))).toEqual([
      `${repositoryUrl}/releases/download/v9.9.9/nodeclass-scanner-9.9.9.tgz`,
    ]);
    expect(npmCalls(calls).map((call) => call.args[0])).toEqual(['install']);
    const install = npmCalls(calls)[0]?.args ?? [];
    expect(install).toContain('--omit=dev');
    expect(install.at(-1)).toMatch(/\/nodeclass-scanner-9\.9\.9\.tgz$/);
    expect(step(run, INSTALL).stdout).toContain('9.9.9');
  });

  it('builds the package from its checkout when the release has no tarball, fetching nothing by name', () => {
    // Prepare: curl answers 404
    const tools = fakeTools();
    const actionPath = actionCheckout();
    // Act
    const run = runDefault(tools, actionPath, 'v9.9.9');
    // Assess
    expect(step(run, INSTALL).outcome, step(run, INSTALL).stderr).toBe('success');
    expect(step(run, INSTALL).stdout).toContain(
      '::notice title=nodeclass-scan::no release tarball'
    );
    const npm = npmCalls(tools.calls());
    expect(npm.map((call) => call.args[0])).toEqual(['ci', 'pack', 'install']);
    expect(npm[0]?.cwd).toBe(realpathSync(actionPath));
    expect(npm[2]?.args.at(-1)).toMatch(/\/nodeclass-scanner-9\.9\.9\.tgz$/);
  });

  it('at a branch or a commit, builds the package from its checkout without asking for a release', () => {
    const tools = fakeTools();
    const run = runDefault(tools, actionCheckout(), 'main');
    expect(step(run, INSTALL).outcome, step(run, INSTALL).stderr).toBe('success');
    expect(step(run, INSTALL).stdout).toContain('not at a release tag');
    expect(tools.calls().map((call) => `${call.tool} ${call.args[0]}`)).toEqual([
      'npm ci',
      'npm pack',
      'npm install',
    ]);
  });

  it('tries the release when the action cannot see its ref (github.action_ref is empty)', () => {
    const tools = fakeTools();
    runDefault(tools, actionCheckout(), '');
    expect(tools.calls()[0]?.tool).toBe('curl');
  });

  it('caches the installation: restored before installing, saved after, keyed on the version and the files', () => {
    // Prepare
    const actionPath = actionCheckout();
    // Act
    const first = runDefault(fakeTools(), actionPath, 'main');
    const again = runDefault(fakeTools(), actionPath, 'main');
    writeFileSync(join(actionPath, 'action.yml'), '# changed\n');
    const changed = runDefault(fakeTools(), actionPath, 'main');
    const given = runCompositeAction(action, {
      workspace: workspace(),
      env: runnerEnv(),
      with: { package: 'nodeclass-scanner@9.9.9' },
    });
    // Assess: the cache steps of actions/cache, around the install, on the same path and key
    const names = action.runs.steps.map((candidate) => candidate.name);
    expect(names.indexOf(RESTORE)).toBeLessThan(names.indexOf(INSTALL));
    expect(names.indexOf(SAVE)).toBeGreaterThan(names.indexOf(INSTALL));
    const restore = step(first, RESTORE);
    expect(action.runs.steps.find((candidate) => candidate.name === RESTORE)?.uses).toMatch(
      /^actions\/cache\/restore@v\d+$/
    );
    expect(action.runs.steps.find((candidate) => candidate.name === SAVE)?.uses).toMatch(
      /^actions\/cache\/save@v\d+$/
    );
    expect(restore.outcome).toBe('not-run');
    expect(restore.with?.key).toMatch(/^nodeclass-scanner-9\.9\.9-\w+-[0-9a-f]{16}$/);
    expect(restore.with?.path).toMatch(/\/nodeclass-scanner$/);
    expect(step(first, SAVE)).toMatchObject({ outcome: 'not-run', with: restore.with });
    expect(step(again, RESTORE).with?.key).toBe(restore.with?.key);
    expect(step(changed, RESTORE).with?.key).not.toBe(restore.with?.key);
    // A package given is installed as given, every run: nothing cached.
    expect(step(given, RESTORE).outcome).toBe('skipped');
    expect(step(given, SAVE).outcome).toBe('skipped');
  });

  it('installs nothing on a cache hit, and saves nothing', () => {
    // Prepare: the restore step stands in for actions/cache with a hit, leaving the installation
    const tools = fakeTools();
    const runnerTemp = temporaryDirectory('runner-temp-');
    const installed = join(runnerTemp, 'nodeclass-scanner', 'node_modules', '.bin');
    mkdirSync(installed, { recursive: true });
    writeFileSync(join(installed, 'nodeclass-scan'), '#!/bin/sh\necho 9.9.9\n');
    chmodSync(join(installed, 'nodeclass-scan'), 0o755);
    const hit: Action = {
      ...action,
      runs: {
        using: 'composite',
        steps: action.runs.steps.map((candidate) =>
          candidate.name === RESTORE
            ? {
                name: RESTORE,
                id: 'cache',
                shell: 'bash',
                run: 'echo "cache-hit=true" >> "$GITHUB_OUTPUT"',
              }
            : candidate
        ),
      },
    };
    const env = runnerEnv();
    // Act
    const run = runCompositeAction(hit, {
      workspace: workspace(),
      env: { ...env, PATH: `${tools.bin}:${env.PATH ?? ''}`, GITHUB_ACTION_PATH: actionCheckout() },
      with: {},
      runnerTemp,
      github: { action_ref: 'v9.9.9' },
    });
    // Assess
    expect(step(run, INSTALL).outcome, step(run, INSTALL).stderr).toBe('success');
    expect(step(run, INSTALL).stdout).toContain('9.9.9');
    expect(tools.calls()).toEqual([]);
    expect(step(run, SAVE).outcome).toBe('skipped');
  });
});

describe('action.yml', () => {
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

  it('installs the package its GitHub release serves (the packed tarball), then scans with it', () => {
    // Prepare: the download serves the packed tarball; npm is the real one, offline
    const tools = fakeTools({ release: tarball, only: ['curl'] });
    const env = runnerEnv();
    // Act
    const result = runCompositeAction(action, {
      workspace: workspace(),
      env: {
        ...env,
        PATH: `${tools.bin}:${env.PATH ?? ''}`,
        GITHUB_ACTION_PATH: actionCheckout(packageVersion),
      },
      with: { paths: 'examples/nodeclasses', 'fail-on': 'none', 'upload-sarif': 'false' },
      github: { action_ref: `v${packageVersion}` },
    });
    // Assess
    expect(step(result, INSTALL).outcome, step(result, INSTALL).stderr).toBe('success');
    expect(step(result, INSTALL).stdout).toContain(packageVersion);
    expect(tools.calls().map((call) => call.tool)).toEqual(['curl']);
    expect(step(result, SCAN).outcome, step(result, SCAN).stderr).toBe('success');
    expect(result.outputs['exit-code']).toBe('0');
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
            ...action.runs.steps.filter((candidate) => [RESOLVE, INSTALL].includes(candidate.name)),
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
