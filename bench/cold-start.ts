// Cold start as deployed: the Lambda bundles `npm run build:lambdas` builds, synthesized into the
// deployment simulation's stack (cdk.json's app, as `cdk synth` runs it), each run the way the
// Lambda runtime runs it: a fresh Node process with the function's environment (the template's
// variables, NODE_OPTIONS included, and what Lambda sets) imports `index.mjs` and calls `handler`
// with a real event against the simulation's emulated AWS and Kubernetes APIs on 127.0.0.1.
// Measured inside the process, from process start: (a) init done (the bundle imported), (b) the
// first invocation done, then (c) a second, warm invocation of the same event, for reference.
// Median of several runs, every bundle interleaved so drift in machine load hits all alike.
//
// The floors are bundles built with exactly the handlers' esbuild options (lambdaBuildOptions,
// code splitting included) and run by the same harness in the same environment: a handler that
// does nothing (what Node costs), and one that makes one EC2 call (the least an AWS-calling
// handler pays). Ratios are to the EC2-call floor.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { HANDLER_NAMES, type HandlerName } from '../lambda/shared/env-config.js';
import { lambdaBuildOptions } from '../scripts/build-lambdas.js';
import { SIMULATION_CONTEXT } from '../test/deploy/deployment-context.js';
import type { QueuedMessage } from '../test/deploy/emulator/aws.js';
import { environmentVariables } from '../test/deploy/lambda-runner.js';
import { Simulation } from '../test/deploy/simulation.js';
import type { DeployedFunction } from '../test/deploy/template.js';
import { median } from './harness.js';
import { synthesizeApp } from './synth.js';

export const FLOORS = {
  empty: { name: 'floor: empty handler', source: 'bench/floor/empty.ts' },
  ec2Call: { name: 'floor: one EC2 call', source: 'bench/floor/ec2-call.ts' },
} as const;

/** A floor's esbuild options: the handlers' own, only the entry point differs. */
export function floorBuildOptions(root: string, source: string, directory: string) {
  return lambdaBuildOptions(join(root, source), directory);
}

/**
 * What the Lambda runtime does with a function, timed: argv is the bundle URL, the export, the
 * function name, its memory, the event file and where to write the timings. Times are
 * `performance.now()`: milliseconds since the process started; CPU times are the process's own
 * (user + system, `process.cpuUsage()`) since it started, which waiting does not move.
 */
export const RUNTIME_HARNESS = `import { readFileSync, writeFileSync } from 'node:fs';
const [bundle, exportName, functionName, memory, eventFile, resultFile] = process.argv.slice(2);
const event = JSON.parse(readFileSync(eventFile, 'utf8'));
const cpuMs = () => { const used = process.cpuUsage(); return (used.user + used.system) / 1000; };
const module = await import(bundle);
const initDoneMs = performance.now();
const initCpuMs = cpuMs();
const invoke = async (id) => {
  const started = Date.now();
  const context = {
    functionName, functionVersion: '$LATEST', memoryLimitInMB: memory,
    invokedFunctionArn: 'arn:aws:lambda:' + process.env.AWS_REGION + ':' + (process.env.EMULATED_ACCOUNT ?? '111122223333') + ':function:' + functionName,
    awsRequestId: id, logGroupName: '/aws/lambda/' + functionName, logStreamName: 'bench',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 900000 - (Date.now() - started),
  };
  try {
    return { result: (await module[exportName](event, context)) ?? null };
  } catch (error) {
    return { error: String(error?.stack ?? error) };
  }
};
const first = await invoke('first');
const firstDoneMs = performance.now();
const firstCpuMs = cpuMs();
const warm = await invoke('warm');
const warmDoneMs = performance.now();
const warmCpuMs = cpuMs();
writeFileSync(resultFile, JSON.stringify({ initDoneMs, firstDoneMs, warmDoneMs, initCpuMs, firstCpuMs, warmCpuMs, first, warm }));
process.exit(0);
`;

