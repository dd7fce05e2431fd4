// The suite's one real synth: `npx cdk synth` as a user runs it (the CDK CLI, cdk.json's app
// command, which builds the Lambda bundles and then synthesizes on them, cdk-nag as a synth-time
// validation plugin), with the simulation's deployment passed as `-c key=value`, no AWS
// credentials and no Docker. Global setup starts it and returns at once, so the unit tests run
// while it works; the files that need the cloud assembly (synth.test.ts and the scenarios) wait
// for it with `synthesizedAssembly()`.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { REPO_ROOT, SIMULATION_CONTEXT } from './deployment-context.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the synth writes the cloud assembly, and `synth-outcome.json` when it has ended. */
    assemblyDirectory: string;
  }
}

const SYNTH_TIMEOUT_MS = 300_000;
const OUTCOME_FILE = 'synth-outcome.json';

interface SynthOutcome {
  readonly status: number | null;
  readonly signal: string | null;
  readonly output: string;
  readonly startedAt: number;
}

/** The caller's environment without AWS or CDK settings: synth must not depend on a profile. */
function credentialFreeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AWS_') && !key.startsWith('CDK_')) env[key] = value;
  }
  return {
    ...env,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: 'true',
    npm_config_update_notifier: 'false',
  };
}

/** The simulation's deployment as the CLI takes it: strings as they are, lists and flags as JSON. */
export function contextArguments(context: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(context).flatMap(([key, value]) => [
    '-c',
    `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`,
  ]);
}

/**
 * Starts `npx cdk synth` into `outdir`; `synth-outcome.json` is written there when it ends (the
 * status and everything it printed). Returns what stops it, with the app and esbuild it started.
 */
export function startSynth(outdir: string): () => Promise<void> {
  // An outcome left by an earlier run into the same directory (DEPLOY_SIM_ASSEMBLY) is not this one.
  rmSync(join(outdir, OUTCOME_FILE), { force: true });
  const startedAt = Date.now();
  const child = spawn(
    'npx',
    [
      'cdk',
      'synth',
      '--quiet',
      '--no-notices',
      '--output',
      outdir,
      ...contextArguments(SIMULATION_CONTEXT),
    ],
    // Its own process group, so stopping it stops the shell, the app and esbuild too.
    { cwd: REPO_ROOT, env: credentialFreeEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true }
  );
  const kill = () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };
  // Vitest killed or crashing: the synth (its own process group) goes with it.
  process.once('exit', kill);
  let stopped = false;
  let written = false;
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  /** Stops the synth and waits until it has exited, so its directory can be removed. */
  const stop = async () => {
    stopped = true;
    kill();
    if (child.pid !== undefined) await closed;
    process.off('exit', kill);
  };
  const finish = (outcome: SynthOutcome) => {
    clearTimeout(timer);
    process.off('exit', kill);
    if (stopped || written) return;
    written = true;
    writeOutcome(outdir, outcome);
  };
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const timer = setTimeout(kill, SYNTH_TIMEOUT_MS);
  // Once only (a failed spawn may report both), and nothing once teardown stopped it.
  child.once('close', (status, signal) => finish({ status, signal, output, startedAt }));
  child.once('error', (error) =>
    finish({ status: null, signal: null, output: String(error), startedAt })
  );
  return stop;
}

/**
 * An assembly an earlier run synthesized into `outdir` (DEPLOY_SIM_ASSEMBLY), marked ready: true
 * when there is one and that synth succeeded.
 */
export function reuseAssembly(outdir: string): boolean {
  if (!existsSync(join(outdir, 'manifest.json'))) return false;
  const file = join(outdir, OUTCOME_FILE);
  if (!existsSync(file)) {
    writeOutcome(outdir, { status: 0, signal: null, output: '', startedAt: 0 });
    return true;
  }
  return (JSON.parse(readFileSync(file, 'utf8')) as SynthOutcome).status === 0;
}

function writeOutcome(outdir: string, outcome: SynthOutcome): void {
  const file = join(outdir, OUTCOME_FILE);
  writeFileSync(`${file}.partial`, JSON.stringify(outcome));
  renameSync(`${file}.partial`, file);
}

export interface SynthesizedAssembly {
  readonly directory: string;
  /** When the synth started (ms since the epoch): the bundles it built are newer. */
  readonly startedAt: number;
}

/** Waits for the run's synth (bounded by the caller's hook timeout); throws with its output. */
export async function synthesizedAssembly(): Promise<SynthesizedAssembly> {
  const directory = inject('assemblyDirectory');
  const file = join(directory, OUTCOME_FILE);
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 250));
  const outcome = JSON.parse(readFileSync(file, 'utf8')) as SynthOutcome;
  if (outcome.status !== 0) {
    throw new Error(
      `npx cdk synth failed (status ${outcome.status}, signal ${outcome.signal}):\n${outcome.output}`
    );
  }
  return { directory, startedAt: outcome.startedAt };
}
