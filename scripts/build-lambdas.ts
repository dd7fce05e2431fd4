// Builds the Lambda bundles the construct deploys (`Code.fromAsset`): one directory per handler,
// `index.mjs` exporting `handler`, and the chunks its phases load with `import()` under `chunks/`
// in the same directory. Split, so a module a handler reaches only through `import()` is parsed
// when first used rather than at cold start (without splitting esbuild inlines it). Prebuilt, so a
// consumer's `cdk synth` needs neither esbuild nor TypeScript. Run with `npm run build:lambdas`.
import { renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { HANDLER_NAMES, type HandlerName } from '../lambda/shared/env-config.js';
import { sdkSchemaTreeShaking } from './sdk-schema-tree-shaking.js';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
export const LAMBDA_BUNDLES_DIRECTORY = join(REPO_ROOT, 'dist/lambda');

/** Where a bundle's split chunks go, inside its own directory. */
export const CHUNKS_DIRECTORY = 'chunks';

// ESM bundles cannot `require`; a few CJS dependencies still do. Every chunk gets the banner.
const CREATE_REQUIRE_BANNER =
  "import { createRequire as __scannerCreateRequire } from 'node:module';" +
  'const require = __scannerCreateRequire(import.meta.url);';

/** The esbuild options of a handler's bundle: `entryPoint` → `<directory>/index.mjs` + chunks. */
export function lambdaBuildOptions(entryPoint: string, directory: string) {
  return {
    entryPoints: { index: entryPoint },
    outdir: directory,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: `${CHUNKS_DIRECTORY}/[name]-[hash]`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: true,
    banner: { js: CREATE_REQUIRE_BANNER },
    // Only the SDK schemas of the operations a bundle calls: parsed at the first AWS call.
    plugins: [sdkSchemaTreeShaking],
    logLevel: 'warning',
  } satisfies BuildOptions;
}

export function handlerEntryPoint(name: HandlerName): string {
  return join(REPO_ROOT, 'lambda/handlers', `${name}.ts`);
}

export async function buildLambdaBundle(
  name: HandlerName,
  outDirectory = LAMBDA_BUNDLES_DIRECTORY
): Promise<string> {
  const directory = join(outDirectory, name);
  // Built beside, then swapped in: a concurrent synth never finds the directory half written.
  // Chunk names hash the source maps, whose paths are relative, so the move changes no byte.
  const staging = join(outDirectory, `.${name}-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    await build(lambdaBuildOptions(handlerEntryPoint(name), staging));
    rmSync(directory, { recursive: true, force: true });
    renameSync(staging, directory);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return directory;
}

export async function buildLambdaBundles(
  outDirectory = LAMBDA_BUNDLES_DIRECTORY
): Promise<Record<HandlerName, string>> {
  const entries = await Promise.all(
    HANDLER_NAMES.map(async (name) => [name, await buildLambdaBundle(name, outDirectory)] as const)
  );
  return Object.fromEntries(entries) as Record<HandlerName, string>;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildLambdaBundles(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
}
