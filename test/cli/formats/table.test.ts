import { describe, expect, it } from 'vitest';
import { sourceIndexOf } from '../../../lambda/cli/formats/sources.js';
import { formatTable } from '../../../lambda/cli/formats/table.js';
import { terminalSafe } from '../../../lambda/cli/terminal.js';
import { aFinding, aReport, inventoryFrom, nodeClass, TWO_NODECLASSES } from './fixtures.js';

const noSources = new Map();
const ESC = '\u001b';

describe('formatTable', () => {
  const report = aReport(
    [
      aFinding({
        checkId: 'instance-profile-is-name',
        severity: 'critical',
        resource: nodeClass('arn-profile'),
        message: 'spec.instanceProfile is an ARN.',
        remediation: 'Set spec.instanceProfile: KarpenterNode',
      }),
      aFinding({ checkId: 'role-is-name', status: 'pass', resource: nodeClass('arn-profile') }),
      aFinding({
        checkId: 'imds-v2-required',
        status: 'not-applicable',
        resource: nodeClass('arn-profile'),
      }),
      aFinding({
        checkId: 'ami-owner-explicit',
        severity: 'medium',
        status: 'error',
        resource: nodeClass('tagged', 'prod'),
        message: 'Could not evaluate.',
      }),
    ],
    { notRun: [{ checkId: 'ami-selector-resolves', missingInputs: ['aws'] }] }
  );

  it('groups findings by cluster and NodeClass, with the fix under each finding', () => {
    // Act
    const text = formatTable(report, { color: false, sources: noSources });
    // Assess
    expect(text).toBe(
      [
        'EC2NodeClass arn-profile',
        '  CRITICAL fail  instance-profile-is-name  spec.instanceProfile is an ARN.',
        '                 fix: Set spec.instanceProfile: KarpenterNode',
        '  1 passed, 1 not applicable',
        '',
        'cluster prod · EC2NodeClass tagged',
        '  MEDIUM   error ami-owner-explicit  Could not evaluate.',
        '                 fix: Fix ami-owner-explicit.',
        '',
        'Summary: 1 fail (1 critical), 1 error, 1 pass, 1 not-applicable · 2 NodeClasses scanned · 1 check not run (1 need aws input)',
        '',
      ].join('\n')
    );
  });

  it('shows where each NodeClass was read from', () => {
    const sources = sourceIndexOf(inventoryFrom('k8s/nodeclasses.yaml', TWO_NODECLASSES));
    const text = formatTable(report, { color: false, sources });
    expect(text).toContain('EC2NodeClass arn-profile  (k8s/nodeclasses.yaml:1)');
  });

  it('colours severities only when asked', () => {
    expect(formatTable(report, { color: false, sources: noSources })).not.toContain(ESC);
    const coloured = formatTable(report, { color: true, sources: noSources });
    expect(coloured).toContain(`${ESC}[1;31mCRITICAL`);
    expect(coloured).toContain(`${ESC}[33mMEDIUM`);
  });

  it('never passes terminal escapes from manifests through', () => {
    const hostile = aReport([
      aFinding({
        checkId: 'x',
        resource: nodeClass(`evil${ESC}[2J`),
        message: `boom${ESC}]0;title\u0007`,
      }),
    ]);
    const text = formatTable(hostile, { color: false, sources: noSources });
    expect(text).not.toContain(ESC);
    expect(text).toContain('evil\\u001B[2J');
  });

  it('folds checks that could not look for the same reason into one entry', () => {
    const reason = 'Not evaluated: the object is not a valid EC2NodeClass.';
    const errors = aReport([
      aFinding({ checkId: 'first-check', severity: 'critical', status: 'error', message: reason }),
      aFinding({ checkId: 'second-check', severity: 'low', status: 'error', message: reason }),
      aFinding({ checkId: 'other', severity: 'low', status: 'error', message: 'Something else.' }),
    ]);
    const lines = formatTable(errors, { color: false, sources: noSources }).split('\n');
    expect(lines.slice(1, 5)).toEqual([
      `  CRITICAL error 2 checks  ${reason}`,
      '                 checks: first-check, second-check',
      '  LOW      error other     Something else.',
      '                 fix: Fix other.',
    ]);
  });

  it('says so when no NodeClass was found', () => {
    const text = formatTable(aReport([], { nodeClasses: 0 }), { color: false, sources: noSources });
    expect(text).toContain('No EC2NodeClass found in the given inputs.');
    expect(text).toContain('0 NodeClasses scanned');
  });

  it('mentions unreadable inputs in the summary', () => {
    const text = formatTable(aReport([], { inputErrors: [{ source: 'a', message: 'b' }] }), {
      color: false,
      sources: noSources,
    });
    expect(text).toContain('1 input could not be read (see stderr)');
  });
});

