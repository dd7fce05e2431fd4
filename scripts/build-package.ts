// Builds what the npm package ships (`npm run build`, and `prepack` before every `npm pack`):
//   dist/lib/     the CLI (`cli.js`) and the programmatic API (`index.js`), bundled; the AWS SDK
//                 sits in split chunks that only live modes import
//   dist/cdk/     the construct (`nodeclass-scanner/cdk`), with aws-cdk-lib and constructs external
//   dist/lambda/  the prebuilt Lambda bundles the construct deploys (scripts/build-lambdas.ts)
//   dist/types/   declarations for both entries
// Nothing here is loaded at run time by TypeScript: the installed package needs no tsx or esbuild.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { buildLambdaBundles } from './build-lambdas.js';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));
const DEFAULT_OUT_DIRECTORY = join(REPO_ROOT, 'dist');

/** The oldest Node the package supports (package.json `engines`). */
const NODE_TARGET = 'node20.19';

// ESM bundles cannot `require`; a few CJS dependencies (and cdk-nag's require of aws-cdk-lib) do.
const CREATE_REQUIRE_BANNER =
  "import { createRequire as __scannerCreateRequire } from 'node:module';" +
  'const require = __scannerCreateRequire(import.meta.url);';

/** `import packageJson from '…/package.json'` reads the version: bundle that, not the whole file. */
const packageIdentityOnly: Plugin = {
  name: 'package-identity-only',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /[\\/]package\.json$/ }, async ({ path }) => {
      if (path !== join(REPO_ROOT, 'package.json')) return undefined;
      const { name, version } = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

const COMMON: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: NODE_TARGET,
  // The SDK and friends ship ESM builds: smaller, and splittable.
  mainFields: ['module', 'main'],
  banner: { js: CREATE_REQUIRE_BANNER },
  logLevel: 'warning',
  plugins: [packageIdentityOnly],
};

/**
 * The IAM policy engine (AGPL-3.0) is an optional peer dependency, never bundled: loaded from the
 * user's node_modules by a dynamic import when a world file gives policy documents.
 */
const OPTIONAL_PEER_EXTERNALS = ['@cloud-copilot/*'];

/** CLI and API in one build: shared code in shared chunks, the SDK only behind dynamic imports. */
export function nodeEntriesBuildOptions(outDirectory: string): BuildOptions {
  return {
    ...COMMON,
    entryPoints: {
      cli: join(REPO_ROOT, 'lambda/cli/run.ts'),
      index: join(REPO_ROOT, 'lambda/api.ts'),
    },
    external: OPTIONAL_PEER_EXTERNALS,
    outdir: outDirectory,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    minify: true,
  };
}

export async function buildNodeEntries(outDirectory: string): Promise<void> {
  await build(nodeEntriesBuildOptions(outDirectory));
}

/** The construct for consumers' CDK apps: their aws-cdk-lib and constructs, not a copy. */
export async function buildCdkEntry(outDirectory: string): Promise<void> {
  await build({
    ...COMMON,
    entryPoints: { index: join(REPO_ROOT, 'infra/index.ts') },
    outdir: outDirectory,
    external: ['aws-cdk-lib', 'aws-cdk-lib/*', 'constructs'],
    // Construct ids, class names and stack traces stay readable in a consumer's synth errors.
    minify: false,
  });
}

async function emitDeclarations(outDirectory: string): Promise<void> {
  try {
    await promisify(execFile)(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(REPO_ROOT, 'tsconfig.build.json'),
        '--outDir',
        outDirectory,
      ],
      { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 }
    );
  } catch (error) {
    const failed = error as { stdout?: string; message: string };
    throw new Error(`declarations: ${failed.message}\n${failed.stdout ?? ''}`);
  }
}

export async function buildPackage(outDirectory = DEFAULT_OUT_DIRECTORY): Promise<void> {
  rmSync(outDirectory, { recursive: true, force: true });
  await Promise.all([
    buildNodeEntries(join(outDirectory, 'lib')),
    buildCdkEntry(join(outDirectory, 'cdk')),
    buildLambdaBundles(join(outDirectory, 'lambda')),
    emitDeclarations(join(outDirectory, 'types')),
  ]);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildPackage(process.argv[2] === undefined ? undefined : resolve(process.argv[2]));
}
