// The construct as another CDK app uses it: `new NodeClassScanner(stack, 'Scanner', { clusters })`
// with every other prop defaulted. The bundles are stubs standing in for the package's (named by
// context): the package's own dist/lambda is rebuilt in place by the real synth
// (test/deploy/synth.test.ts), which runs in parallel; the default location is checked without
// reading it, and the installed package's real bundles by the packed-tarball test.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ASSET_RESOURCE_METADATA_ENABLED_CONTEXT } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, describe, expect, it } from 'vitest';
import {
  LAMBDA_BUNDLES_CONTEXT_KEY,
  lambdaBundlesDirectoryOf,
  packageRoot,
} from '../../infra/constructs/scanner-function.js';
import { HANDLER_METADATA_KEY } from '../../infra/handler-roles.js';
import {
  defaultLambdaBundlesDirectory,
  NodeClassScanner,
  type NodeClassScannerProps,
  SCANNER_RUNTIME,
} from '../../infra/index.js';
import { HANDLER_NAMES, type HandlerName } from '../../lambda/shared/config.js';
import { REPO_ROOT } from './support.js';

const scratch = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-construct-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A bundles directory holding a stub `index.mjs` for each of `handlers`. */
function bundlesDirectory(name: string, handlers: readonly HandlerName[] = HANDLER_NAMES): string {
  const directory = join(scratch, name);
  for (const handler of handlers) {
    mkdirSync(join(directory, handler), { recursive: true });
    writeFileSync(
      join(directory, handler, 'index.mjs'),
      `export const handler = async () => '${name}/${handler}';\n`
    );
  }
  return directory;
}

/** Stand-in for the package's dist/lambda. */
const packagedBundles = bundlesDirectory('packaged');

function consumerStack(
  props: NodeClassScannerProps,
  env?: { region: string }
): { app: App; stack: Stack; scanner: NodeClassScanner } {
  const app = new App({
    context: {
      [ASSET_RESOURCE_METADATA_ENABLED_CONTEXT]: true,
      [LAMBDA_BUNDLES_CONTEXT_KEY]: packagedBundles,
    },
  });
  const stack = new Stack(app, 'Consumer', env === undefined ? {} : { env });
  const scanner = new NodeClassScanner(stack, 'Scanner', props);
  return { app, stack, scanner };
}

type FunctionResource = {
  Metadata: Record<string, string>;
  Properties: {
    Handler: string;
    Runtime: string;
    Architectures: string[];
    Code: { S3Bucket: unknown; S3Key: unknown };
    Environment: { Variables: Record<string, unknown> };
  };
};

function functionsByHandler(stack: Stack): Record<string, FunctionResource> {
  const resources = Template.fromStack(stack).findResources('AWS::Lambda::Function') as Record<
    string,
    FunctionResource
  >;
  return Object.fromEntries(
    Object.values(resources).map((resource) => [resource.Metadata[HANDLER_METADATA_KEY], resource])
  );
}

describe('NodeClassScanner from another CDK app', () => {
  it.each([
    ['an environment-agnostic stack', undefined],
    ['a stack in eu-west-1', { region: 'eu-west-1' }],
  ])('synthesizes with only clusters given, cdk-nag AwsSolutions clean, in %s', (_, env) => {
    // Prepare
    const { app, stack } = consumerStack({ clusters: ['prod'] }, env);

    // Act
    const functions = functionsByHandler(stack);
    const report = new AwsSolutionsChecks().validateScope(app);

    // Assess
    expect(Object.keys(functions).sort()).toEqual([...HANDLER_NAMES].sort());
    expect(
      report.violations.map(
        (violation) =>
          `${violation.ruleName} at ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`
      )
    ).toEqual([]);
  });

  it('deploys each handler from its own prebuilt bundle, on arm64, without source maps enabled', () => {
    // Prepare
    const { app, stack } = consumerStack({ clusters: ['prod'] });

    // Act
    const functions = functionsByHandler(stack);

    // Assess
    for (const handler of HANDLER_NAMES) {
      const fn = functions[handler];
      expect(fn?.Properties.Handler).toBe('index.handler');
      expect(fn?.Properties.Runtime).toBe(SCANNER_RUNTIME.name);
      expect(fn?.Properties.Architectures).toEqual(['arm64']);
      expect(fn?.Properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
      expect(fn?.Properties.Code.S3Key).toBeDefined();
      const staged = fn?.Metadata['aws:asset:path'] ?? '';
      expect(readFileSync(join(app.outdir, staged, 'index.mjs'), 'utf8')).toBe(
        readFileSync(join(packagedBundles, handler, 'index.mjs'), 'utf8')
      );
    }
  });

  it('deploys the bundles of lambdaBundlesDirectory when given', () => {
    // Prepare
    const directory = bundlesDirectory('custom');
    const { app, stack } = consumerStack({ clusters: ['prod'], lambdaBundlesDirectory: directory });

    // Act
    const functions = functionsByHandler(stack);

    // Assess
    for (const handler of HANDLER_NAMES) {
      const staged = functions[handler]?.Metadata['aws:asset:path'] ?? '';
      expect(readFileSync(join(app.outdir, staged, 'index.mjs'), 'utf8')).toContain(
        `'custom/${handler}'`
      );
    }
  });

  it('takes the bundles directory from context when the prop is not given; the prop wins', () => {
    // Prepare
    const fromContext = bundlesDirectory('context');
    const fromProp = bundlesDirectory('prop');
    const synthesized = (props: NodeClassScannerProps) => {
      const app = new App({
        context: {
          [ASSET_RESOURCE_METADATA_ENABLED_CONTEXT]: true,
          [LAMBDA_BUNDLES_CONTEXT_KEY]: fromContext,
        },
      });
      const stack = new Stack(app, 'Consumer');
      new NodeClassScanner(stack, 'Scanner', props);
      const staged = functionsByHandler(stack).dispatch?.Metadata['aws:asset:path'] ?? '';
      return readFileSync(join(app.outdir, staged, 'index.mjs'), 'utf8');
    };

    // Act
    const contextOnly = synthesized({ clusters: ['prod'] });
    const withProp = synthesized({ clusters: ['prod'], lambdaBundlesDirectory: fromProp });

    // Assess
    expect(contextOnly).toBe(readFileSync(join(fromContext, 'dispatch/index.mjs'), 'utf8'));
    expect(withProp).toBe(readFileSync(join(fromProp, 'dispatch/index.mjs'), 'utf8'));
    expect(contextOnly).not.toBe(withProp);
  });

  it('refuses a context value that is not a path', () => {
    // Prepare
    const app = new App({ context: { [LAMBDA_BUNDLES_CONTEXT_KEY]: 42 } });

    // Act
    const act = () =>
      new NodeClassScanner(new Stack(app, 'Consumer'), 'Scanner', { clusters: ['prod'] });

    // Assess
    expect(act).toThrow(`context ${LAMBDA_BUNDLES_CONTEXT_KEY} must be a directory path, got 42`);
  });

  it('fails synth naming the directory, the missing handlers and the build command', () => {
    // Prepare
    const directory = bundlesDirectory('partial', ['dispatch', 'ami-event']);

    // Act
    const act = () => consumerStack({ clusters: ['prod'], lambdaBundlesDirectory: directory });

    // Assess
    expect(act).toThrow(directory);
    expect(act).toThrow(/no scan-cluster\/index\.mjs, iam-event\/index\.mjs\)/);
    expect(act).toThrow('npm run build:lambdas');
  });
});