describe('formatTable: suppressed findings and follow-ons', () => {
  const root = aFinding({
    checkId: 'ami-selector-resolves',
    severity: 'critical',
    resource: nodeClass('golden', 'prod'),
    message: 'amiSelectorTerms resolve to no image.',
  });
  const followOn = aFinding({
    checkId: 'controller-can-launch',
    severity: 'critical',
    status: 'error',
    resource: nodeClass('golden', 'prod'),
    message: 'Launching nodes could not be verified.',
    causedBy: root.id,
  });
  const accepted = aFinding({
    checkId: 'node-role-policies',
    status: 'suppressed',
    resource: nodeClass('golden', 'prod'),
    message: 'Node role lacks AmazonEKS_CNI_Policy.',
    suppression: {
      reason: 'CNI has its own role through IRSA',
      source: 'config',
      status: 'fail',
      expires: '2027-01-31',
    },
  });

  it('shows a follow-on under its root and a suppressed finding with its reason, counting neither as a failure', () => {
    // Act
    const text = formatTable(aReport([followOn, accepted, root]), {
      color: false,
      sources: noSources,
    });
    // Assess
    expect(text).toBe(
      [
        'cluster prod · EC2NodeClass golden',
        '  CRITICAL fail  ami-selector-resolves  amiSelectorTerms resolve to no image.',
        '                 fix: Fix ami-selector-resolves.',
        '                 ↳ controller-can-launch (critical error, caused by ami-selector-resolves): Launching nodes could not be verified.',
        '  suppressed  node-role-policies (high fail, config, until 2027-01-31): CNI has its own role through IRSA',
        '',
        'Summary: 1 fail (1 critical), 1 error (1 follow-on), 1 suppressed, 0 pass, 0 not-applicable · 1 NodeClass scanned',
        '',
      ].join('\n')
    );
  });

  it('names the resource of a follow-on that sits under a root on another resource', () => {
    const pool = aFinding({
      checkId: 'nodepool-check',
      status: 'error',
      resource: { cluster: 'prod', kind: 'NodePool', name: 'general' },
      causedBy: root.id,
    });
    const text = formatTable(aReport([root, pool]), { color: false, sources: noSources });
    expect(text).toContain(
      '                 ↳ nodepool-check on NodePool general (high error, caused by ami-selector-resolves): nodepool-check failed'
    );
    expect(text).not.toContain('cluster prod · NodePool general');
  });

  it('shows a follow-on whose root is not in the report as a finding of its own', () => {
    const orphan = { ...followOn, causedBy: 'ffffffffffffffff' };
    const text = formatTable(aReport([orphan]), { color: false, sources: noSources });
    expect(text).toContain(
      '  CRITICAL error controller-can-launch  Launching nodes could not be verified.'
    );
  });
});

describe('formatTable: notices', () => {
  const notice = aFinding({
    checkId: 'karpenter-version-supported',
    status: 'notice',
    severity: 'info',
    resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
    message: 'Expected, not an error: validation dry-runs succeed as HTTP 412 DryRunOperation.',
    remediation: 'Exclude code="412" from error alerts.',
  });

  it('shows a notice marked as such, with its advice, and counts it apart from failures', () => {
    // Act
    const text = formatTable(aReport([notice]), { color: false, sources: noSources });
    // Assess
    expect(text).toBe(
      [
        'cluster prod · Cluster prod',
        '  notice  karpenter-version-supported: Expected, not an error: validation dry-runs succeed as HTTP 412 DryRunOperation.',
        '                 advice: Exclude code="412" from error alerts.',
        '',
        'Summary: 0 fail, 0 error, 1 notice, 0 pass, 0 not-applicable · 0 NodeClasses scanned',
        '',
      ].join('\n')
    );
  });

  it('lists notices in a section of their own with a baseline, never as new', () => {
    const text = formatTable(
      { ...aReport([notice]), resolved: [] },
      { color: false, sources: noSources }
    );
    expect(text).toContain(
      [
        'Notices: 1',
        '',
        'cluster prod · Cluster prod',
        '  notice  karpenter-version-supported: ',
      ].join('\n')
    );
    expect(text).toContain('New since the baseline: none');
    expect(text).toContain('vs baseline: 0 new, 0 changed, 0 unchanged, 0 resolved');
  });
});

