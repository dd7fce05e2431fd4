// "Will this NodePool launch a node?": userData Karpenter cannot merge or EC2 refuses for size, and
// fields the v1 CRDs do not have, from manifest files (the real bin, as CI runs it) and from a
// world file. Each broken object sits beside a healthy control that must not fail.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ScanReport } from '../../lambda/core/report.js';
import { REDACTED_USER_DATA } from '../../lambda/core/user-data/analyze.js';
import { aUserDataNodeClass, BROKEN_TOML, GOOD_USER_DATA } from '../support/user-data-builders.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, tempTree } from './support/run-cli.js';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', '..', 'lambda', 'cli', 'nodeclass-scan.js');
const CHECKS = 'user-data-valid,user-data-fits-limit,nodepool-schema-valid';

const nodePool = (name: string, nodeClass: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name },
  spec: {
    template: {
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        ...extra,
      },
    },
  },
});

const documents = (objects: readonly unknown[]) =>
  objects.map((object) => stringify(object, { lineWidth: 0 })).join('---\n');

const { dir, cleanup } = tempTree({
  'nodeclasses.yaml': documents([
    aUserDataNodeClass('Bottlerocket', GOOD_USER_DATA.Bottlerocket, { name: 'br-healthy' }),
    aUserDataNodeClass('Bottlerocket', BROKEN_TOML, { name: 'br-broken-toml' }),
    aUserDataNodeClass('Custom', GOOD_USER_DATA.Custom, { name: 'custom-healthy' }),
    aUserDataNodeClass('Custom', undefined, { name: 'custom-no-bootstrap' }),
    aUserDataNodeClass(
      'Custom',
      `#!/bin/bash\n# karpenter.sh/unregistered\n${'x'.repeat(17_000)}\n`,
      {
        name: 'custom-oversized',
      }
    ),
  ]),
  'nodepools.yaml': documents([
    nodePool('healthy', 'br-healthy'),
    nodePool('v1beta1-kubelet', 'br-healthy', { kubelet: { maxPods: 110 } }),
  ]),
});
afterAll(cleanup);

/** checkId → the resources it fails, sorted. */
function failing(report: ScanReport): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const finding of report.findings) {
    if (finding.status !== 'fail') continue;
    const names = out[finding.checkId] ?? [];
    names.push(`${finding.resource.kind}/${finding.resource.name}`);
    out[finding.checkId] = [...new Set(names)].sort();
  }
  return out;
}

describe('launchability checks on manifests (the nodeclass-scan bin)', () => {
  it('fails the broken objects only, with the TOML error line and the kubelet migration hint', async () => {
    // Act
    const outcome = await run('node', [BIN, 'scan', dir, '--format', 'json', '--only', CHECKS], {
      env: { ...process.env, NO_COLOR: '1' },
    }).then(
      () => ({ code: 0, stdout: '', stderr: '' }),
      (error: { code: number; stdout: string; stderr: string }) => error
    );

    // Assess
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(1);
    const report = ReportContract.parse(JSON.parse(outcome.stdout)) as ScanReport;
    expect(failing(report)).toEqual({
      'user-data-valid': ['EC2NodeClass/br-broken-toml', 'EC2NodeClass/custom-no-bootstrap'],
      'user-data-fits-limit': ['EC2NodeClass/custom-oversized'],
      'nodepool-schema-valid': ['NodePool/v1beta1-kubelet'],
    });
    const toml = report.findings.find(
      (f) => f.checkId === 'user-data-valid' && f.resource.name === 'br-broken-toml'
    );
    expect(toml?.message).toContain('(line 3, column 15)');
    expect(toml?.severity).toBe('critical');
    const kubelet = report.findings.find(
      (f) => f.resource.name === 'v1beta1-kubelet' && f.status === 'fail'
    );
    expect(kubelet?.message).toContain('spec.template.spec.kubelet');
    expect(kubelet?.message).toContain('kubelet settings moved to the EC2NodeClass');
  });

  it('points SARIF at the userData of the broken class', async () => {
    // Act
    const outcome = await runCliCaptured([
      'scan',
      join(dir, 'nodeclasses.yaml'),
      '--format',
      'sarif',
      '--only',
      'user-data-valid',
    ]);

    // Assess
    const sarif = JSON.parse(outcome.stdout) as {
      runs: {
        results: {
          ruleId: string;
          locations: { physicalLocation: { region: { startLine: number } } }[];
        }[];
      }[];
    };
    const lines = readFileSync(join(dir, 'nodeclasses.yaml'), 'utf8').split('\n');
    const brokenDoc = lines.findIndex((line) => line.includes('name: br-broken-toml'));
    const userDataLine =
      lines.findIndex((line, index) => index > brokenDoc && /^\s+userData:/.test(line)) + 1;
    const startLines = sarif.runs[0]?.results.map(
      (result) => result.locations[0]?.physicalLocation.region.startLine
    );
    expect(startLines).toContain(userDataLine);
  });
});

describe('launchability checks on a world file', () => {
  it('evaluates world objects, and never calls a redacted userData invalid', async () => {
    // Prepare: the example world, with objects added to one of its clusters.
    const world = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../examples/world.json'), 'utf8')
    ) as {
      eks: {
        clusters: {
          name: string;
          kubernetes: { ec2NodeClasses: unknown[]; nodePools: unknown[] };
        }[];
      };
    };
    const cluster = world.eks.clusters.find((c) => c.name === 'prod-use1');
    if (!cluster) throw new Error('example world changed: no prod-use1');
    cluster.kubernetes.ec2NodeClasses.push(
      aUserDataNodeClass('Bottlerocket', REDACTED_USER_DATA, { name: 'br-redacted' }),
      aUserDataNodeClass('Custom', REDACTED_USER_DATA, { name: 'custom-redacted' }),
      aUserDataNodeClass('Custom', undefined, { name: 'custom-no-bootstrap' })
    );
    cluster.kubernetes.nodePools.push(
      nodePool('v1beta1-kubelet', 'br-redacted', { kubelet: { maxPods: 110 } })
    );
    const tree = tempTree({ 'world.json': JSON.stringify(world) });
    try {
      // Act
      const outcome = await runCliCaptured(
        [
          'scan',
          '--world',
          join(tree.dir, 'world.json'),
          '--cluster',
          'prod-use1',
          '--format',
          'json',
          '--only',
          CHECKS,
        ],
        { now: new Date('2026-11-22T12:00:00Z') }
      );

      // Assess
      expect(outcome.stderr).toBe('');
      const report = JSON.parse(outcome.stdout) as ScanReport;
      expect(failing(report)).toEqual({
        'user-data-valid': ['EC2NodeClass/custom-no-bootstrap'],
        'nodepool-schema-valid': ['NodePool/v1beta1-kubelet'],
      });
      const redacted = report.findings.filter((f) => f.resource.name.endsWith('-redacted'));
      expect(redacted.map((f) => [f.resource.name, f.checkId, f.status]).sort()).toEqual([
        ['br-redacted', 'user-data-fits-limit', 'not-applicable'],
        ['br-redacted', 'user-data-valid', 'not-applicable'],
        ['custom-redacted', 'user-data-fits-limit', 'not-applicable'],
        ['custom-redacted', 'user-data-valid', 'not-applicable'],
      ]);
    } finally {
      tree.cleanup();
    }
  });
});
