import { describe, expect, it } from 'vitest';
import { formatJunit, junitClassName } from '../../../lambda/cli/formats/junit.js';
import { findAll, parseXml, type XmlNode } from '../support/strict-xml.js';
import { aFinding, aReport, nodeClass } from './fixtures.js';

function testcases(
  root: XmlNode
): { classname?: string | undefined; name?: string | undefined; outcome: string }[] {
  return findAll(root, 'testcase').map((testcase) => ({
    classname: testcase.attributes.classname,
    name: testcase.attributes.name,
    // `<system-out>` (notices) is output, not an outcome.
    outcome: testcase.children.find((child) => child.name !== 'system-out')?.name ?? 'pass',
  }));
}

describe('formatJunit', () => {
  it('has one testcase per check × NodeClass with failure, error and skipped outcomes', () => {
    // Prepare
    const report = aReport([
      aFinding({ checkId: 'a-check', status: 'fail', resource: nodeClass('one', 'prod') }),
      aFinding({ checkId: 'b-check', status: 'error', resource: nodeClass('one', 'prod') }),
      aFinding({
        checkId: 'c-check',
        status: 'not-applicable',
        resource: nodeClass('one', 'prod'),
      }),
      aFinding({ checkId: 'a-check', status: 'pass', resource: nodeClass('two', 'prod') }),
    ]);
    // Act
    const root = parseXml(formatJunit(report));
    // Assess
    expect(testcases(root)).toEqual([
      { classname: 'prod/one', name: 'a-check', outcome: 'failure' },
      { classname: 'prod/one', name: 'b-check', outcome: 'error' },
      { classname: 'prod/one', name: 'c-check', outcome: 'skipped' },
      { classname: 'prod/two', name: 'a-check', outcome: 'pass' },
    ]);
    expect(root.attributes).toMatchObject({ tests: '4', failures: '1', errors: '1', skipped: '1' });
    const suites = findAll(root, 'testsuite');
    expect(suites.map((suite) => [suite.attributes.name, suite.attributes.tests])).toEqual([
      ['prod/one', '3'],
      ['prod/two', '1'],
    ]);
  });

  it('folds several findings of one check on one NodeClass into one testcase; fail wins', () => {
    const resource = nodeClass('one');
    const report = aReport([
      aFinding({
        checkId: 'schema',
        status: 'fail',
        message: 'first',
        location: { path: 'a' },
        resource,
      }),
      aFinding({
        checkId: 'schema',
        status: 'fail',
        message: 'second',
        location: { path: 'b' },
        resource,
      }),
      aFinding({
        checkId: 'schema',
        status: 'error',
        message: 'third',
        location: { path: 'c' },
        resource,
      }),
    ]);
    const root = parseXml(formatJunit(report));
    const [failure] = findAll(root, 'failure');
    expect(findAll(root, 'testcase')).toHaveLength(1);
    expect(failure?.attributes.message).toBe('first | second');
    expect(failure?.text).toContain('Remediation: Fix schema.');
  });

  it('adds skipped testcases for checks that were not run, on every NodeClass', () => {
    const report = aReport(
      [aFinding({ checkId: 'a', status: 'pass', resource: nodeClass('one') })],
      {
        notRun: [{ checkId: 'ami-selector-resolves', missingInputs: ['aws'] }],
      }
    );
    const root = parseXml(formatJunit(report));
    const skipped = findAll(root, 'testcase').find(
      (testcase) => testcase.attributes.name === 'ami-selector-resolves'
    );
    expect(skipped?.children[0]?.name).toBe('skipped');
    expect(skipped?.children[0]?.attributes.message).toContain('aws');
  });

  it('reports unreadable inputs as errored testcases', () => {
    const report = aReport([], { inputErrors: [{ source: 'x.yaml:3', message: 'bad YAML' }] });
    const root = parseXml(formatJunit(report));
    expect(testcases(root)).toEqual([{ classname: 'inputs', name: 'x.yaml:3', outcome: 'error' }]);
    expect(root.attributes.errors).toBe('1');
  });

  it('stays well-formed with markup and forbidden characters in names and messages', () => {
    const nasty = 'x<y>&"\'\u0000\u001b]]>\ud800';
    const report = aReport([
      aFinding({
        checkId: 'a',
        message: nasty,
        remediation: nasty,
        resource: nodeClass(nasty, nasty),
      }),
    ]);
    const root = parseXml(formatJunit(report));
    const [failure] = findAll(root, 'failure');
    expect(failure?.attributes.message).toBe('x<y>&"\'\\u0000\\u001B]]>\\uD800');
    expect(findAll(root, 'testcase')[0]?.attributes.classname).toBe(
      'x<y>&"\'\\u0000\\u001B]]>\\uD800/x<y>&"\'\\u0000\\u001B]]>\\uD800'
    );
  });

  it('is an empty but valid document when nothing was scanned', () => {
    const root = parseXml(formatJunit(aReport([])));
    expect(root.name).toBe('testsuites');
    expect(root.attributes.tests).toBe('0');
  });
});

