// What the deployed bundles parse at cold start: each handler's init (index.mjs and the chunks it
// imports statically) holds no SDK client and no zod; those load per phase through `import()`.
// Read from esbuild's metafile of the same build options (no timing here: bench/cold-start.ts).
// Also: the bench's floors are built with those same options, and its runtime harness times what
// it says it times.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { FLOORS, floorBuildOptions, RUNTIME_HARNESS, runAsLambda } from '../../bench/cold-start.js';
import { HANDLER_NAMES, type HandlerName } from '../../lambda/shared/env-config.js';
import { handlerEntryPoint, lambdaBuildOptions, REPO_ROOT } from '../../scripts/build-lambdas.js';

const OUT = join(tmpdir(), 'nodeclass-layout-test');

interface Layout {
  readonly outputs: Metafile['outputs'];
  readonly entryKey: string;
  readonly initKeys: ReadonlySet<string>;
}

async function layoutOf(name: HandlerName): Promise<Layout> {
  const result = await build({
    ...lambdaBuildOptions(handlerEntryPoint(name), join(OUT, name)),
    write: false,
    metafile: true,
    absWorkingDir: REPO_ROOT,
    logLevel: 'error',
  });
  const outputs = result.metafile.outputs;
  const entryKey = Object.keys(outputs).find((key) => key.endsWith(`${name}/index.mjs`)) ?? '';
  const initKeys = new Set<string>();
  const visit = (key: string) => {
    if (initKeys.has(key)) return;
    initKeys.add(key);
    for (const imported of outputs[key]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
    }
  };
  visit(entryKey);
  return { outputs, entryKey, initKeys };
}

const inputsOf = (layout: Layout, keys: Iterable<string>) =>
  [...keys].flatMap((key) => Object.keys(layout.outputs[key]?.inputs ?? {}));

const phasesOf = (layout: Layout) =>
  Object.entries(layout.outputs)
    .flatMap(([key, output]) =>
      key !== layout.entryKey && output.entryPoint?.startsWith('lambda/') ? [output.entryPoint] : []
    )
    .sort();

const layouts = new Map<HandlerName, Layout>();

beforeAll(async () => {
  for (const name of HANDLER_NAMES) layouts.set(name, await layoutOf(name));
}, 120_000);

describe.each(HANDLER_NAMES)('the %s bundle', (name) => {
  it('exports handler from index.mjs and keeps every file inside its own directory', () => {
    // Act
    const layout = layouts.get(name) as Layout;
    // Assess
    expect(layout.outputs[layout.entryKey]?.exports).toContain('handler');
    for (const key of Object.keys(layout.outputs)) {
      const path = relative(join(OUT, name), resolve(REPO_ROOT, key));
      expect(path.startsWith('..'), path).toBe(false);
    }
  });

  it('parses no SDK client and no zod at init', () => {
    // Act
    const layout = layouts.get(name) as Layout;
    const initInputs = inputsOf(layout, layout.initKeys);
    // Assess
    expect(
      initInputs.filter((input) => /node_modules\/(@aws-sdk\/client-|zod\/)/.test(input))
    ).toEqual([]);
    // The whole bundle still carries them, behind `import()`.
    expect(
      inputsOf(layout, Object.keys(layout.outputs)).some((input) =>
        input.includes('@aws-sdk/client-')
      )
    ).toBe(true);
  });

  it('carries only the SDK schemas and the zod it uses', () => {
    // Prepare
    const layout = layouts.get(name) as Layout;
    const bytes = new Map<string, number>();
    for (const output of Object.values(layout.outputs)) {
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
        bytes.set(input, (bytes.get(input) ?? 0) + bytesInOutput);
      }
    }
    const bundled = [...bytes].filter(([, size]) => size > 0).map(([input]) => input);
    // Assess: `import * as z` lets the bundler drop zod's other locales (`import { z }` keeps
    // them all); the SDK schema plugin keeps EC2's 550 KB of schemas to the operations called.
    expect(bundled.filter((input) => /zod\/v4\/locales\/(?!en\.js$)/.test(input))).toEqual([]);
    const ec2Schemas = bytes.get('node_modules/@aws-sdk/client-ec2/dist-es/schemas/schemas_0.js');
    expect(ec2Schemas ?? 0).toBeLessThan(150_000);
  });
});

