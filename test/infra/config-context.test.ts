// Unknown context keys, stackName and clusterSettings in the app's configuration: parsed alone,
// through a real App, and through the real `cdk synth -c`.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { buildScannerApp } from '../../infra/app.js';
import {
  CONFIG_KEYS,
  isCdkContextKey,
  parseScannerConfig,
  unknownContextKeys,
} from '../../infra/config.js';
import { editDistance, nearest } from '../../lambda/core/suggest.js';
import { CDK_JSON_CONTEXT, REPO_ROOT } from './support.js';

const BASE = { homeRegion: 'eu-west-1', clusters: ['prod', 'dev'] };

describe('unknown context keys', () => {
  it('fails naming the key and the nearest valid one', () => {
    expect(() => parseScannerConfig({ ...BASE, clustres: 'prod' })).toThrow(
      'context key "clustres": not a nodeclass-scanner setting (did you mean "clusters"?)'
    );
    expect(() => parseScannerConfig({ ...BASE, alertMinSeverty: 'low' })).toThrow(
      '(did you mean "alertMinSeverity"?)'
    );
  });

  it('names a key far from every setting without a guess', () => {
    // Act
    const attempt = () => parseScannerConfig({ ...BASE, colour: 'blue' });

    // Assess
    expect(attempt).toThrow(/context key "colour": not a nodeclass-scanner setting$/m);
    expect(attempt).not.toThrow(/did you mean/);
  });

  it("leaves the CDK's own keys alone: feature flags, aws:cdk settings, lookups, CLI settings", () => {
    // Prepare: what a real `cdk synth` puts in the context besides cdk.json's keys.
    const cdkKeys = {
      '@aws-cdk/core:failSynthOnValidationErrors': false,
      '@aws-cdk/aws-lambda:recognizeLayerVersion': true,
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:bundling-stacks': ['**'],
      'availability-zones:account=111122223333:region=eu-west-1': ['eu-west-1a'],
      'vpc-provider:account=111122223333:filter.vpc-id=vpc-1:region=eu-west-1': {},
      'acknowledged-issue-numbers': [12345],
      'cli-telemetry': false,
      'cdk-bootstrap-qualifier': 'hnb659fds',
    };

    // Act & Assess
    expect(unknownContextKeys({ ...BASE, ...cdkKeys })).toEqual([]);
    expect(Object.keys(cdkKeys).every(isCdkContextKey)).toBe(true);
    expect(CONFIG_KEYS.some(isCdkContextKey)).toBe(false);
    expect(parseScannerConfig({ ...BASE, ...cdkKeys }).clusters).toEqual(['prod', 'dev']);
  });

  it("checks the scanner's own prefixed keys: the bundles key passes, a typo of it fails", () => {
    expect(
      unknownContextKeys({ ...BASE, 'nodeclass-scanner:lambdaBundlesDirectory': '/x' })
    ).toEqual([]);
    expect(() =>
      parseScannerConfig({ ...BASE, 'nodeclass-scanner:lambdaBundleDirectory': '/x' })
    ).toThrow(
      'context key "nodeclass-scanner:lambdaBundleDirectory": not a nodeclass-scanner setting (did you mean "nodeclass-scanner:lambdaBundlesDirectory"?)'
    );
  });

  it('counts a swap of two neighbouring letters as one edit', () => {
    expect(editDistance('clustres', 'clusters')).toBe(1);
    expect(editDistance('Digest', 'digest')).toBe(0);
    expect(nearest('reminderHour', CONFIG_KEYS)).toBe('reminderHours');
    expect(nearest('x', CONFIG_KEYS)).toBeUndefined();
  });

  it('fails a real App whose context has an unknown key, before any stack is added', () => {
    // Prepare
    const app = new App({ context: { ...CDK_JSON_CONTEXT, clustres: 'prod' } });

    // Act & Assess
    expect(() => buildScannerApp(app, { nag: false })).toThrow(
      'context key "clustres": not a nodeclass-scanner setting (did you mean "clusters"?)'
    );
    expect(app.node.children).toEqual([]);
  });

  it('fails `cdk synth -c clustres=prod` naming the key (the real CLI, no bundling needed)', async () => {
    // Prepare
    const outdir = mkdtempSync(join(tmpdir(), 'nodeclass-scanner-context-'));
    const cdk = join(REPO_ROOT, 'node_modules/.bin/cdk');
    const tsx = join(REPO_ROOT, 'node_modules/.bin/tsx');

    try {
      // Act
      const attempt = promisify(execFile)(
        cdk,
        [
          'synth',
          '--app',
          `${tsx} ${join(REPO_ROOT, 'infra/app.ts')}`,
          '--output',
          outdir,
          '--no-notices',
          '--quiet',
          '-c',
          'clustres=prod',
        ],
        {
          cwd: REPO_ROOT,
          env: {
            ...process.env,
            AWS_EC2_METADATA_DISABLED: 'true',
            CDK_DISABLE_VERSION_CHECK: '1',
          },
        }
      );

      // Assess
      await expect(attempt).rejects.toMatchObject({
        stderr: expect.stringContaining(
          'context key "clustres": not a nodeclass-scanner setting (did you mean "clusters"?)'
        ),
      });
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('stackName', () => {
  it('defaults to NodeClassScanner and names both stacks', () => {
    expect(parseScannerConfig(BASE).stackName).toBe('NodeClassScanner');
    expect(CDK_JSON_CONTEXT.stackName).toBe('NodeClassScanner');
  });

  it.each(['1prod', 'node_class', 'a'.repeat(120), 'prod scanner'])('rejects %j', (stackName) => {
    expect(() => parseScannerConfig({ ...BASE, stackName })).toThrow('context key "stackName"');
  });
});

describe('clusterSettings', () => {
  const RULE = { check: '*', resource: 'EC2NodeClass/legacy-*', reason: 'being retired' };

  it('takes settings per cluster from cdk.json objects or a -c JSON string', () => {
    // Prepare
    const clusterSettings = {
      dev: { environment: 'non-production', alertMinSeverity: 'critical', ignore: [RULE] },
    };

    // Act
    const fromObject = parseScannerConfig({ ...BASE, clusterSettings });
    const fromFlag = parseScannerConfig({
      ...BASE,
      clusterSettings: JSON.stringify(clusterSettings),
    });

    // Assess
    expect(fromObject.clusterSettings).toEqual(clusterSettings);
    expect(fromFlag.clusterSettings).toEqual(clusterSettings);
    expect(parseScannerConfig(BASE).clusterSettings).toEqual({});
    expect(CDK_JSON_CONTEXT.clusterSettings).toEqual({});
  });

  it('accepts a key written as the clusters entry or as its name', () => {
    // Prepare
    const context = { ...BASE, clusters: ['prod', 'dr@us-west-2'] };

    // Act & Assess
    expect(() =>
      parseScannerConfig({ ...context, clusterSettings: { 'dr@us-west-2': {}, prod: {} } })
    ).not.toThrow();
    expect(() => parseScannerConfig({ ...context, clusterSettings: { dr: {} } })).not.toThrow();
  });

  it('fails on a cluster that is not configured, naming it and the nearest one', () => {
    expect(() =>
      parseScannerConfig({ ...BASE, clusterSettings: { prdo: { environment: 'production' } } })
    ).toThrow(
      'context key "clusterSettings.prdo": "prdo" is not one of the clusters (prod, dev) (did you mean "prod"?)'
    );
  });

  it('accepts a cluster that discovery may find', () => {
    expect(
      parseScannerConfig({
        ...BASE,
        discoverClusters: '*',
        clusterSettings: { 'team-a': { environment: 'non-production' } },
      }).clusterSettings
    ).toEqual({ 'team-a': { environment: 'non-production' } });
  });

  it.each([
    [
      { dev: { enviroment: 'non-production' } },
      /"clusterSettings\.dev": Unrecognized key: "enviroment" \(did you mean "environment"\?\)/,
    ],
    [{ dev: { environment: 'staging' } }, /"clusterSettings\.dev\.environment"/],
    [{ dev: { alertMinSeverity: 'urgent' } }, /"clusterSettings\.dev\.alertMinSeverity"/],
    [
      { dev: { ignore: [{ ...RULE, resource: 'dev/EC2NodeClass/legacy-*' }] } },
      /"clusterSettings\.dev\.ignore\.0\.resource": "dev\/EC2NodeClass\/legacy-\*" is not Kind\/name: the cluster is implied/,
    ],
    [
      { dev: { ignore: [{ ...RULE, resource: 'Pod/x' }] } },
      /"clusterSettings\.dev\.ignore\.0\.resource": "Pod" matches no kind/,
    ],
    [
      { dev: { ignore: [{ ...RULE, check: 'no-such-check' }] } },
      /"clusterSettings\.dev\.ignore\.0\.check": unknown check id "no-such-check"/,
    ],
    [
      { dev: {}, 'dev@eu-west-1': {} },
      /"clusterSettings\.dev@eu-west-1": "dev@eu-west-1" and "dev" are the same cluster/,
    ],
  ])('rejects %j', (clusterSettings, message) => {
    expect(() => parseScannerConfig({ ...BASE, clusterSettings })).toThrow(message);
  });

  it('counts per-cluster rules and environments in the ignore rules environment budget', () => {
    // Prepare: each rule alone fits; 30 of them do not.
    const rule = { ...RULE, reason: 'r'.repeat(60) };
    const clusterSettings = {
      dev: { environment: 'non-production', ignore: Array(30).fill(rule) },
    };

    // Act & Assess
    expect(() => parseScannerConfig({ ...BASE, clusterSettings })).toThrow(
      /context key "clusterSettings": the ignore rules and per-cluster environments take \d+ characters of the Lambdas' 4 KB environment/
    );
  });

  it('takes two clusters of one name in two regions; their settings apply by name', () => {
    const clusters = ['prod', 'prod@us-west-2'];
    expect(parseScannerConfig({ ...BASE, clusters }).clusters).toEqual(clusters);
    expect(
      parseScannerConfig({
        ...BASE,
        clusters,
        clusterSettings: { prod: { alertMinSeverity: 'critical' } },
      }).clusterSettings
    ).toEqual({ prod: { alertMinSeverity: 'critical' } });
    expect(() =>
      parseScannerConfig({
        ...BASE,
        clusters,
        clusterSettings: { 'prod@us-west-2': { alertMinSeverity: 'critical' } },
      })
    ).toThrow(
      /settings apply to every cluster named "prod" \(prod, prod@us-west-2\): use the key "prod"/
    );
  });
});
