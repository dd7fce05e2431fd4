// The package as users get it: `npm pack`, then `npm install <tarball> --omit=dev --offline` in an
// empty directory. The CLI, the programmatic API and the CDK construct must work from there with
// no TypeScript loader, no bundler and (for offline scans) without loading the AWS SDK.
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lambda/cli/main.js';
import {
  addCdkLibraries,
  addNodeTypes,
  type Consumer,
  consumerEnv,
  installConsumer,
} from './consumer.js';
import { packedTarball, REPO_ROOT, removePackedTarball, runCommand } from './pack.js';

const execFileAsync = promisify(execFile);
const EXAMPLES = join(REPO_ROOT, 'examples');
const EXAMPLE_NODECLASSES = join(EXAMPLES, 'nodeclasses');
const EXAMPLE_WORLD = join(EXAMPLES, 'world.json');
const SETUP_TIMEOUT_MS = 600_000;
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  license: string;
  files: string[];
};

/**
 * What the package may hold: the launcher, the build output, the documentation and the files it
 * tells users to use (demo inputs, the cluster RBAC, the config schema), the license and metadata.
 */
const PACKED =
  /^(bin\/nodeclass-scan\.js|dist\/.+|docs\/checks\/[a-z0-9-]+\.md|docs\/checks\/README\.md|docs\/[a-z0-9-]+\.md|schema\/nodeclass-scanner\.schema\.json|examples\/world\.json|examples\/(nodeclasses|events)\/[a-z0-9-]+\.(yaml|json)|infra\/cluster-rbac\.yaml|package\.json|README\.md|LICENSE|NOTICE)$/;

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command in the consumer; a non-zero exit is an outcome, not a failure. */
async function inConsumer(
  consumer: Consumer,
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = consumer.env
): Promise<Outcome> {
  return execFileAsync(file, [...args], {
    cwd: consumer.directory,
    env,
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: typeof error.code === 'number' ? error.code : -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    })
  );
}

/**
 * Type-checks one consumer file against the installed package's declarations (strict, NodeNext),
 * declarations included (`skipLibCheck: false`): they must compile with only the package
 * installed. Without `types`, no `@types/node` either.
 */
async function typeCheckInConsumer(
  consumer: Consumer,
  file: string,
  source: string,
  options: { readonly types?: readonly string[]; readonly lib?: readonly string[] } = {}
): Promise<Outcome> {
  writeFileSync(
    join(consumer.directory, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        ...(options.lib === undefined ? {} : { lib: options.lib }),
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: options.types ?? [],
      },
      files: [file],
    })
  );
  writeFileSync(join(consumer.directory, file), source);
  return inConsumer(consumer, process.execPath, [
    join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
    '-p',
    'tsconfig.json',
  ]);
}

/** The in-process CLI from the sources: what the installed bundle must agree with. */
async function sourceCliJson(args: readonly string[]): Promise<{ code: number; report: unknown }> {
  let stdout = '';
  const code = await runCli(args, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: () => undefined,
    readStdin: async () => '',
    stdoutIsTty: false,
    stderrIsTty: false,
    env: { NO_COLOR: '1' },
    now: () => new Date(),
  });
  return { code, report: JSON.parse(stdout) };
}

function withoutScanTime(report: unknown): unknown {
  const { scannedAt: _scannedAt, ...rest } = report as Record<string, unknown>;
  return rest;
}

/** Files npm would pack from the checkout, as `npm pack --dry-run` lists them. */
async function packListing(): Promise<string[]> {
  const { stdout } = await runCommand(
    'npm',
    ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'],
    { cwd: REPO_ROOT }
  );
  const [listing] = JSON.parse(stdout) as { files: { path: string }[] }[];
  return (listing?.files ?? []).map((file) => file.path);
}

async function tarballListing(tarball: string): Promise<string[]> {
  const { stdout } = await runCommand('tar', ['-tzf', tarball], { cwd: REPO_ROOT });
  return stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''));
}

afterAll(removePackedTarball);

describe('the files npm packs', () => {
  it('are the launcher, the build output and the package metadata: no tests, benchmarks or sources', async () => {
    // Act
    const files = await packListing();
    // Assess
    expect(files.filter((file) => !PACKED.test(file))).toEqual([]);
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    expect(files).toContain('bin/nodeclass-scan.js');
  });
});

