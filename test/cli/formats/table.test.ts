import { describe, expect, it } from 'vitest';
import { sourceIndexOf } from '../../../lambda/cli/formats/sources.js';
import { formatTable, terminalSafe } from '../../../lambda/cli/formats/table.js';
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

describe('terminalSafe', () => {
  it('makes C0 and C1 control characters visible and keeps other text', () => {
    expect(terminalSafe('a\u0000b\u009bc\nd é😀')).toBe('a\\u0000b\\u009Bc\\u000Ad é😀');
  });
});
