// A user's project: an empty directory that installs the packed tarball, offline, without dev
// dependencies. Its PATH holds node and the system tools only, never the checkout's
// node_modules/.bin, so nothing from the checkout (tsx, esbuild) can stand in for the package.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { REPO_ROOT, runCommand } from './pack.js';

export interface Consumer {
  readonly directory: string;
  /** The environment commands run with: PATH without the checkout's tools, no AWS access. */
  readonly env: NodeJS.ProcessEnv;
  readonly cleanup: () => void;
}

const CONSUMER_PATH = [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');

export function consumerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Only what npm and node need to run: nothing that points back into the checkout.
  for (const key of ['HOME', 'TMPDIR', 'LANG', 'npm_config_cache']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return {
    ...env,
    PATH: CONSUMER_PATH,
    NO_COLOR: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    ...extra,
  };
}

/** `npm install <tarball> --omit=dev --offline` in a new directory. */
export async function installConsumer(tarball: string, name: string): Promise<Consumer> {
  const directory = mkdtempSync(join(tmpdir(), `nodeclass-scanner-${name}-`));
  writeFileSync(
    join(directory, 'package.json'),
    `${JSON.stringify({ name: `consumer-${name}`, private: true, type: 'module' }, null, 2)}\n`
  );
  const env = consumerEnv();
  await runCommand(
    process.execPath,
    [
      npmCli(),
      'install',
      tarball,
      '--omit=dev',
      '--offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
    ],
    { cwd: directory, env }
  );
  return { directory, env, cleanup: () => rmSync(directory, { recursive: true, force: true }) };
}

/** npm's own entry, next to the node running the tests (PATH is narrowed for consumers). */
function npmCli(): string {
  const candidates = [
    join(dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js'),
    join(dirname(process.execPath), 'node_modules/npm/bin/npm-cli.js'),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) throw new Error(`npm-cli.js not found next to ${process.execPath}`);
  return found;
}

const manifestSchema = z.object({
  dependencies: z.record(z.string(), z.string()).optional(),
  bundleDependencies: z.array(z.string()).optional(),
  bundledDependencies: z.array(z.string()).optional(),
});

/**
 * Gives the consumer its own aws-cdk-lib and constructs, as `npm install aws-cdk-lib constructs`
 * would (the registry is not reachable in tests): copies of the checkout's installed packages and
 * their dependencies, hard-linked. Copies, not symlinks: a symlink resolves into the checkout,
 * where esbuild is installed, and would hide a construct that still bundles at synth time.
 */
export async function addCdkLibraries(consumer: Consumer): Promise<void> {
  await addLibraries(consumer, ['aws-cdk-lib', 'constructs']);
}

/** Node's type declarations (`@types/node`), as a TypeScript consumer on Node.js has them. */
export async function addNodeTypes(consumer: Consumer): Promise<void> {
  await addLibraries(consumer, ['@types/node']);
}

/** Copies of the checkout's installed packages `names` and their dependencies, hard-linked. */
async function addLibraries(consumer: Consumer, names: readonly string[]): Promise<void> {
  const copied = new Set<string>();
  const copy = async (name: string, from: string): Promise<void> => {
    if (copied.has(name)) return;
    copied.add(name);
    const source = [join(from, 'node_modules', name), join(REPO_ROOT, 'node_modules', name)].find(
      (candidate) => existsSync(join(candidate, 'package.json'))
    );
    if (source === undefined) throw new Error(`${name} is not installed in the checkout`);
    const target = join(consumer.directory, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    // Hard links: 160 MB of aws-cdk-lib in well under a second (same file system as the checkout).
    await runCommand('cp', ['-r', '-l', '-L', source, target], { cwd: consumer.directory }).catch(
      () => cpSync(source, target, { recursive: true, dereference: true })
    );
    const manifest = manifestSchema.parse(
      JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'))
    );
    const bundled = new Set([
      ...(manifest.bundleDependencies ?? []),
      ...(manifest.bundledDependencies ?? []),
    ]);
    for (const dependency of Object.keys(manifest.dependencies ?? {})) {
      if (!bundled.has(dependency)) await copy(dependency, source);
    }
  };
  for (const name of names) await copy(name, REPO_ROOT);
}