describe('formatTable with a baseline', () => {
  const changed = {
    ...aFinding({ checkId: 'subnets-have-free-ips', resource: nodeClass('edge', 'prod') }),
    change: 'changed' as const,
  };
  const unchanged = {
    ...aFinding({
      checkId: 'ami-allowed',
      resource: nodeClass('hardened', 'prod'),
      message: 'Image not allowed.',
    }),
    change: 'unchanged' as const,
  };
  const followOn = {
    ...aFinding({
      checkId: 'controller-can-launch',
      severity: 'critical',
      status: 'error',
      resource: nodeClass('hardened', 'prod'),
      message: 'Not verifiable.',
      causedBy: unchanged.id,
    }),
    change: 'new' as const,
  };
  const passed = aFinding({
    checkId: 'role-is-name',
    status: 'pass',
    resource: nodeClass('hardened', 'prod'),
  });
  const report = {
    ...aReport([changed, unchanged, followOn, passed]),
    resolved: [
      {
        id: 'aaaaaaaaaaaaaaaa',
        checkId: 'node-role-valid',
        resource: nodeClass('batch', 'prod'),
        severity: 'critical' as const,
        message: 'Node role does not trust EC2.',
      },
    ],
  };

  it('groups by change: new, changed, unchanged, then resolved; follow-ons stay under their root', () => {
    const text = formatTable(report, { color: false, sources: noSources });
    expect(text).toBe(
      [
        'New since the baseline: none',
        '',
        'Changed since the baseline: 1',
        '',
        'cluster prod · EC2NodeClass edge',
        '  HIGH     fail  subnets-have-free-ips  subnets-have-free-ips failed',
        '                 fix: Fix subnets-have-free-ips.',
        '',
        'Unchanged: 1',
        '',
        'cluster prod · EC2NodeClass hardened',
        '  HIGH     fail  ami-allowed  Image not allowed.',
        '                 fix: Fix ami-allowed.',
        '                 ↳ controller-can-launch (critical error, caused by ami-allowed): Not verifiable.',
        '',
        'Resolved since the baseline: 1',
        '  CRITICAL node-role-valid  cluster prod · EC2NodeClass batch: Node role does not trust EC2.',
        '',
        'Summary: 2 fail (2 high), 1 error (1 follow-on), 1 pass, 0 not-applicable · 2 NodeClasses scanned · vs baseline: 0 new, 1 changed, 1 unchanged, 1 resolved',
        '',
      ].join('\n')
    );
  });

  it('lists suppressed findings in a section of their own', () => {
    const accepted = aFinding({
      checkId: 'node-role-policies',
      status: 'suppressed',
      resource: nodeClass('edge', 'prod'),
      suppression: { reason: 'accepted risk', source: 'annotation', status: 'fail' },
    });
    const text = formatTable(
      { ...aReport([accepted, passed]), resolved: [] },
      { color: false, sources: noSources }
    );
    expect(text).toContain(
      [
        'Suppressed: 1',
        '',
        'cluster prod · EC2NodeClass edge',
        '  suppressed  node-role-policies (high fail, annotation): accepted risk',
      ].join('\n')
    );
    expect(text).not.toContain('Resolved');
  });
});

describe('terminalSafe', () => {
  it('makes C0 and C1 control characters visible and keeps other text', () => {
    expect(terminalSafe('a\u0000b\u009bc\nd é😀')).toBe('a\\u0000b\\u009Bc\\u000Ad é😀');
  });
});