describe('the default bundles directory', () => {
  it("is this package's dist/lambda when neither prop nor context names one", () => {
    // Prepare
    const scope = new Stack(new App(), 'Consumer');

    // Act
    const directory = lambdaBundlesDirectoryOf(scope);

    // Assess
    expect(directory).toBe(join(resolve(REPO_ROOT), 'dist', 'lambda'));
  });
});

describe('packageRoot', () => {
  it('finds this repository from the construct sources', () => {
    // Act
    const root = packageRoot(
      pathToFileURL(join(REPO_ROOT, 'infra/constructs/scanner-function.ts')).href
    );

    // Assess
    expect(root).toBe(resolve(REPO_ROOT));
    expect(defaultLambdaBundlesDirectory()).toBe(join(resolve(REPO_ROOT), 'dist', 'lambda'));
  });

  it('finds the installed package from its bundled CDK entry, past nested package.json files', () => {
    // Prepare: node_modules/nodeclass-scanner/dist/cdk/index.js, with a nameless dist/package.json.
    const installed = join(scratch, 'consumer/node_modules/nodeclass-scanner');
    const entry = join(installed, 'dist/cdk/index.js');
    mkdirSync(dirname(entry), { recursive: true });
    writeFileSync(join(scratch, 'consumer/package.json'), '{"name":"consumer-app"}');
    writeFileSync(join(installed, 'package.json'), '{"name":"nodeclass-scanner"}');
    writeFileSync(join(installed, 'dist/package.json'), '{"type":"module"}');

    // Act
    const root = packageRoot(pathToFileURL(entry).href);

    // Assess
    expect(root).toBe(installed);
    expect(defaultLambdaBundlesDirectory(pathToFileURL(entry).href)).toBe(
      join(installed, 'dist/lambda')
    );
  });

  it('fails clearly when no nodeclass-scanner package.json is above the module', () => {
    // Prepare
    const stray = join(scratch, 'stray/lib/index.js');
    mkdirSync(dirname(stray), { recursive: true });

    // Act
    const act = () => packageRoot(pathToFileURL(stray).href);

    // Assess
    expect(act).toThrow(/no package\.json named nodeclass-scanner above .*lambdaBundlesDirectory/);
  });
});

describe('the nodeclass-scanner/cdk module graph', () => {
  const IMPORT =
    /(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

  /** Every package (bare specifier) the modules reachable from `entry` import at run time. */
  function packagesImported(entry: string): Set<string> {
    const packages = new Set<string>();
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8').replace(/^\s*(?:import|export) type [^;]*;/gm, '');
      for (const match of text.matchAll(IMPORT)) {
        const specifier = match[1] ?? match[2] ?? '';
        if (specifier.startsWith('.'))
          visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
        else packages.add(specifier);
      }
    };
    visit(entry);
    return packages;
  }

  it('needs no build tool at synth: no esbuild, TypeScript, tsx or NodejsFunction', () => {
    // Act
    const packages = [...packagesImported(join(REPO_ROOT, 'infra/index.ts'))];

    // Assess: a type-only import is erased, so it is skipped; everything else is loaded.
    expect(packages).toContain('aws-cdk-lib/aws-lambda');
    expect(
      packages.filter((name) =>
        /^(esbuild|typescript|tsx)(\/|$)|aws-lambda-nodejs|^\.\.?\/.*scripts\//.test(name)
      )
    ).toEqual([]);
  });
});
