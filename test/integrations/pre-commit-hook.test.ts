// The pre-commit hook (.pre-commit-hooks.yaml) run as pre-commit runs it, without pre-commit:
// the files it would select by `files`, passed after `entry` and `args` in one process
// (`require_serial`), with the repository's CLI standing in for the installed package.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { REPO_ROOT } from '../package/pack.js';

const hookSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    entry: z.string(),
    language: z.literal('node'),
    files: z.string(),
    pass_filenames: z.boolean(),
    require_serial: z.boolean(),
    args: z.array(z.string()),
    minimum_pre_commit_version: z.string(),
  })
  .strict();

const hooks = z
  .array(hookSchema)
  .parse(parse(readFileSync(join(REPO_ROOT, '.pre-commit-hooks.yaml'), 'utf8')));
const [hook] = hooks;

let scratch: string;
let binDirectory: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'pre-commit-hook-'));
  // `nodeclass-scan` on PATH, as the hook's environment has it once pre-commit installed the package.
  binDirectory = join(scratch, 'bin');
  mkdirSync(binDirectory);
  const shim = join(binDirectory, 'nodeclass-scan');
  writeFileSync(
    shim,
    `#!/bin/sh\nexec "${process.execPath}" "${join(REPO_ROOT, 'bin/nodeclass-scan.js')}" "$@"\n`
  );
  chmodSync(shim, 0o755);
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A repository: the given files (path → text), or copies of the examples. */
function repository(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(scratch, 'repo-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** The files of `staged` that pre-commit hands the hook (`files` is a Python `re.search`). */
function selected(staged: readonly string[]): string[] {
  const pattern = new RegExp(hook?.files ?? '$^');
  return staged.filter((path) => pattern.test(path));
}

/** entry + args + filenames, run from the repository root, as pre-commit does. */
function runHook(root: string, staged: readonly string[]) {
  if (hook === undefined) throw new Error('no hook');
  const [command, ...entryArgs] = hook.entry.split(' ');
  const files = hook.pass_filenames ? selected(staged) : [];
  const ran = spawnSync(command as string, [...entryArgs, ...hook.args, ...files], {
    cwd: root,
    env: {
      PATH: `${binDirectory}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME,
      NO_COLOR: '1',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: ran.status, stdout: ran.stdout, stderr: ran.stderr, files };
}

const example = (name: string) =>
  readFileSync(join(REPO_ROOT, 'examples/nodeclasses', name), 'utf8');

describe('.pre-commit-hooks.yaml', () => {
  it('defines one node hook, nodeclass-scan, running `nodeclass-scan scan` on YAML files', () => {
    expect(hooks).toHaveLength(1);
    expect(hook).toMatchObject({
      id: 'nodeclass-scan',
      entry: 'nodeclass-scan scan',
      language: 'node',
      pass_filenames: true,
      require_serial: true,
    });
  });

  it('selects YAML manifests and nothing else', () => {
    expect(
      selected([
        'k8s/a.yaml',
        'k8s/b.yml',
        'package.json',
        'README.md',
        'yaml/notes.txt',
        'c.yaml.bak',
      ])
    ).toEqual(['k8s/a.yaml', 'k8s/b.yml']);
  });

  it('runs a command the package provides', () => {
    const bin = z
      .object({ bin: z.record(z.string(), z.string()) })
      .parse(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'))).bin;
    expect(Object.keys(bin)).toContain(hook?.entry.split(' ')[0]);
  });
});

// The installs themselves, by a real pre-commit: pre-commit-install.test.ts (run by .ci/run).
describe('what lets pre-commit install the hook', () => {
  const manifest = z
    .object({ scripts: z.record(z.string(), z.string()) })
    .parse(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')));

  it("keeps the build's output off `npm pack`'s standard output (pre-commit before 4.6.1 reads the tarball name there)", () => {
    const npmrc = readFileSync(join(REPO_ROOT, '.npmrc'), 'utf8');
    expect(npmrc.split('\n').map((line) => line.trim())).toContain('foreground-scripts=false');
  });

  it('builds the package when npm installs it from git (pre-commit 4.6.1 and later), as before packing', () => {
    expect(manifest.scripts.prepare).toBe('node scripts/prepare-package.mjs');
    expect(manifest.scripts.prepack).toBe('npm run build');
    expect(readFileSync(join(REPO_ROOT, 'scripts/prepare-package.mjs'), 'utf8')).toContain(
      "'scripts/build-package.ts'), '--unless-built'"
    );
  });
});

describe('the hook run on the files being committed', () => {
  it('fails the commit on a broken NodeClass, naming the file', () => {
    // Prepare
    const root = repository({
      'k8s/profile.yaml': example('instance-profile-arn.yaml'),
      'k8s/good.yaml': example('good-al2023.yaml'),
      'package.json': '{"name":"app"}',
    });
    // Act
    const result = runHook(root, ['k8s/profile.yaml', 'k8s/good.yaml', 'package.json']);
    // Assess
    expect(result.files).toEqual(['k8s/profile.yaml', 'k8s/good.yaml']);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('k8s/profile.yaml');
    expect(result.stdout).toMatch(/CRITICAL fail +instance-profile-is-name/);
  });

  it('passes a good NodeClass', () => {
    const root = repository({ 'k8s/good.yaml': example('good-al2023.yaml') });
    const result = runHook(root, ['k8s/good.yaml']);
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });

  it('passes a commit of YAML that holds no Karpenter object', () => {
    const root = repository({
      '.github/workflows/ci.yml': 'name: ci\non: [push]\njobs: {}\n',
      'deploy.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n',
    });
    const result = runHook(root, ['.github/workflows/ci.yml', 'deploy.yaml']);
    expect(result.status, result.stderr).toBe(0);
  });

  it('does not fail a NodePool-only commit for the NodeClass in a file not being committed', () => {
    // Prepare: the NodePool's class is in the repository, not in this commit
    const root = repository({
      'k8s/classes.yaml': example('good-al2023.yaml'),
      'k8s/pool.yaml': [
        'apiVersion: karpenter.sh/v1',
        'kind: NodePool',
        'metadata:',
        '  name: general',
        'spec:',
        '  template:',
        '    spec:',
        '      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }',
        '      requirements:',
        '        - { key: kubernetes.io/arch, operator: In, values: [amd64] }',
        '',
      ].join('\n'),
    });
    // Act
    const result = runHook(root, ['k8s/pool.yaml']);
    // Assess
    expect(result.stdout).not.toContain('nodepool-nodeclass-exists');
    expect(result.status, result.stdout).toBe(0);
  });

  it('fails on a manifest that is not valid YAML, naming the file and line', () => {
    const root = repository({ 'k8s/broken.yaml': 'kind: EC2NodeClass\nspec: [unclosed\n' });
    const result = runHook(root, ['k8s/broken.yaml']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('k8s/broken.yaml');
  });

  it('checks every example manifest the repository ships in one process', () => {
    // Prepare
    const root = mkdtempSync(join(scratch, 'examples-'));
    cpSync(join(REPO_ROOT, 'examples/nodeclasses'), join(root, 'examples/nodeclasses'), {
      recursive: true,
    });
    const staged = readdirRecursive(join(root, 'examples/nodeclasses')).map((path) =>
      relative(root, path)
    );
    // Act
    const result = runHook(root, staged);
    // Assess
    expect(result.files.length).toBeGreaterThan(5);
    expect(result.files.some((file) => file.endsWith('.json'))).toBe(false);
    expect(result.status).toBe(1);
  });
});

function readdirRecursive(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? readdirRecursive(join(directory, entry.name))
      : [join(directory, entry.name)]
  );
}
