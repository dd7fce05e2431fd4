// Runs one bundled handler from the cloud assembly the way Lambda does: a fresh Node process, the
// template's environment plus what the Lambda runtime sets (region, function name, the role's
// credentials), the handler export called with the event and a context. The only addition is
// AWS_ENDPOINT_URL, which points every SDK client at the emulator.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const BOOTSTRAP = `
import { readFileSync, writeFileSync } from 'node:fs';
const [bundle, exportName, eventFile, resultFile, functionName, memory, timeoutMs] = process.argv.slice(2);
const started = Date.now();
const context = {
  functionName, functionVersion: '$LATEST', memoryLimitInMB: memory,
  invokedFunctionArn: 'arn:aws:lambda:' + process.env.AWS_REGION + ':' + process.env.EMULATED_ACCOUNT + ':function:' + functionName,
  awsRequestId: crypto.randomUUID(), logGroupName: '/aws/lambda/' + functionName, logStreamName: 'emulated',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => Number(timeoutMs) - (Date.now() - started),
};
const module = await import(bundle);
try {
  const result = await module[exportName](JSON.parse(readFileSync(eventFile, 'utf8')), context);
  writeFileSync(resultFile, JSON.stringify({ result: result ?? null }));
} catch (error) {
  writeFileSync(resultFile, JSON.stringify({ error: { name: error?.name ?? 'Error', message: String(error?.message ?? error) } }));
}
process.exit(0);
`;

export async function invokeFunction(options: {
  readonly fn: DeployedFunction;
  readonly event: unknown;
  readonly endpoint: string;
  readonly accountId: string;
  readonly region: string;
  /** The emulator's CA, trusted like Lambda trusts AWS's. */
  readonly caFile: string;
  /** Cap below the function's own timeout, to keep the suite fast. */
  readonly timeoutMs?: number;
}): Promise<Invocation> {
  const { fn } = options;
  const dir = mkdtempSync(join(tmpdir(), 'deploy-sim-'));
  try {
    const [file, exportName] = fn.handler.split('.') as [string, string];
    const bundle = pathToFileURL(join(fn.bundleDirectory, `${file}.mjs`)).href;
    writeFileSync(join(dir, 'bootstrap.mjs'), BOOTSTRAP);
    writeFileSync(join(dir, 'event.json'), JSON.stringify(options.event));
    const timeoutMs = Math.min(options.timeoutMs ?? 60_000, fn.timeoutSeconds * 1000);
    const env: Record<string, string> = {
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
    const child = spawn(
      process.execPath,
      [
        join(dir, 'bootstrap.mjs'),
        bundle,
        exportName,
        join(dir, 'event.json'),
        join(dir, 'result.json'),
        fn.logicalId,
        String(fn.memoryMb),
        String(timeoutMs),
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] }
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    const logLines = stdout.split('\n').flatMap((line) => {
      try {
        const parsed = JSON.parse(line) as unknown;
        return parsed !== null && typeof parsed === 'object'
          ? [parsed as Record<string, unknown>]
          : [];
      } catch {
        return [];
      }
    });
    let outcome: Pick<Invocation, 'result' | 'error'>;
    try {
      outcome = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    } catch {
      outcome = {
        error: {
          name: 'Runtime.ExitError',
          message: `exit ${code}, no result: ${stderr.slice(-2000)}`,
        },
      };
    }
    return { ...outcome, logLines, stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
