// The suite's one real `npx cdk synth` (synthesized-assembly.ts): the CLI, cdk.json's app command
// (builds the Lambda bundles, then synthesizes the app on them), the simulation's deployment given
// as `-c key=value`, and cdk-nag as a synth-time validation plugin, with no AWS credentials at all
// and no Docker. The scenarios deploy the same assembly.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCANNER_STACK_NAME } from '../../infra/app.js';
import { amiForwardingStackName } from '../../infra/config.js';
import { defaultLambdaBundlesDirectory } from '../../infra/constructs/scanner-function.js';
import { HANDLER_METADATA_KEY } from '../../infra/handler-roles.js';
import { HANDLER_NAMES } from '../../lambda/shared/config.js';
import { SIMULATION_CONTEXT } from './deployment-context.js';
import { contextArguments, synthesizedAssembly } from './synthesized-assembly.js';

const CREATE_REQUIRE_BANNER =
  "import { createRequire as __scannerCreateRequire } from 'node:module';";

describe('npx cdk synth (clean clone: no credentials, no Docker)', () => {
  let outdir = '';
  let startedAt = 0;

  beforeAll(async () => {
    ({ directory: outdir, startedAt } = await synthesizedAssembly());
  });

  it('succeeds, with cdk-nag reporting no violations', () => {
    // Assess (synthesizedAssembly() threw with the CLI's output unless it exited 0)
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8'));
    expect(
      report.pluginReports.filter(
        (plugin: { conclusion: string }) => plugin.conclusion !== 'success'
      )
    ).toEqual([]);
  });

  it('takes the deployment from -c: the home region, both clusters, email alerts', () => {
    // Prepare
    const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; environment?: string }>;
    };
    const stacks = Object.entries(manifest.artifacts).filter(
      ([, artifact]) => artifact.type === 'aws:cloudformation:stack'
    );
    const template = readFileSync(join(outdir, `${SCANNER_STACK_NAME}.template.json`), 'utf8');

    // Assess: home in us-east-1 needs no IAM-event forwarding stack; discovery in a second
    // region adds that region's AMI-event forwarding stack (the shipped cdk.json's two stacks are
    // checked from templates: forwarding-stack.test.ts, and nag.test.ts for cdk-nag).
    expect(stacks.map(([name, artifact]) => [name, artifact.environment]).sort()).toEqual(
      [
        [SCANNER_STACK_NAME, `aws://unknown-account/${SIMULATION_CONTEXT.homeRegion}`],
        ...SIMULATION_CONTEXT.discoveryRegions.map((region) => [
          amiForwardingStackName(SCANNER_STACK_NAME, region),
          `aws://unknown-account/${region}`,
        ]),
      ].sort()
    );
    for (const cluster of SIMULATION_CONTEXT.clusters) expect(template).toContain(cluster);
    expect(template).toContain(SIMULATION_CONTEXT.alertEmails[0]);
  });

  it('passes the deployment as the CLI takes it: strings as they are, lists as JSON', () => {
    expect(contextArguments({ homeRegion: 'us-east-1', clusters: ['a', 'b'], on: true })).toEqual([
      '-c',
      'homeRegion=us-east-1',
      '-c',
      'clusters=["a","b"]',
      '-c',
      'on=true',
    ]);
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