describe('the installed package', { timeout: 180_000 }, () => {
  let tarball: string;
  let consumer: Consumer;

  beforeAll(async () => {
    tarball = await packedTarball();
    consumer = await installConsumer(tarball, 'cli');
  }, SETUP_TIMEOUT_MS);
  afterAll(() => consumer?.cleanup());

  it('ships the bundled CLI, API, construct, Lambda bundles and declarations: no tests, sources or maps', async () => {
    // Act
    const files = await tarballListing(tarball);
    // Assess
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/nodeclass-scan.js',
        'dist/lib/cli.js',
        'dist/lib/index.js',
        'dist/cdk/index.js',
        'dist/types/lambda/api.d.ts',
        'dist/types/infra/index.d.ts',
        'dist/lambda/scan-cluster/index.mjs',
      ])
    );
    expect(files.filter((file) => !PACKED.test(file))).toEqual([]);
    expect(files.filter((file) => /\.(ts|map)$/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('ships the Apache-2.0 LICENSE, the NOTICE and the notices of every package bundled into dist/', () => {
    // Prepare
    const installed = join(consumer.directory, 'node_modules/nodeclass-scanner');
    const license = readFileSync(join(installed, 'LICENSE'), 'utf8');
    const notices = readFileSync(join(installed, 'dist/THIRD-PARTY-NOTICES.txt'), 'utf8');
    const [list = '', texts = ''] = notices.split(/^License and notice texts \(\d+\)$/m);
    const listed = [...list.matchAll(/^(@?[^@\s]+)@(\S+) {2}(\S+) {2}\[([^\]]+)\]/gm)].map(
      ([, name, version, spdx, parts]) => ({ name, version, spdx, parts })
    );
    // The construct's bundle is not minified: esbuild names each bundled module's path there.
    const inCdkBundle = new Set(
      [
        ...readFileSync(join(installed, 'dist/cdk/index.js'), 'utf8').matchAll(
          /^\/\/ (?:.*\/)?node_modules\/((?:@[^/\s]+\/)?[^/\s]+)\//gm
        ),
      ].map(([, name]) => name)
    );
    // Assess: the whole Apache License 2.0, and the package's own notice
    expect(license).toBe(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'));
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
    expect(license.length).toBeGreaterThan(11_000);
    expect(packageJson.license).toBe('Apache-2.0');
    expect(readFileSync(join(installed, 'NOTICE'), 'utf8')).toContain(
      'dist/THIRD-PARTY-NOTICES.txt'
    );
    // Every package whose code is bundled, with its version and license, and a license text each
    expect(listed.length).toBeGreaterThan(20);
    const names = listed.map((entry) => entry.name);
    for (const name of [
      'zod',
      'yaml',
      'commander',
      '@aws-sdk/client-ec2',
      '@smithy/core',
      '@middy/core',
      '@aws-lambda-powertools/logger',
      ...inCdkBundle,
    ]) {
      expect(names).toContain(name);
    }
    for (const entry of listed) {
      expect(entry.version, entry.name).toMatch(/^\d+\.\d+\.\d+/);
      expect(entry.spdx, entry.name).not.toBe('UNKNOWN');
      expect(texts, `${entry.name}@${entry.version}`).toContain(`${entry.name}@${entry.version} (`);
    }
    expect(texts).toContain('Permission is hereby granted');
    expect(texts).toContain('Apache License');
  });

  it('ships every file its documentation points to, and the targets of its relative links', async () => {
    // Prepare: the docs as packed
    const files = new Set(await tarballListing(tarball));
    const docs = [...files].filter((file) => file.endsWith('.md'));
    const missing: string[] = [];
    // Act
    for (const doc of docs) {
      const text = readFileSync(
        join(consumer.directory, 'node_modules/nodeclass-scanner', doc),
        'utf8'
      );
      // Relative Markdown links, resolved from the document
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const resolved = join(doc, '..', target).replace(/\/$/, '');
        if (!files.has(resolved) && ![...files].some((file) => file.startsWith(`${resolved}/`))) {
          missing.push(`${doc}: link ${target}`);
        }
      }
      // Files named in the text (kubectl apply -f infra/cluster-rbac.yaml, --world examples/…):
      // what users apply, scan or read, not the sources a developer edits (.ts)
      for (const [path = ''] of text.matchAll(
        /(?<![\w./:@-])(?:infra|examples|schema|docs|dist)\/[\w./-]*[\w/]/g
      )) {
        // Sources, and templates such as docs/checks/ID.md
        if (/\.(ts|js)$/.test(path) || /\/[A-Z]+\./.test(path)) continue;
        const present = path.endsWith('/')
          ? [...files].some((file) => file.startsWith(path))
          : files.has(path);
        if (!present) missing.push(`${doc}: ${path}`);
      }
    }
    // Assess
    expect([...new Set(missing)]).toEqual([]);
    expect(files).toContain('infra/cluster-rbac.yaml');
    expect(files).toContain('examples/world.json');
  });

  it("has declarations that name no package but Node's and the optional peer dependencies", () => {
    // Prepare
    const types = join(consumer.directory, 'node_modules/nodeclass-scanner/dist/types');
    const declarations = readdirSync(types, { recursive: true, encoding: 'utf8' }).filter((file) =>
      file.endsWith('.d.ts')
    );
    // Act: bare specifiers, outside comments
    const named = new Set(
      declarations.flatMap((file) =>
        [
          ...readFileSync(join(types, file), 'utf8')
            .replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
            .matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'".][^'"]*)['"]/g),
        ].map(([, specifier]) => specifier)
      )
    );
    // Assess: zod's declarations travel with the package, under vendor/ with its license
    expect(
      [...named].filter((name) => !/^(aws-cdk-lib(\/.*)?|constructs)$/.test(name ?? ''))
    ).toEqual([]);
    expect(declarations).toContain('vendor/zod/index.d.ts');
    expect(existsSync(join(types, 'vendor/zod/LICENSE'))).toBe(true);
    expect(declarations.filter((file) => file.startsWith('lambda/adapters/aws/'))).toEqual([]);
  });

  it('installs nothing else: no TypeScript loader, bundler, SDK or CDK in node_modules', () => {
    // Act
    const installed = readdirSync(join(consumer.directory, 'node_modules')).filter(
      (entry) => !entry.startsWith('.')
    );
    // Assess
    expect(installed).toEqual(['nodeclass-scanner']);
    const resolveFromConsumer = createRequire(join(consumer.directory, 'package.json')).resolve;
    for (const tool of ['tsx', 'esbuild', 'typescript']) {
      expect(() => resolveFromConsumer(tool)).toThrow(/Cannot find module/);
    }
  });

  it('answers --version with the package version', async () => {
    // Act
    const outcome = await inConsumer(consumer, 'node_modules/.bin/nodeclass-scan', ['--version']);
    // Assess
    expect(outcome).toEqual({ code: 0, stdout: `${packageJson.version}\n`, stderr: '' });
  });

  it('scans the example manifests exactly as the sources do', async () => {
    // Prepare
    const args = ['scan', EXAMPLE_NODECLASSES, '--format', 'json'];
    const fromSources = await sourceCliJson(args);
    // Act
    const outcome = await inConsumer(consumer, 'node_modules/.bin/nodeclass-scan', args);
    // Assess
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(fromSources.code);
    expect(outcome.code).toBe(1);
    expect(withoutScanTime(JSON.parse(outcome.stdout))).toEqual(
      withoutScanTime(fromSources.report)
    );
  });

  it("writes SARIF whose rule help carries each check page's How to fix", async () => {
    // Prepare
    const args = ['scan', EXAMPLE_NODECLASSES, '--format', 'sarif'];
    // Act
    const outcome = await inConsumer(consumer, 'node_modules/.bin/nodeclass-scan', args);
    // Assess
    const rules: { id: string; help: { markdown: string } }[] = JSON.parse(outcome.stdout).runs[0]
      .tool.driver.rules;
    const rule = rules.find((candidate) => candidate.id === 'instance-profile-is-name');
    const page = readFileSync(join(REPO_ROOT, 'docs/checks/instance-profile-is-name.md'), 'utf8');
    const firstFixLine = page.split('## How to fix')[1]?.trim().split('\n')[0] ?? '';
    expect(firstFixLine).not.toBe('');
    expect(rule?.help.markdown).toContain(firstFixLine);
  });

  it("prints a check's page from the docs it ships, and ships the config file's JSON schema", async () => {
    // Act
    const outcome = await inConsumer(consumer, 'node_modules/.bin/nodeclass-scan', [
      'checks',
      'instance-profile-is-name',
    ]);
    // Assess
    expect(outcome.code).toBe(0);
    expect(outcome.stdout).toMatch(/^HOW TO FIX$/m);
    expect(outcome.stdout).toContain('instanceProfile: KarpenterNodeInstanceProfile');
    const schema = join(
      consumer.directory,
      'node_modules/nodeclass-scanner/schema/nodeclass-scanner.schema.json'
    );
    expect(JSON.parse(readFileSync(schema, 'utf8'))).toMatchObject({ type: 'object' });
  });

  it('scans the example world offline exactly as the sources do', async () => {
    // Prepare
    const args = ['scan', '--world', EXAMPLE_WORLD, '--format', 'json'];
    const fromSources = await sourceCliJson(args);
    // Act
    const outcome = await inConsumer(consumer, 'node_modules/.bin/nodeclass-scan', args);
    // Assess
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(fromSources.code);
    expect(withoutScanTime(JSON.parse(outcome.stdout))).toEqual(
      withoutScanTime(fromSources.report)
    );
  });

  describe('loads the AWS SDK only for live modes', () => {
    /** Records every file module loaded, through a module hook given with --import. */
    async function loadedFiles(args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}) {
      const log = join(consumer.directory, `loaded-${Math.random().toString(36).slice(2)}.log`);
      const hook = join(consumer.directory, 'record-loads.mjs');
      writeFileSync(
        hook,
        [
          "import { register } from 'node:module';",
          `register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(
            [
              "import { appendFileSync } from 'node:fs';",
              'export async function load(url, context, next) {',
              `  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, url + '\\n');`,
              '  return next(url, context);',
              '}',
            ].join('\n')
          )}));`,
        ].join('\n')
      );
      const outcome = await inConsumer(
        consumer,
        'node_modules/.bin/nodeclass-scan',
        args,
        consumerEnv({ NODE_OPTIONS: `--import=${hook}`, ...extraEnv })
      );
      const urls = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
      return { outcome, files: urls.map((url) => new URL(url).pathname) };
    }

    /** Code only the SDK's clients carry: every request's user agent header. */
    function loadsSdk(files: readonly string[]): boolean {
      return files.some((file) => readFileSync(file, 'utf8').includes('x-amz-user-agent'));
    }

    it.each([
      ['--version', ['--version']],
      ['a manifest scan', ['scan', EXAMPLE_NODECLASSES]],
      ['a --world scan', ['scan', '--world', EXAMPLE_WORLD]],
      ['the check catalog', ['checks']],
    ])('%s never loads it', async (_name, args) => {
      // Act
      const { outcome, files } = await loadedFiles(args);
      // Assess
      expect(outcome.stderr).toBe('');
      expect(files.some((file) => file.endsWith('/dist/lib/cli.js'))).toBe(true);
      expect(loadsSdk(files)).toBe(false);
    });

    it('a live scan loads it', async () => {
      // Act: nothing listens on the endpoint, so the preflight fails at once, after loading the SDK
      const { outcome, files } = await loadedFiles(['scan', EXAMPLE_NODECLASSES, '--aws'], {
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
        AWS_MAX_ATTEMPTS: '1',
      });
      // Assess
      expect(outcome.code).toBe(2);
      expect(loadsSdk(files)).toBe(true);
    });
  });

  describe('programmatic API', () => {
    it('returns the report the CLI prints, for manifests, manifest text and a world', async () => {
      // Prepare
      const script = join(consumer.directory, 'api.mjs');
      writeFileSync(
        script,
        `import { readFileSync } from 'node:fs';
import { scan, breachesThreshold, VERSION, ConfigError } from 'nodeclass-scanner';
const manifestsReport = await scan({ paths: [${JSON.stringify(EXAMPLE_NODECLASSES)}] });
const worldReport = await scan({ world: ${JSON.stringify(EXAMPLE_WORLD)} });
const text = readFileSync(${JSON.stringify(join(EXAMPLE_NODECLASSES, readdirSync(EXAMPLE_NODECLASSES).sort()[0] ?? ''))}, 'utf8');
const textReport = await scan({ manifests: text });
let refused;
try { await scan({ paths: ['x'], only: ['no-such-check'] }); } catch (error) {
  refused = { isConfigError: error instanceof ConfigError, message: error.message };
}
console.log(JSON.stringify({ VERSION, manifestsReport, worldReport, textReport, refused,
  breaches: breachesThreshold(manifestsReport, 'high') }));
`
      );
      const cliManifests = await sourceCliJson(['scan', EXAMPLE_NODECLASSES, '--format', 'json']);
      const cliWorld = await sourceCliJson(['scan', '--world', EXAMPLE_WORLD, '--format', 'json']);
      // Act
      const outcome = await inConsumer(consumer, process.execPath, [script]);
      // Assess
      expect(outcome.stderr).toBe('');
      const result = JSON.parse(outcome.stdout) as Record<string, unknown>;
      expect(result.VERSION).toBe(packageJson.version);
      expect(withoutScanTime(result.manifestsReport)).toEqual(withoutScanTime(cliManifests.report));
      expect(withoutScanTime(result.worldReport)).toEqual(withoutScanTime(cliWorld.report));
      expect(result.textReport).toMatchObject({ summary: { inputErrors: [] } });
      expect((result.textReport as { findings: unknown[] }).findings.length).toBeGreaterThan(0);
      expect(result.refused).toEqual({
        isConfigError: true,
        message: expect.stringContaining('unknown check id "no-such-check"'),
      });
      expect(result.breaches).toBe(true);
    });

    it('is typed: a TypeScript consumer compiles against the shipped declarations', async () => {
      // Act
      const outcome = await typeCheckInConsumer(
        consumer,
        'typed.ts',
        `import { scan, type ScanReport, type Severity } from 'nodeclass-scanner';
export async function worst(): Promise<Severity | undefined> {
  const report: ScanReport = await scan({ paths: ['manifests/'], environment: 'non-production' });
  return report.findings[0]?.severity;
}
// @ts-expect-error paths is a list of strings: a typed package refuses a number
void scan({ paths: 1 });
`
      );
      // Assess
      expect(outcome).toMatchObject({ code: 0, stdout: '' });
    });
  });
});

