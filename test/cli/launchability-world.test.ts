// `scan --world` on test/fixtures/worlds/launchability.json: three NodePools Karpenter could never
// launch a node for, each beside a healthy control that differs in the one setting at fault.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_FINDINGS } from '../../lambda/cli/main.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured } from './support/run-cli.js';

const WORLD = join(import.meta.dirname, '../fixtures/worlds/launchability.json');
const NOW = new Date('2026-11-20T12:00:00Z');

describe('scan --world with NodePools that cannot launch', () => {
  it('fails each broken NodePool, passes its control, and fails nothing else', async () => {
    // Act
    const run = await runCliCaptured(['scan', '--world', WORLD, '--format', 'json'], { now: NOW });

    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    const report = JSON.parse(run.stdout) as ScanReport;
    expect(report.summary.inputErrors).toEqual([]);
    const failing = report.findings
      .filter((finding) => finding.status === 'fail' || finding.status === 'error')
      .map((finding) => `${finding.checkId} ${finding.resource.kind}/${finding.resource.name}`)
      .sort();
    expect(failing).toEqual([
      'nodepool-instance-types-offered NodePool/capped',
      'nodepool-instance-types-offered NodePool/graviton-x86-families',
      'nodepool-instance-types-offered NodePool/reserved-nightly',
    ]);
    const verdicts = Object.fromEntries(
      report.findings
        .filter((finding) => finding.checkId === 'nodepool-instance-types-offered')
        .map((finding) => [finding.resource.name, finding.status])
    );
    expect(verdicts).toEqual({
      bounded: 'pass',
      capped: 'fail',
      general: 'pass',
      graviton: 'pass',
      'graviton-x86-families': 'fail',
      'reserved-nightly': 'fail',
      'reserved-steady': 'pass',
    });
  });

  it('explains each failure with the narrowing chain and the setting at fault', async () => {
    // Act
    const run = await runCliCaptured(
      ['scan', '--world', WORLD, '--format', 'json', '--only', 'nodepool-instance-types-offered'],
      { now: NOW }
    );

    // Assess
    const report = JSON.parse(run.stdout) as ScanReport;
    const message = (name: string) =>
      report.findings.find((finding) => finding.resource.name === name)?.message ?? '';
    expect(message('graviton-x86-families')).toContain(
      '11 instance types → kubernetes.io/arch In [arm64]: 2 → karpenter.k8s.aws/instance-family In [m7i, c7i]: 0.'
    );
    expect(message('capped')).toContain(
      'limits.memory (1000: a quantity without a unit, so 1000 bytes); the smallest type left, c7i.large, has 3788Mi.'
    );
    expect(message('reserved-nightly')).toContain(
      'karpenter.sh/capacity-type In [reserved]: 1 → zones with a subnet of the class (us-east-1a, us-east-1b): 0.'
    );
    expect(message('reserved-nightly')).toContain(
      'Reservation cr-0d1e2f3a4b5c60302 (m7i.large) is in us-east-1c.'
    );
    expect(message('reserved-steady')).toContain('m7i.large, in us-east-1a, as reserved');
  });
});
