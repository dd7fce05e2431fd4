import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReportContract } from './support/report-contract.js';
import { runCliCaptured, useTempTrees } from './support/run-cli.js';

const tree = useTempTrees();

// An instance profile ARN where Karpenter wants a name: instance-profile-is-name fails (critical).
function nodeClass(name: string, annotations = ''): string {
  return `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: ${name}${annotations === '' ? '' : `\n  annotations:\n${annotations}`}
spec:
  amiSelectorTerms:
    - alias: al2023@v20251001
  instanceProfile: arn:aws:iam::123456789012:instance-profile/KarpenterNode
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
`;
}

const MANIFESTS = [
  nodeClass(
    'legacy-a',
    '    ignore-check.nodeclass-scanner/instance-profile-is-name: "rendered by the old chart"'
  ),
  nodeClass('legacy-b'),
].join('---\n');

const CONFIG = `# accepted findings
ignore:
  - check: instance-profile-is-name
    resource: "*/EC2NodeClass/legacy-b"
    reason: migrating next sprint
    expires: 2026-11-30
`;

async function scan(dir: string, args: readonly string[] = [], now?: Date) {
  return runCliCaptured(
    ['scan', join(dir, 'nodeclasses.yaml'), '--format', 'json', '--fail-on', 'high', ...args],
    { cwd: dir, ...(now === undefined ? {} : { now }) }
  );
}

function statusesOf(stdout: string) {
  const report = ReportContract.parse(JSON.parse(stdout));
  return {
    report,
    byName: Object.fromEntries(
      report.findings
        .filter((finding) => finding.checkId === 'instance-profile-is-name')
        .map((finding) => [finding.resource.name, finding])
    ),
  };
}

describe('nodeclass-scan scan with suppressions', () => {
  it('exits 0 when only suppressed failures remain, keeping them in the report with the reason', async () => {
    // Prepare
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS, 'ci/scan.yaml': CONFIG });
    // Act
    const outcome = await scan(dir, ['--config', 'ci/scan.yaml']);
    // Assess
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const { report, byName } = statusesOf(outcome.stdout);
    expect(byName['legacy-a']).toMatchObject({
      status: 'suppressed',
      severity: 'critical',
      suppression: { reason: 'rendered by the old chart', source: 'annotation', status: 'fail' },
    });
    expect(byName['legacy-b']).toMatchObject({
      status: 'suppressed',
      suppression: {
        reason: 'migrating next sprint',
        source: 'config',
        status: 'fail',
        expires: '2026-11-30',
      },
    });
    expect(report.summary.byStatus).toMatchObject({ suppressed: 2, fail: 0, error: 0 });
  });

  it('fails on the finding the config no longer covers (without the config file)', async () => {
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS });
    const outcome = await scan(dir);
    expect(outcome.code).toBe(1);
    expect(statusesOf(outcome.stdout).byName['legacy-b']?.status).toBe('fail');
  });

  it('discovers .nodeclass-scanner.yaml in the working directory', async () => {
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS, '.nodeclass-scanner.yaml': CONFIG });
    const outcome = await scan(dir);
    expect(outcome.code).toBe(0);
    expect(statusesOf(outcome.stdout).byName['legacy-b']?.status).toBe('suppressed');
  });

  it('reports the finding again once the rule has expired, with a warning naming the rule', async () => {
    // Prepare
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS, '.nodeclass-scanner.yaml': CONFIG });
    // Act
    const outcome = await scan(dir, [], new Date('2026-12-01T00:00:00Z'));
    // Assess
    expect(outcome.code).toBe(1);
    expect(statusesOf(outcome.stdout).byName['legacy-b']?.status).toBe('fail');
    expect(outcome.stderr).toBe(
      'nodeclass-scan: warning: .nodeclass-scanner.yaml: ignore[0] (instance-profile-is-name on */EC2NodeClass/legacy-b) expired 2026-11-30; its findings are reported again\n'
    );
  });

  it('is a usage error (exit 2, nothing on stdout) when a rule names an unknown check', async () => {
    // Prepare
    const dir = tree({
      'nodeclasses.yaml': MANIFESTS,
      'scan.yaml': CONFIG.replace('check: instance-profile-is-name', 'check: instance-profile'),
    });
    // Act
    const outcome = await scan(dir, ['--config', 'scan.yaml']);
    // Assess
    expect(outcome.code).toBe(2);
    expect(outcome.stdout).toBe('');
    expect(outcome.stderr).toBe(
      'nodeclass-scan: scan.yaml: ignore[0].check: unknown check id "instance-profile" (see `nodeclass-scan checks`)\n'
    );
  });

  it('is a usage error when the config file has an unknown key', async () => {
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS, '.nodeclass-scanner.yaml': 'skips: []\n' });
    const outcome = await scan(dir);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toBe(
      'nodeclass-scan: .nodeclass-scanner.yaml: unknown key "skips" (did you mean "skip"?)\n'
    );
  });

  it('reports an annotation naming an unknown check as an error finding on the object', async () => {
    // Prepare
    const dir = tree({
      'nodeclasses.yaml': nodeClass(
        'legacy-a',
        '    ignore-check.nodeclass-scanner/instance-profile-is-nam: "typo"'
      ),
    });
    // Act
    const outcome = await scan(dir);
    // Assess
    expect(outcome.code).toBe(1);
    const { report, byName } = statusesOf(outcome.stdout);
    expect(byName['legacy-a']?.status).toBe('fail');
    expect(report.findings).toContainEqual(
      expect.objectContaining({
        checkId: 'nodeclass-schema-valid',
        status: 'error',
        resource: { cluster: '', kind: 'EC2NodeClass', name: 'legacy-a' },
        message: expect.stringContaining(
          'ignore-check.nodeclass-scanner/instance-profile-is-nam names no check ("instance-profile-is-nam" is not a check id; did you mean "instance-profile-is-name"?)'
        ),
      })
    );
    expect(
      report.findings
        .filter((finding) => finding.checkId === 'nodeclass-schema-valid')
        .map((finding) => finding.status)
    ).toEqual(['error']);
  });
});

