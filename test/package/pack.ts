// The packed package, as `npm pack` makes it (its `prepack` build included), for tests that
// install it like a user would. Packed from a copy of the working tree (tracked and new files,
// node_modules linked), never in the checkout itself: `prepack` rebuilds dist/, which other test
// files, running in parallel, may be reading. Under the vitest global setup (pack-setup.ts) one
// pack serves the whole run: the first worker to ask packs, the others wait for its result.
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';

const run = promisify(execFile);

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

let packing: Promise<string> | undefined;
let scratch: string | undefined;

/** The path of the packed `.tgz`: once per run in the shared directory, else once per process. */
export function packedTarball(): Promise<string> {
  const shared = inject('packDirectory');
  packing ??= shared === undefined ? packOwn() : packShared(shared);
  return packing;
}

/** Deletes this process' tarball and its directory (vitest may end a worker without `exit`). */
export function removePackedTarball(): void {
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
  packing = undefined;
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

function packOwn(): Promise<string> {
  scratch = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-pack-'));
  process.once('exit', removePackedTarball);
  return pack(scratch);
}

/** The first caller takes the lock and packs; the others poll for its outcome (tarball or error). */
async function packShared(directory: string): Promise<string> {
  const outcomeFile = join(directory, 'outcome.json');
  if (takeLock(join(directory, 'lock'))) {
    let outcome: { tarball?: string; error?: string };
    try {
      outcome = { tarball: await pack(directory) };
    } catch (error) {
      outcome = { error: error instanceof Error ? error.message : String(error) };
    }
    writeFileSync(`${outcomeFile}.partial`, JSON.stringify(outcome));
    renameSync(`${outcomeFile}.partial`, outcomeFile);
  }
  // Bounded by the caller's hook timeout.
  while (!existsSync(outcomeFile)) await new Promise((resolve) => setTimeout(resolve, 250));
  const outcome = JSON.parse(readFileSync(outcomeFile, 'utf8')) as {
    tarball?: string;
    error?: string;
  };
  if (outcome.tarball === undefined)
    throw new Error(`npm pack failed in another worker: ${outcome.error}`);
  return outcome.tarball;
}

function takeLock(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Copies the working tree (tracked and new files, not ignored ones such as node_modules and dist)
 * to `destination`: what a commit of it would hold.
 */
export async function copyWorkingTree(destination: string): Promise<void> {
  const { stdout: listed } = await runCommand(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '-z'],
    { cwd: REPO_ROOT }
  );
  for (const file of listed.split('\0')) {
    // Deleted but not yet committed: gone from the working tree, so not packed.
    if (file === '' || !existsSync(join(REPO_ROOT, file))) continue;
    mkdirSync(dirname(join(destination, file)), { recursive: true });
    cpSync(join(REPO_ROOT, file), join(destination, file));
  }
}

async function pack(scratch: string): Promise<string> {
  const checkout = join(scratch, 'checkout');
  await copyWorkingTree(checkout);
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
  const destination = join(scratch, 'packed');
  mkdirSync(destination);
  try {
    await runCommand('npm', ['pack', '--loglevel=error', '--pack-destination', destination], {
      cwd: checkout,
      env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' },
    });
  } finally {
    // Only the tarball is kept: a worker ended without an exit event leaves 3 MB, not 50.
    rmSync(checkout, { recursive: true, force: true });
  }
  const tarballs = readdirSync(destination).filter((file) => file.endsWith('.tgz'));
  const [tarball] = tarballs;
  if (tarball === undefined || tarballs.length !== 1) {
    throw new Error(`npm pack wrote ${tarballs.length} tarballs to ${destination}`);
  }
  return join(destination, tarball);
}
