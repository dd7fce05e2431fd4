// `scan --world` on test/fixtures/worlds/ebs-kms.json: a NodeClass whose data volume names a
// disabled customer managed KMS key, beside classes whose keys are usable (one named by kmsKeyID,
// and the account's default EBS key: a customer key, with encryption by default on).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT_FINDINGS } from '../../lambda/cli/main.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { runCliCaptured } from './support/run-cli.js';

const WORLD = join(import.meta.dirname, '../fixtures/worlds/ebs-kms.json');
const NOW = new Date('2026-11-20T12:00:00Z');

describe('scan --world with a disabled KMS key for EBS', () => {
  it('fails the class whose volume uses the disabled key, and nothing else', async () => {
    // Act
    const run = await runCliCaptured(['scan', '--world', WORLD, '--format', 'json'], { now: NOW });

    // Assess
    expect(run.code).toBe(EXIT_FINDINGS);
    const report = JSON.parse(run.stdout) as ScanReport;
    expect(report.summary.inputErrors).toEqual([]);
    const failing = report.findings
      .filter((finding) => finding.status === 'fail' || finding.status === 'error')
      .map((finding) => `${finding.checkId} ${finding.resource.name} ${finding.severity}`);
    expect(failing).toEqual(['ebs-kms-key-usable data-retired critical']);
    const kms = report.findings.filter((finding) => finding.checkId === 'ebs-kms-key-usable');
    expect(
      kms.map((finding) => [finding.resource.name, finding.evidence.key, finding.status]).sort()
    ).toEqual([
      ['data-current', 'alias/karpenter-data', 'pass'],
      ['data-current', DEFAULT_KEY, 'pass'],
      ['data-retired', 'alias/karpenter-data-2025', 'fail'],
      ['data-retired', DEFAULT_KEY, 'pass'],
      ['default', DEFAULT_KEY, 'pass'],
    ]);
    const failure = kms.find((finding) => finding.status === 'fail');
    expect(failure?.message).toContain('the key is Disabled');
    expect(failure?.location?.path).toBe('spec.blockDeviceMappings[1].ebs.kmsKeyID');
  });
});

const DEFAULT_KEY = 'arn:aws:kms:us-east-1:111122223333:key/0d1e2f3a-0000-4000-8000-000000000001';
