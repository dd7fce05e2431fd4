// A notice informs and never fails: the 412 dry-run notice of karpenter-version-supported, through
// the real CLI, in every format, on a healthy manifest.
import { join } from 'node:path';
import type { Log, Result } from 'sarif';
import { describe, expect, it } from 'vitest';
import type { AsffFinding } from '../../lambda/core/asff.js';
import type { ScanReport } from '../../lambda/core/report.js';
import { asffErrors } from './support/asff-schema.js';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';
import { sarifErrors } from './support/sarif-schema.js';
import { findAll, parseXml } from './support/strict-xml.js';

const HEALTHY = join(import.meta.dirname, '../../examples/nodeclasses/good-al2023.yaml');
/** Karpenter 1.7.0 validates with EC2 dry-runs: the 412 notice, and no defect that fails. */
const SCAN = ['scan', HEALTHY, '--karpenter-version', '1.7.0', '--fail-on', 'info'];

const isNotice = (finding: { status: string }) => finding.status === 'notice';

describe('scan --fail-on info on a healthy manifest with the 412 dry-run notice', () => {
  const tree = useTempTrees();

  it('exits 0 and reports the notice with status notice in the JSON contract', async () => {
    // Act
    const run = await runCliCaptured([...SCAN, '--format', 'json']);

    // Assess
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = ReportContract.parse(JSON.parse(run.stdout));
    const notices = report.findings.filter(isNotice);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      checkId: 'karpenter-version-supported',
      severity: 'info',
      resource: { cluster: '', kind: 'Cluster', name: 'manifests' },
      evidence: { defect: 'dry-run-412-noise' },
    });
    expect(notices[0]?.message).toMatch(/^Expected, not an error: .*HTTP 412 DryRunOperation/);
    expect(report.findings.filter((f) => f.status === 'fail' || f.status === 'error')).toEqual([]);
    expect(report.summary.byStatus.notice).toBe(1);
    expect(report.summary.failuresBySeverity.info).toBe(0);
  });

  it('shows the notice in the table, marked as one, and exits 0', async () => {
    const run = await runCliCaptured([...SCAN, '--format', 'table']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      '  notice  karpenter-version-supported: Expected, not an error: Karpenter 1.7.0'
    );
    expect(run.stdout).toMatch(/Summary: 0 fail, 0 error, 1 notice, \d+ pass/);
  });

  it('raises no code scanning alert: no SARIF result, the notice kept as an informational result of the run', async () => {
    const run = await runCliCaptured([...SCAN, '--format', 'sarif']);
    expect(run.code).toBe(0);
    const log = JSON.parse(run.stdout) as Log;
    expect(sarifErrors(log)).toEqual([]);
    expect(log.runs[0]?.results).toEqual([]);
    const notices = (log.runs[0]?.properties?.notices ?? []) as Result[];
    expect(notices.map((notice) => [notice.ruleId, notice.kind, notice.level])).toEqual([
      ['karpenter-version-supported', 'informational', 'none'],
    ]);
  });

  it('passes in JUnit, the notice in the testcase output', async () => {
    const run = await runCliCaptured([...SCAN, '--format', 'junit']);
    expect(run.code).toBe(0);
    const root = parseXml(run.stdout);
    expect(root.attributes).toMatchObject({ failures: '0', errors: '0' });
    const testcase = findAll(root, 'testcase').find(
      (node) =>
        node.attributes.classname === 'Cluster/manifests' &&
        node.attributes.name === 'karpenter-version-supported'
    );
    expect(testcase?.children.map((child) => child.name)).toEqual(['system-out']);
    expect(testcase?.children[0]?.text).toContain('HTTP 412 DryRunOperation');
  });

  it('exports the notice to Security Hub as PASSED and INFORMATIONAL, archived', async () => {
    const run = await runCliCaptured([
      ...SCAN,
      '--format',
      'asff',
      '--aws-account-id',
      '123456789012',
      '--region',
      'eu-west-1',
    ]);
    expect(run.code).toBe(0);
    const records = JSON.parse(run.stdout) as AsffFinding[];
    expect(asffErrors(records)).toEqual([]);
    const notice = records.find(
      (record) => record.ProductFields['nodeclass-scanner/status'] === 'notice'
    );
    expect(notice).toMatchObject({
      GeneratorId: 'nodeclass-scanner/karpenter-version-supported',
      Compliance: { Status: 'PASSED' },
      RecordState: 'ARCHIVED',
      Severity: { Label: 'INFORMATIONAL', Original: 'info' },
    });
    expect(records.filter((record) => record.Compliance.Status !== 'PASSED')).toEqual([]);
  });

  it('with a baseline an earlier version wrote (the notice as an info fail): nothing new, nothing resolved', async () => {
    // Prepare: this scan's report as the previous version wrote it
    const current = JSON.parse(
      (await runCliCaptured([...SCAN, '--format', 'json'])).stdout
    ) as ScanReport;
    const legacy = {
      ...current,
      findings: current.findings.map((finding) =>
        isNotice(finding) ? { ...finding, status: 'fail' } : finding
      ),
    };
    const dir = tree({ 'baseline.json': JSON.stringify(legacy) });

    // Act
    const run = await runCliCaptured([
      ...SCAN,
      '--format',
      'json',
      '--baseline',
      join(dir, 'baseline.json'),
    ]);

    // Assess
    expect(run.code).toBe(0);
    const compared = ReportContract.parse(JSON.parse(run.stdout));
    expect(compared.resolved).toEqual([]);
    expect(compared.findings.filter(isNotice).map((finding) => finding.change)).toEqual([
      undefined,
    ]);
  });
});