describe('formatJunit: suppressed findings and follow-ons', () => {
  it('skips a suppressed check with its reason instead of failing it', () => {
    // Prepare
    const report = aReport([
      aFinding({
        checkId: 'node-role-policies',
        status: 'suppressed',
        resource: nodeClass('one', 'prod'),
        suppression: { reason: 'CNI uses IRSA', source: 'annotation', status: 'fail' },
      }),
    ]);
    // Act
    const root = parseXml(formatJunit(report));
    // Assess
    const [skipped] = findAll(root, 'skipped');
    expect(skipped?.attributes.message).toBe('suppressed: CNI uses IRSA');
    expect(root.attributes).toMatchObject({ tests: '1', failures: '0', errors: '0', skipped: '1' });
  });

  it('fails only the root; its follow-on is skipped, naming the root, and listed in the failure', () => {
    const cause = aFinding({
      checkId: 'ami-selector-resolves',
      severity: 'critical',
      resource: nodeClass('golden', 'prod'),
    });
    const report = aReport([
      cause,
      aFinding({
        checkId: 'controller-can-launch',
        severity: 'critical',
        status: 'error',
        resource: nodeClass('golden', 'prod'),
        message: 'Launching nodes could not be verified.',
        causedBy: cause.id,
      }),
    ]);
    const root = parseXml(formatJunit(report));
    expect(testcases(root)).toEqual([
      { classname: 'prod/golden', name: 'ami-selector-resolves', outcome: 'failure' },
      { classname: 'prod/golden', name: 'controller-can-launch', outcome: 'skipped' },
    ]);
    expect(root.attributes).toMatchObject({ failures: '1', errors: '0', skipped: '1' });
    expect(findAll(root, 'skipped')[0]?.attributes.message).toBe(
      'caused by ami-selector-resolves: Launching nodes could not be verified.'
    );
    expect(findAll(root, 'failure')[0]?.text).toContain(
      'Follow-on: controller-can-launch (critical error): Launching nodes could not be verified.'
    );
  });

  it('says how a failure compares with the baseline', () => {
    const added = { ...aFinding({ checkId: 'a-check' }), change: 'new' as const };
    const report = aReport([added]);
    const [failure] = findAll(parseXml(formatJunit(report)), 'failure');
    expect(failure?.text).toContain('[high, new] a-check failed');
  });
});

describe('formatJunit: notices', () => {
  const notice = aFinding({
    checkId: 'karpenter-version-supported',
    status: 'notice',
    severity: 'info',
    resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
    message: 'Expected, not an error: validation dry-runs succeed as HTTP 412 DryRunOperation.',
    remediation: 'Exclude code="412" from error alerts.',
  });

  it('passes a testcase with only a notice, its text in system-out', () => {
    // Act
    const root = parseXml(formatJunit(aReport([notice])));
    // Assess
    expect(testcases(root)).toEqual([
      { classname: 'prod/Cluster/prod', name: 'karpenter-version-supported', outcome: 'pass' },
    ]);
    expect(root.attributes).toMatchObject({ tests: '1', failures: '0', errors: '0', skipped: '0' });
    const [out] = findAll(root, 'system-out');
    expect(out?.text).toContain('notice [info]: Expected, not an error');
    expect(out?.text).toContain('Advice: Exclude code="412" from error alerts.');
    expect(findAll(root, 'failure')).toEqual([]);
  });

  it('fails a testcase on its failure only, keeping the notice beside it in system-out', () => {
    const defect = aFinding({
      checkId: 'karpenter-version-supported',
      status: 'fail',
      severity: 'medium',
      resource: notice.resource,
      id: 'defect',
      message: 'Validation dry-runs RunInstances without a subnet.',
    });
    const root = parseXml(formatJunit(aReport([notice, defect])));
    const [testcase] = findAll(root, 'testcase');
    expect(testcase?.children.map((child) => child.name)).toEqual(['failure', 'system-out']);
    expect(testcase?.children[0]?.attributes.message).toBe(
      'Validation dry-runs RunInstances without a subnet.'
    );
    expect(root.attributes).toMatchObject({ failures: '1' });
  });
});

describe('junitClassName', () => {
  it('omits the empty cluster of a manifest scan and keeps the kind of other resources', () => {
    expect(junitClassName(nodeClass('default'))).toBe('default');
    expect(junitClassName(nodeClass('default', 'prod'))).toBe('prod/default');
    expect(junitClassName({ cluster: 'prod', kind: 'Cluster', name: '*' })).toBe('prod/Cluster/*');
  });
});
