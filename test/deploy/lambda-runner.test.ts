// The simulation's Lambda service on a tiny bundle: warm reuse, one environment per concurrent
// invocation, and environments discarded after a timeout or a crash, as Lambda does.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type InvokeOptions, LambdaService } from './lambda-runner.js';
import type { DeployedFunction } from './template.js';

// Module scope lives as long as the environment: `initId` names it, `calls` counts its invocations.
const BUNDLE = `
const initId = Math.random().toString(36).slice(2);
let calls = 0;
export async function handler(event, context) {
  calls += 1;
  console.log(JSON.stringify({ message: 'handling', kind: event.kind, initId }));
  if (event.kind === 'throw') throw new TypeError('bad event');
  if (event.kind === 'warn') console.error('careful: ' + calls);
  // Fails after the handler returned, while the environment sits idle.
  if (event.kind === 'late-crash') setTimeout(() => { throw new Error('late'); }, 5);
  if (event.kind === 'exit') process.exit(3);
  if (event.kind === 'hang') await new Promise(() => setInterval(() => {}, 1000));
  if (event.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, 300));
  return { initId, calls, remaining: context.getRemainingTimeInMillis() > 0, region: process.env.AWS_REGION };
}
`;

let directory: string;
let lambda: LambdaService;
let initFailure: string;

function options(event: unknown, timeoutMs = 10_000, bundleDirectory = directory): InvokeOptions {
  const fn: DeployedFunction = {
    name: 'Probe',
    logicalId: 'ProbeFunction',
    bundleDirectory,
    handler: 'index.handler',
    environment: { PROBE: '1' },
    roleLogicalId: 'ProbeRole',
    roleArn: 'arn:aws:iam::111122223333:role/probe',
    timeoutSeconds: 30,
    memoryMb: 128,
  };
  return {
    fn,
    event,
    endpoint: 'https://127.0.0.1:9',
    accountId: '111122223333',
    region: 'eu-west-1',
    caFile: '/nonexistent/ca.pem',
    timeoutMs,
  };
}

type Probe = { initId: string; calls: number; remaining: boolean; region: string };

beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'lambda-runner-test-'));
  writeFileSync(join(directory, 'index.mjs'), BUNDLE);
  initFailure = join(directory, 'broken');
  mkdirSync(initFailure);
  writeFileSync(
    join(initFailure, 'index.mjs'),
    "console.error('init: table name missing'); throw new Error('no TABLE_NAME');\n"
  );
});

// Each test has its own service: none depends on environments another left warm.
beforeEach(() => {
  lambda = new LambdaService();
});

afterEach(() => lambda.close());

afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

describe('LambdaService', () => {
  it('serves consecutive invocations from one warm environment, with their own log lines', async () => {
    // Act
    const first = await lambda.invoke(options({ kind: 'ok' }));
    const second = await lambda.invoke(options({ kind: 'ok' }));

    // Assess
    const [a, b] = [first.result as Probe, second.result as Probe];
    expect(a).toMatchObject({ calls: 1, remaining: true, region: 'eu-west-1' });
    expect(b).toMatchObject({ initId: a.initId, calls: 2 });
    expect(first.logLines).toEqual([{ message: 'handling', kind: 'ok', initId: a.initId }]);
    expect(second.logLines).toEqual([{ message: 'handling', kind: 'ok', initId: a.initId }]);
  });

  it('starts a second environment for a concurrent invocation', async () => {
    // Act
    const [one, two] = await Promise.all([
      lambda.invoke(options({ kind: 'slow' })),
      lambda.invoke(options({ kind: 'slow' })),
    ]);

    // Assess
    expect((one.result as Probe).initId).not.toBe((two.result as Probe).initId);
  });

  it('keeps the environment after the handler throws, reporting the error', async () => {
    // Prepare
    const before = (await lambda.invoke(options({ kind: 'ok' }))).result as Probe;

    // Act
    const failed = await lambda.invoke(options({ kind: 'throw' }));
    const after = (await lambda.invoke(options({ kind: 'ok' }))).result as Probe;

    // Assess
    expect(failed.error).toEqual({ name: 'TypeError', message: 'bad event' });
    expect(after.initId).toBe(before.initId);
    expect(after.calls).toBe(before.calls + 2);
  });

  it('discards an environment that exits or times out; the next invocation starts cold', async () => {
    // Prepare: two warm environments
    await Promise.all([
      lambda.invoke(options({ kind: 'slow' })),
      lambda.invoke(options({ kind: 'slow' })),
    ]);

    // Act
    const exited = await lambda.invoke(options({ kind: 'exit' }));
    const hung = await lambda.invoke(options({ kind: 'hang' }, 500));
    const fresh = (await lambda.invoke(options({ kind: 'ok' }))).result as Probe;
    const fresher = (await lambda.invoke(options({ kind: 'ok' }))).result as Probe;

    // Assess
    expect(exited.error).toMatchObject({ name: 'Runtime.ExitError', message: /^exit 3,/ });
    expect(hung.error).toEqual({
      name: 'Sandbox.Timedout',
      message: 'Task timed out after 0.50 seconds',
    });
    expect(fresh.calls).toBe(1);
    expect(fresher).toMatchObject({ initId: fresh.initId, calls: 2 });
  });

  it("keeps each invocation's stderr apart", async () => {
    // Act
    const first = await lambda.invoke(options({ kind: 'warn' }));
    const second = await lambda.invoke(options({ kind: 'warn' }));

    // Assess
    // (the first also holds Node's start-up warning about the test's missing CA file)
    expect(first.stderr).toMatch(/careful: 1\n$/);
    expect(second.stderr).toBe('careful: 2\n');
  });

  it('starts cold after an environment died while idle, losing no event', async () => {
    // Prepare
    const before = (await lambda.invoke(options({ kind: 'late-crash' }))).result as Probe;
    await new Promise((resolve) => setTimeout(resolve, 300));

    // Act
    const after = await lambda.invoke(options({ kind: 'ok' }));

    // Assess
    expect(after.error).toBeUndefined();
    expect(after.result).toMatchObject({ calls: 1 });
    expect((after.result as Probe).initId).not.toBe(before.initId);
  });

  it('reports a crash during init with what it printed', async () => {
    // Act
    const failed = await lambda.invoke(options({ kind: 'ok' }, 10_000, initFailure));

    // Assess
    expect(failed.error?.name).toBe('Runtime.ExitError');
    expect(failed.error?.message).toContain('no TABLE_NAME');
    expect(failed.stderr).toContain('init: table name missing');
  });

  it('starts every function cold again after reset', async () => {
    // Prepare
    const before = (await lambda.invoke(options({ kind: 'ok' }))).result as Probe;

    // Act
    lambda.reset();
    const after = (await lambda.invoke(options({ kind: 'ok' }))).result as Probe;

    // Assess
    expect(after.initId).not.toBe(before.initId);
    expect(after.calls).toBe(1);
  });
});
