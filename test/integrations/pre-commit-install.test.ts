// The pre-commit hook installed from a repository and run, by a real pre-commit (Debian's package,
// 3.x: `npm install` and `npm pack` in its clone, the tarball's name read from `npm pack`'s
// standard output), and by the command pre-commit 4.6.1 and later install a node hook with
// (`npm install --global git+file://<clone>`, from pre-commit's languages/node.py). Each install
// takes the repository's whole dev toolchain and a build: a minute or two of CPU, so this file
// runs apart from `npm test`, when NODECLASS_SCAN_PRE_COMMIT_TEST=1 (`.ci/run` sets it, after
// installing pre-commit). npm works offline, from the cache `npm ci` filled.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyWorkingTree, REPO_ROOT } from '../package/pack.js';

const ENABLED = process.env.NODECLASS_SCAN_PRE_COMMIT_TEST === '1';
const INSTALL_TIMEOUT_MS = 900_000;

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let scratch: string;
/** A commit of the working tree, as the hook's users clone it. */
let hookRepository: string;
let hookRevision: string;

/** Only what pre-commit, git, node and npm need: nothing from the test run. */
function environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'npm_config_cache']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return {
    ...env,
    // The git and node that run the tests, first.
    PATH: `${dirname(process.execPath)}:${env.PATH ?? ''}`,
    PRE_COMMIT_HOME: join(scratch, 'pre-commit-home'),
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    NO_COLOR: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
    GIT_AUTHOR_NAME: 'test',
    GIT_AUTHOR_EMAIL: 'test@example.com',
    GIT_COMMITTER_NAME: 'test',
    GIT_COMMITTER_EMAIL: 'test@example.com',
    GIT_CONFIG_NOSYSTEM: '1',
    ...extra,
  };
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env = environment(),
  timeout = INSTALL_TIMEOUT_MS
): Ran {
  const ran = spawnSync(command, [...args], {
    cwd,
    env,
    encoding: 'utf8',
    timeout,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (ran.error !== undefined) throw ran.error;
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr };
}

function git(cwd: string, ...args: string[]): string {
  const ran = run(
    'git',
    ['-c', 'commit.gpgsign=false', '-c', 'init.defaultBranch=main', ...args],
    cwd
  );
  if (ran.status !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stderr}`);
  return ran.stdout.trim();
}

const example = (name: string) => join(REPO_ROOT, 'examples/nodeclasses', name);

/** A repository using the hook, with a broken and a good NodeClass. */
function userRepository(): string {
  const root = mkdtempSync(join(scratch, 'user-'));
  git(root, 'init', '--quiet');
  mkdirSync(join(root, 'k8s'));
  cpSync(example('instance-profile-arn.yaml'), join(root, 'k8s/profile.yaml'));
  cpSync(example('good-al2023.yaml'), join(root, 'k8s/good.yaml'));
  writeFileSync(
    join(root, '.pre-commit-config.yaml'),
    [
      'repos:',
      `  - repo: ${hookRepository}`,
      `    rev: ${hookRevision}`,
      '    hooks:',
      '      - id: nodeclass-scan',
      '',
    ].join('\n')
  );
  return root;
}

describe.runIf(ENABLED)('the pre-commit hook, installed from the repository', () => {
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'pre-commit-install-'));
    hookRepository = join(scratch, 'nodeclass-scanner');
    await copyWorkingTree(hookRepository);
    git(hookRepository, 'init', '--quiet');
    git(hookRepository, 'add', '--all');
    git(hookRepository, 'commit', '--quiet', '--message', 'the working tree');
    hookRevision = git(hookRepository, 'rev-parse', 'HEAD');
  }, 120_000);
  afterAll(() => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });

  it(
    'by pre-commit (its `npm pack` path): blocks a commit of a broken NodeClass, passes a good one',
    () => {
      // Prepare
      const version = run('pre-commit', ['--version'], scratch);
      expect(
        version.status,
        'pre-commit is not installed: `apt-get install pre-commit` (.ci/run does)'
      ).toBe(0);
      const root = userRepository();
      git(root, 'add', '--all');
      // Act: the first run clones the repository, installs the hook's environment and runs it
      const broken = run(
        'pre-commit',
        ['run', '--files', 'k8s/profile.yaml', 'k8s/good.yaml'],
        root
      );
      const good = run('pre-commit', ['run', '--files', 'k8s/good.yaml'], root);
      const installed = run('pre-commit', ['install'], root);
      const commit = run('git', ['commit', '--quiet', '--message', 'broken'], root);
      // Assess
      const output = broken.stdout + broken.stderr;
      expect(output, version.stdout).not.toMatch(/An unexpected error has occurred/);
      expect(broken.status, output).toBe(1);
      expect(broken.stdout).toMatch(/nodeclass-scan .*Failed/);
      expect(broken.stdout).toContain('k8s/profile.yaml');
      expect(broken.stdout).toMatch(/CRITICAL fail +instance-profile-is-name/);
      expect(good.status, good.stdout + good.stderr).toBe(0);
      expect(installed.status, installed.stderr).toBe(0);
      expect(commit.status).toBe(1);
      expect(commit.stdout + commit.stderr).toContain('instance-profile-is-name');
    },
    INSTALL_TIMEOUT_MS
  );

  it(
    'by the install pre-commit 4.6.1 and later runs (npm install --global git+file://): the built package, nothing else',
    () => {
      // Prepare: pre-commit's clone of the repository, and its environment directory
      const clone = join(scratch, 'clone');
      git(scratch, 'clone', '--quiet', hookRepository, clone);
      const prefix = join(scratch, 'node_env');
      mkdirSync(prefix);
      const env = environment({ NPM_CONFIG_PREFIX: prefix, npm_config_prefix: prefix });
      // Act
      const install = run(
        'npm',
        ['install', '--allow-git=root', '--install-links', '-g', `git+file://${clone}`],
        clone,
        env
      );
      const root = userRepository();
      const scan = run(
        join(prefix, 'bin/nodeclass-scan'),
        ['scan', '--skip', 'nodepool-nodeclass-exists', 'k8s/profile.yaml', 'k8s/good.yaml'],
        root,
        env,
        120_000
      );
      // Assess
      expect(install.status, install.stdout + install.stderr).toBe(0);
      expect(readdirSync(join(prefix, 'lib/node_modules'))).toEqual(['nodeclass-scanner']);
      expect(readdirSync(join(prefix, 'lib/node_modules/nodeclass-scanner/dist'))).toEqual(
        expect.arrayContaining(['lib', 'types', 'THIRD-PARTY-NOTICES.txt'])
      );
      expect(scan.status, scan.stderr).toBe(1);
      expect(scan.stdout).toMatch(/CRITICAL fail +instance-profile-is-name/);
    },
    INSTALL_TIMEOUT_MS
  );
});
