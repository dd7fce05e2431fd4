// The one real `cdk synth` of the suite: the CLI, cdk.json's app command (builds the Lambda bundles,
// then synthesizes the app on them), its context, and cdk-nag as a synth-time validation plugin,
// with no AWS credentials at all and no Docker.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORWARDING_STACK_NAME, SCANNER_STACK_NAME } from '../../infra/app.js';
import { defaultLambdaBundlesDirectory } from '../../infra/constructs/scanner-function.js';
import { HANDLER_METADATA_KEY } from '../../infra/handler-roles.js';
import { HANDLER_NAMES } from '../../lambda/shared/config.js';
import { REPO_ROOT } from './support.js';

const SYNTH_TIMEOUT_MS = 240_000;

const CREATE_REQUIRE_BANNER =
  "import { createRequire as __scannerCreateRequire } from 'node:module';";

function credentialFreeEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const key of Object.keys(env))
    if (key.startsWith('AWS_') || key.startsWith('CDK_')) delete env[key];
  return {
    ...env,
    AWS_CONFIG_FILE: '/nonexistent/aws-config',
    AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: 'true',
    npm_config_update_notifier: 'false',
  };
}

describe('npx cdk synth (clean clone: no credentials, no Docker)', () => {
  let outdir = '';
  let result: ReturnType<typeof spawnSync>;
  let startedAt = 0;

  beforeAll(() => {
    startedAt = Date.now();
    outdir = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-synth-'));
    result = spawnSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '--output', outdir], {
      cwd: REPO_ROOT,
      env: credentialFreeEnv(),
      encoding: 'utf8',
      timeout: SYNTH_TIMEOUT_MS,
    });
  }, SYNTH_TIMEOUT_MS);

  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('succeeds, with cdk-nag reporting no violations', () => {
    // Assess
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
    expect(
      report.pluginReports.filter(
        (plugin: { conclusion: string }) => plugin.conclusion !== 'success'
      )
    ).toEqual([]);
  });

  it('writes the scanner stack and the us-east-1 forwarding stack', () => {
    // Act
    const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8'));

    // Assess
    expect(manifest.artifacts[SCANNER_STACK_NAME].environment).toBe(
      'aws://unknown-account/eu-west-1'
    );
    expect(manifest.artifacts[FORWARDING_STACK_NAME].environment).toBe(
      'aws://unknown-account/us-east-1'
    );
  });

  it('deploys the bundles cdk.json rebuilt before synth', () => {
    // Prepare
    const template = JSON.parse(
      readFileSync(join(outdir, `${SCANNER_STACK_NAME}.template.json`), 'utf8')
    );
    const functions = Object.values(
      template.Resources as Record<string, { Type: string; Metadata?: Record<string, string> }>
    ).filter((resource) => resource.Type === 'AWS::Lambda::Function');

    // Assess
    expect(functions).toHaveLength(HANDLER_NAMES.length);
    for (const { Metadata: metadata = {} } of functions) {
      const handler = metadata[HANDLER_METADATA_KEY] ?? '';
      const built = join(defaultLambdaBundlesDirectory(), handler, 'index.mjs');
      expect(statSync(built).mtimeMs).toBeGreaterThanOrEqual(startedAt - 1000);
      expect(readFileSync(join(outdir, metadata['aws:asset:path'] ?? '', 'index.mjs'))).toEqual(
        readFileSync(built)
      );
    }
  });

  it('bundles each handler as minified ESM with source maps and our own AWS SDK', () => {
    // Prepare
    const template = JSON.parse(
      readFileSync(join(outdir, `${SCANNER_STACK_NAME}.template.json`), 'utf8')
    );
    const assets = Object.values(
      template.Resources as Record<string, { Type: string; Metadata?: Record<string, string> }>
    )
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((resource) => join(outdir, resource.Metadata?.['aws:asset:path'] ?? ''));

    // Assess
    expect(assets).toHaveLength(4);
    for (const asset of assets) {
      // index.mjs, and the chunks it loads on first use (each with its source map).
      const files = readdirSync(asset, { recursive: true, encoding: 'utf8' })
        .filter((file) => statSync(join(asset, file)).isFile())
        .sort();
      expect(files).toEqual(expect.arrayContaining(['index.mjs', 'index.mjs.map']));
      const modules = files.filter((file) => file.endsWith('.mjs'));
      expect(files.sort()).toEqual(modules.flatMap((file) => [file, `${file}.map`]).sort());
      for (const file of modules) {
        const code = readFileSync(join(asset, file), 'utf8');
        expect(code.startsWith(CREATE_REQUIRE_BANNER), file).toBe(true);
        // Our own pinned SDK clients: no import of the runtime's SDK copy survives.
        expect(code, file).not.toMatch(/(from|import\()\s*["']@aws-sdk\//);
      }
      const entry = readFileSync(join(asset, 'index.mjs'), 'utf8');
      expect(entry).toMatch(/export\s*\{[^}]*\bas handler\b/);
      // Minified: lines average over a thousand characters (only template literals break them).
      expect(entry.split('\n').length).toBeLessThan(entry.length / 1000);
    }
  });
});