export interface RuntimeRun {
  /** Process start → the bundle imported. */
  readonly initDoneMs: number;
  /** Process start → the first invocation returned. */
  readonly firstDoneMs: number;
  /** Process start → a second (warm) invocation of the same event returned. */
  readonly warmDoneMs: number;
  /** CPU the process used by init done, first invocation done and warm invocation done. */
  readonly initCpuMs: number;
  readonly firstCpuMs: number;
  readonly warmCpuMs: number;
  readonly first: { readonly result?: unknown; readonly error?: string };
  readonly warm: { readonly result?: unknown; readonly error?: string };
}

/**
 * One process running `bundle`'s export as the Lambda runtime would; throws when it failed.
 * Asynchronous: the emulated AWS answering it lives in this process's event loop.
 */
export async function runAsLambda(input: {
  readonly harness: string;
  readonly bundle: string;
  readonly exportName: string;
  readonly functionName: string;
  readonly memoryMb: number;
  readonly event: unknown;
  readonly env: Readonly<Record<string, string>>;
  readonly scratch: string;
}): Promise<RuntimeRun> {
  const eventFile = join(input.scratch, 'event.json');
  const resultFile = join(input.scratch, 'result.json');
  writeFileSync(eventFile, JSON.stringify(input.event));
  rmSync(resultFile, { force: true });
  const child = spawn(
    process.execPath,
    [
      input.harness,
      pathToFileURL(input.bundle).href,
      input.exportName,
      input.functionName,
      String(input.memoryMb),
      eventFile,
      resultFile,
    ],
    { env: input.env, stdio: ['ignore', 'ignore', 'pipe'] }
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
  const code = await new Promise<number | null>((done) => child.once('close', done));
  clearTimeout(timer);
  if (code !== 0 || !existsSync(resultFile)) {
    throw new Error(`${input.functionName}: the runtime exited ${code}: ${stderr}`);
  }
  const run = JSON.parse(readFileSync(resultFile, 'utf8')) as RuntimeRun;
  for (const invocation of [run.first, run.warm]) {
    const failures = (invocation.result as { batchItemFailures?: unknown[] } | null | undefined)
      ?.batchItemFailures;
    if (invocation.error !== undefined || (failures !== undefined && failures.length > 0)) {
      throw new Error(
        `${input.functionName}: invocation failed: ${invocation.error ?? JSON.stringify(failures)}`
      );
    }
  }
  return run;
}

export interface ColdStartMeasurement {
  readonly name: string;
  /** Bytes of JavaScript in the asset (entry and every chunk). */
  readonly bytes: number;
  /** Bytes parsed at init: the entry and the chunks it imports statically. */
  readonly initBytes: number;
  /** What the first and warm invocations were given. */
  readonly event: string;
  /** (a) Median, process start → init done. */
  readonly initMs: number;
  /** (b) Median of first invocation done − init done. */
  readonly firstInvocationMs: number;
  /** Median, process start → first invocation done. */
  readonly initPlusFirstInvocationMs: number;
  readonly initPlusFirstInvocationRuns: readonly number[];
  /** Median of the warm invocation's own time (same event, same process). */
  readonly warmInvocationMs: number;
  /**
   * What being cold costs: median over runs of (init + first invocation) − the warm invocation,
   * each run against its own warm invocation (differences of medians would mix runs).
   */
  readonly coldPartMs: number;
  readonly coldPartRuns: readonly number[];
  /**
   * The same in CPU time: CPU by the first invocation's end − the warm invocation's CPU. Waits
   * (IAM's account-wide budget above all, whose bucket the first invocation finds fuller than the
   * warm one) move the wall-clock cold part, not this one.
   */
  readonly coldCpuMs: number;
  readonly coldCpuRuns: readonly number[];
  /** initMs / the EC2-call floor's. */
  readonly initRatioToFloor: number;
  /** initPlusFirstInvocationMs / the EC2-call floor's. */
  readonly initPlusFirstInvocationRatioToFloor: number;
}

/** What one steady-state scheduled scan of a cluster did, as the emulators saw it. */
export interface ScanFootprint {
  readonly cluster: string;
  readonly nodeClasses: number;
  /** Every AWS request of the scan worker's role (DynamoDB, KMS and SNS included). */
  readonly awsCalls: number;
  readonly dynamodbWrites: number;
  readonly dynamodbReads: number;
  readonly kmsRequests: number;
  readonly snsPublishes: number;
  /** The metric series its EMF documents wrote: `Metric{Dimension=value,…}`. */
  readonly emfSeries: readonly string[];
  /** Bytes of the invocation's JSON log lines (what CloudWatch Logs ingests, roughly). */
  readonly logBytes: number;
}

/** Each EMF document's series: metric name and its dimension values (a custom metric each). */
function seriesOf(lines: readonly Record<string, unknown>[]): string[] {
  const series = new Set<string>();
  for (const line of lines) {
    const directive = (
      line._aws as
        | { CloudWatchMetrics?: { Dimensions: string[][]; Metrics: { Name: string }[] }[] }
        | undefined
    )?.CloudWatchMetrics?.[0];
    if (directive === undefined) continue;
    const dimensions = [...(directive.Dimensions[0] ?? [])]
      .sort()
      .map((name) => `${name}=${String(line[name])}`)
      .join(',');
    for (const metric of directive.Metrics) series.add(`${metric.Name}{${dimensions}}`);
  }
  return [...series].sort();
}

const DYNAMODB_WRITES = [
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
] as const;
const DYNAMODB_READS = ['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems'] as const;

export interface ColdStartResult {
  readonly node: string;
  readonly runs: number;
  /** NODE_OPTIONS the template sets on the functions ('' when none). */
  readonly nodeOptions: string;
  readonly floors: readonly ColdStartMeasurement[];
  readonly handlers: readonly ColdStartMeasurement[];
  /** The steady-state scheduled scans of the simulation's clusters (the cost model's inputs). */
  readonly scheduledScans: readonly ScanFootprint[];
}

const round = (value: number) => Math.round(value * 10) / 10;

/** Process start → first invocation done, less the warm invocation's own time. */
const coldPartOf = (run: RuntimeRun) => run.firstDoneMs - (run.warmDoneMs - run.firstDoneMs);
/** CPU by the first invocation's end, less the warm invocation's own CPU. */
const coldCpuOf = (run: RuntimeRun) => run.firstCpuMs - (run.warmCpuMs - run.firstCpuMs);

/** `index.mjs` and the chunks it imports statically, transitively: what init parses. */
function initFilesOf(directory: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    // Static imports only (`import"…"`, `from"…"`); `import("…")` is loaded on first use.
    for (const match of readFileSync(file, 'utf8').matchAll(
      /(?:\bfrom|\bimport)\s*"(\.{1,2}\/[^"]+\.mjs)"/g
    )) {
      visit(resolve(dirname(file), match[1] as string));
    }
  };
  visit(join(directory, 'index.mjs'));
  return [...seen];
}

