// Runs the bundled handlers from the cloud assembly the way Lambda does: each execution environment
// is a Node process that imports the bundle once (init) and then serves invocations one at a time,
// warm, for as long as it lives; a second concurrent invocation gets a second environment. The
// process has the template's environment plus what the Lambda runtime sets (region, function name,
// the role's credentials), and the handler export is called with the event and a context. The only
// addition is AWS_ENDPOINT_URL, which points every SDK client at the emulator. Like Lambda, an
// environment whose invocation timed out or crashed is discarded.
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-runtime-environment.html
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DeployedFunction } from './template.js';

export interface Invocation {
  readonly result?: unknown;
  readonly error?: { readonly name: string; readonly message: string };
  /** Every stdout line that is JSON: Powertools log lines and EMF metric documents. */
  readonly logLines: readonly Record<string, unknown>[];
  readonly stderr: string;
}

/** Written to stdout and stderr after an invocation's own output: where its output ends. */
const END_OF_INVOCATION = '\u0000end-of-invocation ';

const RUNTIME = `
const [bundle, exportName, functionName, memory] = process.argv.slice(2);
const module = await import(bundle);
process.on('message', async ({ id, event, timeoutMs }) => {
  const started = Date.now();
  const context = {
    functionName, functionVersion: '$LATEST', memoryLimitInMB: memory,
    invokedFunctionArn: 'arn:aws:lambda:' + process.env.AWS_REGION + ':' + process.env.EMULATED_ACCOUNT + ':function:' + functionName,
    awsRequestId: id, logGroupName: '/aws/lambda/' + functionName, logStreamName: 'emulated',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => timeoutMs - (Date.now() - started),
  };
  let outcome;
  try {
    outcome = { result: (await module[exportName](event, context)) ?? null };
  } catch (error) {
    outcome = { error: { name: error?.name ?? 'Error', message: String(error?.message ?? error) } };
  }
  process.stdout.write(${JSON.stringify(END_OF_INVOCATION)} + id + '\\n');
  process.stderr.write(${JSON.stringify(END_OF_INVOCATION)} + id + '\\n');
  process.send({ id, outcome: JSON.parse(JSON.stringify(outcome)) });
});
// The simulation is gone (or dropped this environment): so is the environment.
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
`;

export interface InvokeOptions {
  readonly fn: DeployedFunction;
  readonly event: unknown;
  readonly endpoint: string;
  readonly accountId: string;
  readonly region: string;
  /** The emulator's CA, trusted like Lambda trusts AWS's. */
  readonly caFile: string;
  /** Cap below the function's own timeout, to keep the suite fast. */
  readonly timeoutMs?: number;
}

/** The environment Lambda gives the function's process (also the cold-start bench's). */
export function environmentVariables(options: InvokeOptions): Record<string, string> {
  const { fn } = options;
  return {
    ...fn.environment,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TZ: ':UTC',
    LANG: 'en_US.UTF-8',
    AWS_REGION: options.region,
    AWS_DEFAULT_REGION: options.region,
    AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    // The role's session: the emulator knows the calling function by this key.
    AWS_ACCESS_KEY_ID: fn.roleLogicalId,
    AWS_SECRET_ACCESS_KEY: 'emulated-secret',
    AWS_SESSION_TOKEN: 'emulated-session',
    AWS_ENDPOINT_URL: options.endpoint,
    AWS_EC2_METADATA_DISABLED: 'true',
    NODE_EXTRA_CA_CERTS: options.caFile,
    EMULATED_ACCOUNT: options.accountId,
  };
}

/** What one stream printed, split at the end-of-invocation markers. */
class StreamOutput {
  private text = '';
  private readonly waiting = new Map<string, (output: string) => void>();

  add(chunk: string): void {
    this.text += chunk;
    for (const [id, deliver] of this.waiting) {
      const marker = `${END_OF_INVOCATION}${id}\n`;
      const end = this.text.indexOf(marker);
      if (end === -1) continue;
      this.waiting.delete(id);
      deliver(this.text.slice(0, end));
      this.text = this.text.slice(end + marker.length);
    }
  }

  /** Everything printed up to the invocation's marker. */
  until(id: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.add('');
    });
  }

  /** Whatever is left (a crashed environment's last words). */
  rest(): string {
    return this.text;
  }
}

interface RuntimeMessage {
  readonly ready?: true;
  readonly id?: string;
  readonly outcome?: Pick<Invocation, 'result' | 'error'>;
}

/** One execution environment: a process that has imported the bundle, serving one invocation at a time. */
class ExecutionEnvironment {
  private readonly child: ChildProcess;
  private readonly stdout = new StreamOutput();
  private readonly stderr = new StreamOutput();
  private readonly exited: Promise<number | null>;
  private readonly ready: Promise<boolean>;
  alive = true;

