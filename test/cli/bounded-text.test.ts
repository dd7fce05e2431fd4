// A field of hundreds of kilobytes (Karpenter's CRD bounds no selector term) reaches every output
// cut to the finding budgets, with the cut shown, never whole.
import { describe, expect, it } from 'vitest';
import { FINDING_TEXT_BUDGET } from '../../lambda/core/text-budget.js';
import { runCliCaptured } from './support/run-cli.js';

const NAME = `${'a'.repeat(419_999)}*`;

const manifest = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: poison
spec:
  amiFamily: AL2023
  amiSelectorTerms:
    - name: "${NAME}"
  role: KarpenterNodeRole-demo
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;

const scan = (format: string, stdin = manifest) =>
  runCliCaptured(['scan', '-', '--format', format, '--fail-on', 'none'], { stdin });

describe('a 420,000-character AMI name term', () => {
  it('gives a finding whose message and evidence are within budget and say what was elided', async () => {
    // Act
    const run = await scan('json');

    // Assess
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      findings: { checkId: string; message: string; evidence: Record<string, unknown> }[];
    };
    const pinned = report.findings.find((finding) => finding.checkId === 'ami-selector-pinned');
    expect(pinned?.message).toMatch(
      /^amiSelectorTerms\[0\] selects name "a+…\(41\d,\d{3} bytes elided\)$/
    );
    expect(Buffer.byteLength(pinned?.message ?? '')).toBeLessThanOrEqual(
      FINDING_TEXT_BUDGET.message
    );
    expect(String(pinned?.evidence.name)).toMatch(/^a+…\(41\d,\d{3} bytes elided\)$/);
    for (const finding of report.findings) {
      expect(Buffer.byteLength(JSON.stringify(finding))).toBeLessThan(16 * 1024);
    }
  });

  it('adds a few kilobytes to every format, never the name whole', async () => {
    const short = manifest.replace(NAME, 'eks-node-*');
    for (const format of ['table', 'json', 'sarif', 'junit']) {
      const [poisoned, plain] = [await scan(format), await scan(format, short)];
      expect(poisoned.stdout.length - plain.stdout.length, format).toBeLessThan(16 * 1024);
      expect(poisoned.stdout, format).not.toContain('a'.repeat(5_000));
      expect(poisoned.stdout, format).toMatch(/bytes elided/);
    }
  });
});
