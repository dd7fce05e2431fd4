import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it, vi } from 'vitest';
import {
  IAM_ENGINE_PACKAGE,
  lazyIamEngine,
  loadIamEngine,
} from '../../../lambda/adapters/iam-engine/load.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';
import { nodeEntriesBuildOptions } from '../../../scripts/build-package.js';

const ROOT = join(import.meta.dirname, '../../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Value imports (static or dynamic) of each product file; `import type` is erased. */
function valueImports(file: string): { specifier: string; dynamic: boolean }[] {
  const text = readFileSync(file, 'utf8');
  const statics = [
    ...text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s*['"]([^'"]+)['"]/gm),
  ];
  const dynamics = [...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)];
  return [
    ...statics.map((match) => ({ specifier: match[1] ?? '', dynamic: false })),
    ...dynamics.map((match) => ({ specifier: match[1] ?? '', dynamic: true })),
  ];
}

const notInstalled = () =>
  Object.assign(new Error(`Cannot find package '${IAM_ENGINE_PACKAGE}' imported from x.js`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });

describe('loading the IAM policy engine', () => {
  it('returns the engine from the installed package', async () => {
    // Act
    const engine = await loadIamEngine();

    // Assess
    const output = await engine(
      {
        identity: [
          {
            name: 'p',
            type: 'inline',
            document: JSON.stringify({
              Version: '2012-10-17',
              Statement: { Effect: 'Allow', Action: 'ec2:DescribeImages', Resource: '*' },
            }),
          },
        ],
      },
      {
        PolicySourceArn: 'arn:aws:iam::111122223333:role/Controller',
        ActionNames: ['ec2:DescribeImages'],
      }
    );
    expect(output.EvaluationResults?.[0]?.EvalDecision).toBe('allowed');
  });

  it('names the package to install when it is missing', async () => {
    // Act
    const loading = loadIamEngine(async () => {
      throw notInstalled();
    });

    // Assess
    await expect(loading).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(loading).rejects.toMatchObject({
      reason: 'not-installed',
      message: expect.stringContaining(`npm install ${IAM_ENGINE_PACKAGE}`),
    });
  });

  it('passes any other failure on as it is', async () => {
    // Prepare
    const broken = new SyntaxError('Unexpected token');

    // Act
    const loading = loadIamEngine(async () => {
      throw broken;
    });

    // Assess
    await expect(loading).rejects.toBe(broken);
  });

  it('loads a lazy engine on its first simulation only, and once', async () => {
    // Prepare
    const engine = vi.fn(async () => ({ EvaluationResults: [], $metadata: {} }));
    const load = vi.fn(async () => engine);
    const lazy = lazyIamEngine(load);
    const input = { PolicySourceArn: 'arn:aws:iam::111122223333:role/C', ActionNames: ['s3:x'] };

    // Act
    const before = load.mock.calls.length;
    await lazy({ identity: [] }, input);
    await lazy({ identity: [] }, input);

    // Assess
    expect(before).toBe(0);
    expect(load).toHaveBeenCalledTimes(1);
    expect(engine).toHaveBeenCalledTimes(2);
  });
});

describe('the engine stays out of bundled product code', () => {
  it('is imported statically by its own module only, and reached by the loader’s dynamic import', () => {
    // Act
    const imports = sourceFiles(join(ROOT, 'lambda')).flatMap((file) =>
      valueImports(file)
        .filter(
          ({ specifier }) =>
            specifier.startsWith('@cloud-copilot/') ||
            specifier.endsWith('/simulate-principal-policy.js') ||
            specifier === './simulate-principal-policy.js'
        )
        .map(
          ({ specifier, dynamic }) =>
            `${relative(ROOT, file)} ${dynamic ? 'import()' : 'import'} ${specifier}`
        )
    );

    // Assess
    expect(imports.sort()).toEqual([
      'lambda/adapters/iam-engine/load.ts import() ./simulate-principal-policy.js',
      'lambda/adapters/iam-engine/simulate-principal-policy.ts import @cloud-copilot/iam-simulate',
    ]);
  });

  it('is an optional peer dependency of the package, installed for development', () => {
    // Act
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;

    // Assess
    expect(manifest.peerDependencies?.[IAM_ENGINE_PACKAGE]).toBeDefined();
    expect(manifest.peerDependenciesMeta?.[IAM_ENGINE_PACKAGE]).toEqual({ optional: true });
    expect(manifest.devDependencies?.[IAM_ENGINE_PACKAGE]).toBeDefined();
    expect(manifest.dependencies?.[IAM_ENGINE_PACKAGE]).toBeUndefined();
  });

  it('is external to the CLI bundle, imported only by a chunk the CLI loads dynamically', async () => {
    // Act: the package build's own options, with esbuild's metafile instead of files
    const result = await build({
      ...nodeEntriesBuildOptions(join(ROOT, 'dist-never-written')),
      write: false,
      metafile: true,
      absWorkingDir: ROOT,
      logLevel: 'error',
    });

    // Assess
    const outputs = result.metafile.outputs;
    const bundled = Object.values(outputs).flatMap((output) =>
      Object.keys(output.inputs).filter((input) => input.includes('@cloud-copilot/'))
    );
    expect(bundled).toEqual([]);
    const importers = Object.entries(outputs).filter(([, output]) =>
      output.imports.some((imported) => imported.path === IAM_ENGINE_PACKAGE && imported.external)
    );
    expect(importers).toHaveLength(1);
    const [engineChunk] = importers[0] ?? [];
    const staticallyReached = new Set<string>();
    const visit = (key: string) => {
      if (staticallyReached.has(key)) return;
      staticallyReached.add(key);
      for (const imported of outputs[key]?.imports ?? []) {
        if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
      }
    };
    const entries = Object.keys(outputs).filter((key) => /(^|\/)(cli|index)\.js$/.test(key));
    expect(entries).toHaveLength(2);
    for (const key of entries) visit(key);
    expect(staticallyReached.has(engineChunk ?? '')).toBe(false);
  }, 120_000);
});