function jsFiles(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.mjs'))
    .map((file) => join(directory, file));
}

const bytesOf = (files: readonly string[]) =>
  files.reduce((sum, file) => sum + statSync(file).size, 0);

/** `ScanCluster` → `scan-cluster`. */
function handlerNameOf(fn: DeployedFunction): HandlerName {
  const name = HANDLER_NAMES.find(
    (candidate) => candidate === fn.name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()
  );
  if (name === undefined) throw new Error(`${fn.name} is not a handler of the stack`);
  return name;
}

const exampleEvent = (root: string, name: string) =>
  JSON.parse(readFileSync(join(root, 'examples/events', `${name}.json`), 'utf8')) as Record<
    string,
    unknown
  > & { detail: Record<string, unknown> };

interface Subject {
  readonly name: string;
  readonly fn: DeployedFunction;
  readonly bundle: string;
  readonly event: unknown;
  readonly eventDescription: string;
  readonly bytes: number;
  readonly initBytes: number;
}

export async function measureColdStart(root: string, runs = 5): Promise<ColdStartResult> {
  const directory = mkdtempSync(join(tmpdir(), 'nodeclass-cold-start-'));
  let simulation: Simulation | undefined;
  try {
    // cdk.json's app builds the bundles (scripts/build-lambdas.ts), then synthesizes on them.
    const assembly = join(directory, 'cdk.out');
    synthesizeApp(root, assembly, SIMULATION_CONTEXT);
    const sim = await Simulation.start(assembly);
    simulation = sim;
    // The state a scheduled scan leaves: the table holds the clusters' findings and index. A
    // second schedule is the steady state: its scans' footprint feeds the cost model.
    const footprints: ScanFootprint[] = [];
    let scanMessage: QueuedMessage | undefined;
    for (const round of ['first', 'steady'] as const) {
      const dispatched = await sim.invoke('Dispatch', exampleEvent(root, 'scheduled-event'));
      if (dispatched.error) throw new Error(`dispatch failed: ${dispatched.error.message}`);
      for (const message of sim.aws.queued.splice(0)) {
        const cluster = JSON.parse(message.body).cluster as string;
        const before = sim.aws.calls.length;
        const published = sim.aws.published.length;
        const { failed, invocations } = await sim.deliverQueued([message]);
        if (failed.length > 0) throw new Error(`the scan of ${cluster} failed`);
        if (cluster === 'prod-use1') scanMessage = message;
        if (round === 'first') continue;
        const calls = sim.aws.calls
          .slice(before)
          .filter((call) => call.principal === sim.fn('ScanCluster').roleLogicalId);
        const count = (service: string, actions?: readonly string[]) =>
          calls.filter(
            (call) =>
              call.service === service &&
              (actions === undefined || actions.includes(call.action.split(':')[1] ?? ''))
          ).length;
        const lines = invocations.flatMap((invocation) => invocation.logLines);
        footprints.push({
          cluster,
          nodeClasses:
            sim.world.eks.clusters.find((entry) => entry.name === cluster)?.kubernetes
              ?.ec2NodeClasses.length ?? 0,
          awsCalls: calls.length,
          dynamodbWrites: count('dynamodb', DYNAMODB_WRITES),
          dynamodbReads: count('dynamodb', DYNAMODB_READS),
          kmsRequests: count('kms'),
          snsPublishes: sim.aws.published.length - published,
          emfSeries: seriesOf(lines),
          logBytes: lines.reduce((sum, line) => sum + JSON.stringify(line).length + 1, 0),
        });
      }
    }
    if (scanMessage === undefined) throw new Error('no scan request for prod-use1');

    // An image a stored NodeClass pins, and a controller role a stored NodeClass depends on.
    const pinnedImage = 'ami-0b1e6f3a9c7d42531';
    const amiEvent = exampleEvent(root, 'ami-state-change-available');
    amiEvent.region = sim.world.region;
    amiEvent.resources = [`arn:aws:ec2:${sim.world.region}::image/${pinnedImage}`];
    amiEvent.detail.ImageId = pinnedImage;
    const iamEvent = exampleEvent(root, 'iam-put-role-policy');
    (iamEvent.detail.requestParameters as Record<string, unknown>).roleName =
      'KarpenterControllerRole-prod-use1';
    const events: Record<HandlerName, { event: unknown; description: string }> = {
      dispatch: { event: exampleEvent(root, 'scheduled-event'), description: 'the schedule' },
      'scan-cluster': {
        event: sim.sqsEvent(scanMessage),
        description: 'a scheduled scan of prod-use1 (3 NodeClasses), unchanged since the last',
      },
      'ami-event': { event: amiEvent, description: `${pinnedImage} available (pinned by one)` },
      'iam-event': {
        event: iamEvent,
        description: 'PutRolePolicy on prod-use1’s controller role (rescans its NodeClasses)',
      },
    };

    const subjects: Subject[] = [];
    const scanCluster = sim.fn('ScanCluster');
    for (const [key, floor] of Object.entries(FLOORS)) {
      const floorDirectory = join(directory, 'floor', key);
      await build({
        ...floorBuildOptions(root, floor.source, floorDirectory),
        absWorkingDir: root,
        logLevel: 'error',
      });
      const files = jsFiles(floorDirectory);
      subjects.push({
        name: floor.name,
        // The scan worker's environment and role: the same runtime, the same credentials.
        fn: scanCluster,
        bundle: join(floorDirectory, 'index.mjs'),
        event: { imageId: pinnedImage },
        eventDescription: key === 'ec2Call' ? `DescribeImages of ${pinnedImage}` : 'none',
        bytes: bytesOf(files),
        initBytes: bytesOf(files),
      });
    }
    for (const fn of [...sim.functions.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const name = handlerNameOf(fn);
      subjects.push({
        name,
        fn,
        bundle: join(fn.bundleDirectory, `${fn.handler.split('.')[0]}.mjs`),
        event: events[name].event,
        eventDescription: events[name].description,
        bytes: bytesOf(jsFiles(fn.bundleDirectory)),
        initBytes: bytesOf(initFilesOf(fn.bundleDirectory)),
      });
    }

    const harness = join(directory, 'runtime.mjs');
    writeFileSync(harness, RUNTIME_HARNESS);
    const run = async (subject: Subject) => {
      const result = await runAsLambda({
        harness,
        bundle: subject.bundle,
        exportName: subject.fn.handler.split('.')[1] ?? 'handler',
        functionName: subject.fn.logicalId,
        memoryMb: subject.fn.memoryMb,
        event: subject.event,
        env: environmentVariables({
          fn: subject.fn,
          event: subject.event,
          endpoint: sim.aws.endpoint,
          accountId: sim.template.account.id,
          region: sim.template.account.region,
          caFile: sim.caFile,
        }),
        scratch: directory,
      });
      // What the invocations left behind is not the next run's business.
      sim.aws.queued.length = 0;
      sim.aws.published.length = 0;
      return result;
    };
    // One warm-up of the disk cache each, then interleaved runs.
    for (const subject of subjects) await run(subject);
    const samples = subjects.map(() => [] as RuntimeRun[]);
    for (let index = 0; index < runs; index++) {
      for (const [position, subject] of subjects.entries()) {
        samples[position]?.push(await run(subject));
      }
    }

    const summarize = (subject: Subject, taken: readonly RuntimeRun[]) => ({
      name: subject.name,
      bytes: subject.bytes,
      initBytes: subject.initBytes,
      event: subject.eventDescription,
      initMs: round(median(taken.map((r) => r.initDoneMs))),
      firstInvocationMs: round(median(taken.map((r) => r.firstDoneMs - r.initDoneMs))),
      initPlusFirstInvocationMs: round(median(taken.map((r) => r.firstDoneMs))),
      initPlusFirstInvocationRuns: taken.map((r) => round(r.firstDoneMs)),
      warmInvocationMs: round(median(taken.map((r) => r.warmDoneMs - r.firstDoneMs))),
      coldPartMs: round(median(taken.map(coldPartOf))),
      coldPartRuns: taken.map((r) => round(coldPartOf(r))),
      coldCpuMs: round(median(taken.map(coldCpuOf))),
      coldCpuRuns: taken.map((r) => round(coldCpuOf(r))),
    });
    const summaries = subjects.map((subject, index) => summarize(subject, samples[index] ?? []));
    const floor = summaries.find((summary) => summary.name === FLOORS.ec2Call.name);
    if (floor === undefined) throw new Error('the EC2-call floor was not measured');
    const withRatios = summaries.map((summary) => ({
      ...summary,
      initRatioToFloor: Math.round((summary.initMs / floor.initMs) * 100) / 100,
      initPlusFirstInvocationRatioToFloor:
        Math.round((summary.initPlusFirstInvocationMs / floor.initPlusFirstInvocationMs) * 100) /
        100,
    }));
    const floorNames = new Set<string>(Object.values(FLOORS).map((f) => f.name));
    return {
      node: process.version,
      runs,
      nodeOptions: scanCluster.environment.NODE_OPTIONS ?? '',
      floors: withRatios.filter((summary) => floorNames.has(summary.name)),
      handlers: withRatios.filter((summary) => !floorNames.has(summary.name)),
      scheduledScans: footprints,
    };
  } finally {
    await simulation?.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

// `npx tsx bench/cold-start.ts [runs]`: this measurement alone, printed as JSON.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.argv[2] ?? 5);
  process.stdout.write(`${JSON.stringify(await measureColdStart(process.cwd(), runs), null, 2)}\n`);
}