describe('a consumer CDK app', { timeout: 180_000 }, () => {
  let consumer: Consumer;

  beforeAll(async () => {
    consumer = await installConsumer(await packedTarball(), 'cdk');
    await addCdkLibraries(consumer);
    // A TypeScript CDK app on Node.js has Node's types (aws-cdk-lib's declarations need them).
    await addNodeTypes(consumer);
  }, SETUP_TIMEOUT_MS);
  afterAll(() => consumer?.cleanup());

  it('synthesizes NodeClassScanner from the installed package, with the prebuilt bundles and no esbuild', async () => {
    // Prepare
    writeFileSync(
      join(consumer.directory, 'app.mjs'),
      `import { App, Stack } from 'aws-cdk-lib';
import { NodeClassScanner } from 'nodeclass-scanner/cdk';
const app = new App({ outdir: 'cdk.out' });
const stack = new Stack(app, 'Platform', { env: { account: '123456789012', region: 'eu-west-1' } });
new NodeClassScanner(stack, 'Scanner', { clusters: ['prod'] });
app.synth();
`
    );
    // Act
    const outcome = await inConsumer(consumer, process.execPath, ['app.mjs']);
    // Assess
    expect(outcome.code, outcome.stderr).toBe(0);
    const resolveFromCdk = createRequire(
      join(consumer.directory, 'node_modules/aws-cdk-lib/package.json')
    ).resolve;
    expect(() => resolveFromCdk('esbuild')).toThrow(/Cannot find module/);
    const template = JSON.parse(
      readFileSync(join(consumer.directory, 'cdk.out/Platform.template.json'), 'utf8')
    ) as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
    const functions = Object.values(template.Resources).filter(
      (resource) => resource.Type === 'AWS::Lambda::Function'
    );
    const scannerFunctions = functions.filter((fn) => fn.Properties.Handler === 'index.handler');
    expect(scannerFunctions.length).toBeGreaterThan(0);
    for (const fn of scannerFunctions) {
      expect(fn.Properties).toMatchObject({ Architectures: ['arm64'] });
      expect(String(fn.Properties.Runtime)).toMatch(/^nodejs(2[2-9]|[3-9]\d)\.x$/);
    }
    // Every asset of the scanner's functions is a prebuilt bundle: index.mjs, no sources.
    const assets = readdirSync(join(consumer.directory, 'cdk.out')).filter((entry) =>
      entry.startsWith('asset.')
    );
    const bundleAssets = assets.filter((asset) =>
      existsSync(join(consumer.directory, 'cdk.out', asset, 'index.mjs'))
    );
    expect(bundleAssets.length).toBeGreaterThan(0);
    for (const asset of bundleAssets) {
      const entries = readdirSync(join(consumer.directory, 'cdk.out', asset));
      expect(entries.filter((entry) => entry.endsWith('.ts'))).toEqual([]);
    }
  });

  it('is typed: a TypeScript CDK app compiles against the shipped declarations', async () => {
    // Act
    const outcome = await typeCheckInConsumer(
      consumer,
      'typed-app.ts',
      `import { App, Duration, Stack } from 'aws-cdk-lib';
  import { NodeClassScanner, type NodeClassScannerProps } from 'nodeclass-scanner/cdk';
  const app = new App();
  const stack = new Stack(app, 'Platform');
  const props: NodeClassScannerProps = { clusters: ['prod'], schedule: Duration.minutes(30) };
  export const scanner = new NodeClassScanner(stack, 'Scanner', props);
  // @ts-expect-error clusters is required: a typed construct refuses props without it
  new NodeClassScanner(stack, 'Untyped', {});
  `,
      { types: ['node'], lib: ['ES2023'] }
    );
    // Assess
    expect(outcome, outcome.stdout).toMatchObject({ code: 0, stdout: '' });
  });
});

