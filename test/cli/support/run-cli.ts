import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { type CliIo, runCli } from '../../../lambda/cli/main.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export const SCAN_TIME = new Date('2026-11-01T12:00:00Z');

/** Runs the real CLI in-process with captured output. */
export async function runCliCaptured(
  argv: readonly string[],
  options: {
    stdin?: string;
    tty?: boolean;
    stderrTty?: boolean;
    /** The terminal's width, with `tty`. */
    columns?: number;
    env?: Record<string, string>;
    cwd?: string;
    now?: Date;
  } = {}
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    readStdin: async () => options.stdin ?? '',
    stdoutIsTty: options.tty ?? false,
    stderrIsTty: options.stderrTty ?? false,
    ...(options.columns === undefined ? {} : { stdoutColumns: options.columns }),
    env: options.env ?? {},
    now: () => options.now ?? SCAN_TIME,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

/** A temporary directory with the given files (relative path → content); removed by `cleanup`. */
export function tempTree(files: Readonly<Record<string, string>>): {
  dir: string;
  cleanup: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), 'nodeclass-scan-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * For a test file (call it at the top level, or in a `describe`): `tree(files)` makes a
 * `tempTree` and returns its directory, removed after each test.
 */
export function useTempTrees(): (files?: Readonly<Record<string, string>>) => string {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });
  return (files = {}) => {
    const { dir, cleanup } = tempTree(files);
    cleanups.push(cleanup);
    return dir;
  };
}