  constructor(options: InvokeOptions, runtimeFile: string) {
    const { fn } = options;
    const [file, exportName] = fn.handler.split('.') as [string, string];
    const bundle = pathToFileURL(join(fn.bundleDirectory, `${file}.mjs`)).href;
    this.child = spawn(
      process.execPath,
      [runtimeFile, bundle, exportName, fn.logicalId, String(fn.memoryMb)],
      { env: environmentVariables(options), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }
    );
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.stdout.add(chunk));
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => this.stderr.add(chunk));
    // Dead as soon as any of these says so: an idle environment that died is never handed out.
    const dead = () => {
      this.alive = false;
    };
    this.child.on('error', dead);
    this.child.once('exit', dead);
    this.child.once('disconnect', dead);
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code) => {
        dead();
        resolve(code);
      })
    );
    this.ready = Promise.race([
      new Promise<boolean>((resolve) =>
        this.child.on('message', (message: RuntimeMessage) => {
          if (message.ready) resolve(true);
        })
      ),
      this.exited.then(() => false),
    ]);
  }

  async invoke(event: unknown, timeoutMs: number): Promise<Invocation> {
    const id = randomUUID();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.discard();
    }, timeoutMs);
    try {
      if (!(await this.ready)) return this.crashed(await this.exited);
      const outcome = new Promise<Pick<Invocation, 'result' | 'error'>>((resolve) => {
        const listener = (message: RuntimeMessage) => {
          if (message.id !== id || message.outcome === undefined) return;
          this.child.off('message', listener);
          resolve(message.outcome);
        };
        this.child.on('message', listener);
      });
      // A send that fails (the environment died between the pool and here) is a crash.
      this.child.send({ id, event, timeoutMs }, (error) => {
        if (error) this.discard();
      });
      const finished = await Promise.race([
        Promise.all([outcome, this.stdout.until(id), this.stderr.until(id)]),
        this.exited.then((code) => code),
      ]);
      if (!Array.isArray(finished)) {
        // What Lambda reports for a timeout (the environment is then discarded, as here).
        if (timedOut) {
          return {
            ...this.crashed(finished),
            error: {
              name: 'Sandbox.Timedout',
              message: `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`,
            },
          };
        }
        return this.crashed(finished);
      }
      const [result, stdout, stderr] = finished;
      return { ...result, logLines: jsonLines(stdout), stderr };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops the process (a timeout, a failed send, the end of the simulation). */
  discard(): void {
    this.alive = false;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private crashed(code: number | null): Invocation {
    const stderr = this.stderr.rest();
    return {
      error: {
        name: 'Runtime.ExitError',
        message: `exit ${code}, no result: ${stderr.slice(-2000)}`,
      },
      logLines: jsonLines(this.stdout.rest()),
      stderr,
    };
  }
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text.split('\n').flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as unknown;
      return parsed !== null && typeof parsed === 'object'
        ? [parsed as Record<string, unknown>]
        : [];
    } catch {
      return [];
    }
  });
}

/** The simulated account's Lambda service: warm environments per function, reused when idle. */
export class LambdaService {
  private readonly directory = mkdtempSync(join(tmpdir(), 'deploy-sim-lambda-'));
  private readonly runtimeFile = join(this.directory, 'runtime.mjs');
  private readonly idle = new Map<string, ExecutionEnvironment[]>();
  private readonly environments = new Set<ExecutionEnvironment>();

  constructor() {
    writeFileSync(this.runtimeFile, RUNTIME);
  }

  /** Invokes the function in an idle environment of it, or a new one (a cold start). */
  async invoke(options: InvokeOptions): Promise<Invocation> {
    const { fn } = options;
    // Same function, same environment: a call with other variables (endpoint, CA) starts cold.
    const key = JSON.stringify([fn.logicalId, fn.bundleDirectory, environmentVariables(options)]);
    const pool = this.idle.get(key) ?? [];
    this.idle.set(key, pool);
    let environment = pool.pop();
    while (environment !== undefined && !environment.alive) environment = pool.pop();
    if (environment === undefined) {
      environment = new ExecutionEnvironment(options, this.runtimeFile);
      this.environments.add(environment);
    }
    const timeoutMs = Math.min(options.timeoutMs ?? 60_000, fn.timeoutSeconds * 1000);
    const invocation = await environment.invoke(options.event, timeoutMs);
    if (environment.alive) pool.push(environment);
    else this.environments.delete(environment);
    return invocation;
  }

  /** Ends every environment: the next invocation of each function starts cold. */
  reset(): void {
    for (const environment of this.environments) environment.discard();
    this.environments.clear();
    this.idle.clear();
  }

  close(): void {
    this.reset();
    rmSync(this.directory, { recursive: true, force: true });
  }
}