describe('a checkout of the repository', { timeout: 180_000 }, () => {
  it('runs `npx nodeclass-scan scan examples/` from the sources (README set-up)', async () => {
    // Act
    const outcome = await execFileAsync('npx', ['nodeclass-scan', 'scan', 'examples/'], {
      cwd: REPO_ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      timeout: 120_000,
    }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout })
    );
    // Assess: the examples hold failing NodeClasses on purpose
    expect(outcome.code).toBe(1);
    expect(outcome.stdout).toMatch(/Summary: \d+ fail/);
  });

  it('commits the launcher executable, so a fresh clone runs it (not only after an npm install chmods it)', async () => {
    // Act
    const { stdout } = await execFileAsync(
      'git',
      ['ls-files', '--stage', 'bin/nodeclass-scan.js'],
      {
        cwd: REPO_ROOT,
      }
    );
    // Assess
    expect(stdout).toMatch(/^100755 /);
  });

  it('has a launcher that runs the sources when present (a checkout), else the bundle', async () => {
    // Prepare: the launcher beside stand-ins that say which one ran
    const root = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-launcher-'));
    try {
      mkdirSync(join(root, 'bin'));
      cpSync(join(REPO_ROOT, 'bin/nodeclass-scan.js'), join(root, 'bin/nodeclass-scan.js'));
      mkdirSync(join(root, 'dist/lib'), { recursive: true });
      writeFileSync(join(root, 'dist/lib/cli.js'), "console.log('bundle');\n");
      mkdirSync(join(root, 'lambda/cli'), { recursive: true });
      writeFileSync(join(root, 'lambda/cli/nodeclass-scan.js'), "console.log('sources');\n");
      writeFileSync(join(root, 'package.json'), '{"type":"module"}\n');
      const launch = async () =>
        (await execFileAsync(process.execPath, [join(root, 'bin/nodeclass-scan.js')])).stdout;
      // Act
      const inCheckout = await launch();
      rmSync(join(root, 'lambda'), { recursive: true });
      const installed = await launch();
      // Assess
      expect(inCheckout).toBe('sources\n');
      expect(installed).toBe('bundle\n');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
