// The packed package, as `npm pack` makes it, for tests that install it like a user would.
// Built into a staging copy, never into the checkout's dist/: other test files run in parallel and
// may read dist/ while this builds. The staging copy holds package.json and every `files` entry, so
// `npm pack` there applies the same whitelist and metadata as in the checkout.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';

const run = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where the build writes (`prepack` builds there in the checkout). */
const BUILD_DIRECTORY = 'dist';

const packageFilesSchema = z.object({ files: z.array(z.string()) });
const packOutputSchema = z.array(z.object({ filename: z.string() })).length(1);

let packing: Promise<string> | undefined;
let scratch: string | undefined;

/** The path of the packed `.tgz`; packs once per process, in a temporary directory. */
export function packedTarball(): Promise<string> {
  packing ??= pack();
  return packing;
}

/** Runs a command, failing with its output (the build's errors) rather than a bare exit code. */
export async function runCommand(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeoutMs ?? 240_000,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${file} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`
    );
  }
}

async function pack(): Promise<string> {
  scratch = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-pack-'));
  process.once('exit', () => {
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  });
  const staging = join(scratch, 'package');
  mkdirSync(staging);
  const packageJsonText = readFileSync(join(REPO_ROOT, 'package.json'), 'utf8');
  const { files } = packageFilesSchema.parse(JSON.parse(packageJsonText));
  cpSync(join(REPO_ROOT, 'package.json'), join(staging, 'package.json'));
  // npm always packs these when present, whatever `files` says.
  const alwaysPacked = ['README.md', 'LICENSE', 'NOTICE'];
  const copied = [...alwaysPacked, ...files.filter((entry) => !entry.startsWith('!'))];
  for (const entry of copied) {
    const path = entry.replace(/\/+$/, '');
    if (path === BUILD_DIRECTORY || path.startsWith(`${BUILD_DIRECTORY}/`)) continue;
    if (existsSync(join(REPO_ROOT, path))) {
      cpSync(join(REPO_ROOT, path), join(staging, path), { recursive: true });
    }
  }
  await runCommand(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs'),
      join(REPO_ROOT, 'scripts/build-package.ts'),
      join(staging, BUILD_DIRECTORY),
    ],
    { cwd: REPO_ROOT, env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' } }
  );
  // The build already ran (that is `prepack`'s job): --ignore-scripts.
  const { stdout } = await runCommand(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', scratch, staging],
    { cwd: scratch }
  );
  const [packed] = packOutputSchema.parse(JSON.parse(stdout));
  if (packed === undefined) throw new Error('npm pack reported no tarball');
  return join(scratch, packed.filename);
}