describe('phases', () => {
  it('load the scanning stack, the state table and publishing apart, where they are used', () => {
    // (Further phases, such as opt-in integrations, may exist; these must.)
    // Assess
    const scanning = {
      config: 'lambda/handlers/phases/config.ts',
      state: 'lambda/handlers/phases/state.ts',
      scan: 'lambda/handlers/phases/scan.ts',
      publish: 'lambda/handlers/phases/publish.ts',
    };
    expect(phasesOf(layouts.get('scan-cluster') as Layout)).toEqual(
      expect.arrayContaining([...Object.values(scanning), 'lambda/core/ports/service.ts'])
    );
    expect(phasesOf(layouts.get('ami-event') as Layout)).toEqual(
      expect.arrayContaining([
        ...Object.values(scanning),
        'lambda/handlers/phases/ami-event.ts',
        'lambda/handlers/phases/ami-images.ts',
      ])
    );
    expect(phasesOf(layouts.get('iam-event') as Layout)).toEqual(
      expect.arrayContaining([...Object.values(scanning), 'lambda/handlers/phases/iam-event.ts'])
    );
    expect(phasesOf(layouts.get('dispatch') as Layout)).toEqual([
      'lambda/handlers/phases/cluster-discovery.ts',
      'lambda/handlers/phases/scan-queue.ts',
    ]);
  });

  it('keep the EC2 client out of the state, publishing and IAM-event phases', () => {
    // Prepare: a phase's own chunk and the chunks it imports statically.
    const layout = layouts.get('iam-event') as Layout;
    const closureOf = (source: string) => {
      const start = Object.keys(layout.outputs).find(
        (key) => layout.outputs[key]?.entryPoint === source
      );
      const keys = new Set<string>();
      const visit = (key: string) => {
        if (keys.has(key)) return;
        keys.add(key);
        for (const imported of layout.outputs[key]?.imports ?? []) {
          if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
        }
      };
      if (start !== undefined) visit(start);
      return inputsOf(layout, keys);
    };
    // Assess
    for (const phase of ['state', 'publish', 'iam-event']) {
      const inputs = closureOf(`lambda/handlers/phases/${phase}.ts`);
      expect(inputs.length, phase).toBeGreaterThan(0);
      expect(
        inputs.filter((input) => input.includes('@aws-sdk/client-ec2')),
        phase
      ).toEqual([]);
    }
    expect(
      closureOf('lambda/handlers/phases/scan.ts').some((input) =>
        input.includes('@aws-sdk/client-ec2')
      )
    ).toBe(true);
  });
});

describe('the cold-start floors', () => {
  it('are built with exactly the handlers’ esbuild options, code splitting included', () => {
    for (const floor of Object.values(FLOORS)) {
      // Act
      const options = floorBuildOptions(REPO_ROOT, floor.source, join(OUT, 'floor'));
      const handlerOptions = lambdaBuildOptions(join(REPO_ROOT, floor.source), join(OUT, 'floor'));
      // Assess
      expect(options).toEqual(handlerOptions);
      expect(options.splitting).toBe(true);
    }
  });
});

describe('the cold-start runtime harness', () => {
  it('times process start → init → first invocation → warm invocation in wall-clock and CPU time, calling handler with the event', async () => {
    // Prepare: a bundle whose init takes 30 ms and whose invocation takes 20 ms.
    const scratch = mkdtempSync(join(tmpdir(), 'cold-start-harness-'));
    try {
      writeFileSync(
        join(scratch, 'index.mjs'),
        `const until = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
until(30);
export const handler = async (event, context) => { until(20); return { seen: event.n, name: context.functionName }; };`
      );
      const harness = join(scratch, 'runtime.mjs');
      writeFileSync(harness, RUNTIME_HARNESS);
      // Act
      const run = await runAsLambda({
        harness,
        bundle: join(scratch, 'index.mjs'),
        exportName: 'handler',
        functionName: 'Fn',
        memoryMb: 128,
        event: { n: 7 },
        env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1' },
        scratch,
      });
      // Assess
      expect(run.first.result).toEqual({ seen: 7, name: 'Fn' });
      expect(run.initDoneMs).toBeGreaterThanOrEqual(30);
      expect(run.firstDoneMs - run.initDoneMs).toBeGreaterThanOrEqual(20);
      expect(run.warmDoneMs - run.firstDoneMs).toBeGreaterThanOrEqual(20);
      // CPU time, cumulative: the busy loops use some at every stage.
      expect(run.initCpuMs).toBeGreaterThan(0);
      expect(run.firstCpuMs).toBeGreaterThan(run.initCpuMs);
      expect(run.warmCpuMs).toBeGreaterThan(run.firstCpuMs);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('fails when the handler throws, instead of timing a failure', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'cold-start-harness-'));
    try {
      writeFileSync(
        join(scratch, 'index.mjs'),
        'export const handler = async () => { throw new Error("boom"); };'
      );
      const harness = join(scratch, 'runtime.mjs');
      writeFileSync(harness, RUNTIME_HARNESS);
      await expect(
        runAsLambda({
          harness,
          bundle: join(scratch, 'index.mjs'),
          exportName: 'handler',
          functionName: 'Fn',
          memoryMb: 128,
          event: {},
          env: { PATH: process.env.PATH ?? '' },
          scratch,
        })
      ).rejects.toThrow(/Fn: invocation failed: Error: boom/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