describe('nodeclass-scan scan --no-annotation-suppression', () => {
  const KEY = 'ignore-check.nodeclass-scanner/instance-profile-is-name';

  it('refuses every annotation: the finding fails the build, saying which annotation tried', async () => {
    // Prepare
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS });
    // Act
    const outcome = await scan(dir, ['--no-annotation-suppression']);
    // Assess
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toBe('');
    const finding = statusesOf(outcome.stdout).byName['legacy-a'];
    expect(finding).toMatchObject({
      status: 'fail',
      evidence: {
        annotationSuppression: {
          annotation: KEY,
          reason: 'rendered by the old chart',
          outcome: 'refused',
        },
      },
    });
    expect(finding?.message).toContain(
      `The annotation ${KEY} ("rendered by the old chart") tried to suppress this finding; refused: --no-annotation-suppression does not let annotations suppress instance-profile-is-name, so it stays open.`
    );
  });

  it('leaves config rules in force', async () => {
    const dir = tree({ 'nodeclasses.yaml': MANIFESTS, 'ci/scan.yaml': CONFIG });
    const outcome = await scan(dir, ['--config', 'ci/scan.yaml', '--no-annotation-suppression']);
    const { byName } = statusesOf(outcome.stdout);
    expect(byName['legacy-a']?.status).toBe('fail');
    expect(byName['legacy-b']?.status).toBe('suppressed');
  });

  it('overrides annotationSuppression in the config file, which alone may allow a list of checks', async () => {
    // Prepare
    const allowing = `${CONFIG}annotationSuppression: [instance-profile-*]\n`;
    const refusing = 'annotationSuppression: [imds-v2-required]\n';
    const dir = tree({
      'nodeclasses.yaml': MANIFESTS,
      'allowing.yaml': allowing,
      'refusing.yaml': refusing,
    });
    // Act
    const allowed = await scan(dir, ['--config', 'allowing.yaml']);
    const refused = await scan(dir, ['--config', 'refusing.yaml']);
    const overridden = await scan(dir, [
      '--config',
      'allowing.yaml',
      '--no-annotation-suppression',
    ]);
    // Assess
    expect(statusesOf(allowed.stdout).byName['legacy-a']?.status).toBe('suppressed');
    const refusedFinding = statusesOf(refused.stdout).byName['legacy-a'];
    expect(refusedFinding?.status).toBe('fail');
    expect(refusedFinding?.message).toContain('refused: annotationSuppression in refusing.yaml');
    expect(statusesOf(overridden.stdout).byName['legacy-a']?.status).toBe('fail');
  });

  it('is a usage error when annotationSuppression names no check', async () => {
    const dir = tree({
      'nodeclasses.yaml': MANIFESTS,
      'scan.yaml': 'annotationSuppression: [imds-v2]\n',
    });
    const outcome = await scan(dir, ['--config', 'scan.yaml']);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toBe(
      'nodeclass-scan: scan.yaml: annotationSuppression[0]: unknown check id "imds-v2" (see `nodeclass-scan checks`)\n'
    );
  });
});

describe('nodeclass-scan scan: an annotation with an expiry', () => {
  it('suppresses through the expiry day, then reports the finding again, saying so', async () => {
    // Prepare
    const dir = tree({
      'nodeclasses.yaml': nodeClass(
        'legacy-a',
        '    ignore-check.nodeclass-scanner/instance-profile-is-name: "old chart; expires=2026-11-30"'
      ),
    });
    // Act
    const before = await scan(dir, [], new Date('2026-11-30T23:00:00Z'));
    const after = await scan(dir, [], new Date('2026-12-01T00:00:00Z'));
    // Assess
    expect(before.code).toBe(0);
    expect(statusesOf(before.stdout).byName['legacy-a']).toMatchObject({
      status: 'suppressed',
      suppression: { reason: 'old chart', source: 'annotation', expires: '2026-11-30' },
    });
    expect(after.code).toBe(1);
    const expired = statusesOf(after.stdout).byName['legacy-a'];
    expect(expired?.status).toBe('fail');
    expect(expired?.message).toContain('("old chart") expired 2026-11-30');
  });
});
