import type { Finding, ResourceRef } from '../../core/model.js';
import type { ScanReport } from '../../core/report.js';
import { xmlElement } from './xml.js';

/** `cluster/NodeClass` (the cluster is omitted for a manifest scan); other kinds keep their kind. */
export function junitClassName(resource: ResourceRef): string {
  const name =
    resource.kind === 'EC2NodeClass' ? resource.name : `${resource.kind}/${resource.name}`;
  return resource.cluster === '' ? name : `${resource.cluster}/${name}`;
}

interface TestCase {
  readonly name: string;
  readonly outcome: 'pass' | 'failure' | 'error' | 'skipped';
  readonly element: string;
}

function detail(findings: readonly Finding[]): string {
  return findings
    .map((f) => `[${f.severity}] ${f.message}\nRemediation: ${f.remediation}`)
    .join('\n\n');
}

/** One check on one resource; several findings (e.g. one per violation) share the testcase. */
function testCase(className: string, checkId: string, findings: readonly Finding[]): TestCase {
  const failed = findings.filter((f) => f.status === 'fail');
  const errored = findings.filter((f) => f.status === 'error');
  const attrs = { classname: className, name: checkId, time: 0 };
  if (failed.length > 0) {
    const message = failed.map((f) => f.message).join(' | ');
    const child = xmlElement(
      'failure',
      { message, type: failed[0]?.severity },
      { text: detail(failed) }
    );
    return {
      name: checkId,
      outcome: 'failure',
      element: xmlElement('testcase', attrs, { children: [child] }),
    };
  }
  if (errored.length > 0) {
    const message = errored.map((f) => f.message).join(' | ');
    const child = xmlElement('error', { message, type: 'error' }, { text: detail(errored) });
    return {
      name: checkId,
      outcome: 'error',
      element: xmlElement('testcase', attrs, { children: [child] }),
    };
  }
  if (findings.length > 0 && findings.every((f) => f.status === 'not-applicable')) {
    const message = findings.map((f) => f.message).join(' | ');
    const child = xmlElement('skipped', { message });
    return {
      name: checkId,
      outcome: 'skipped',
      element: xmlElement('testcase', attrs, { children: [child] }),
    };
  }
  return { name: checkId, outcome: 'pass', element: xmlElement('testcase', attrs) };
}

function suite(name: string, cases: readonly TestCase[], timestamp: string): string {
  const count = (outcome: TestCase['outcome']) => cases.filter((c) => c.outcome === outcome).length;
  return xmlElement(
    'testsuite',
    {
      name,
      tests: cases.length,
      failures: count('failure'),
      errors: count('error'),
      skipped: count('skipped'),
      time: 0,
      timestamp,
    },
    { children: cases.map((c) => c.element) }
  );
}

/**
 * JUnit XML: one testsuite per resource, one testcase per check × resource. Checks that were not run
 * (an input was not collected) are skipped testcases on every NodeClass; unreadable inputs are
 * errored testcases of an `inputs` suite, so CI shows them.
 */
export function formatJunit(report: ScanReport): string {
  const byResource = new Map<string, { resource: ResourceRef; byCheck: Map<string, Finding[]> }>();
  for (const finding of report.findings) {
    const className = junitClassName(finding.resource);
    let group = byResource.get(className);
    if (!group) {
      group = { resource: finding.resource, byCheck: new Map() };
      byResource.set(className, group);
    }
    const findings = group.byCheck.get(finding.checkId) ?? [];
    findings.push(finding);
    group.byCheck.set(finding.checkId, findings);
  }

  const suites: string[] = [];
  const totals = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  const addSuite = (name: string, cases: readonly TestCase[]) => {
    suites.push(suite(name, cases, report.scannedAt));
    totals.tests += cases.length;
    totals.failures += cases.filter((c) => c.outcome === 'failure').length;
    totals.errors += cases.filter((c) => c.outcome === 'error').length;
    totals.skipped += cases.filter((c) => c.outcome === 'skipped').length;
  };

  for (const [className, { resource, byCheck }] of [...byResource].sort(([a], [b]) =>
    a.localeCompare(b)
  )) {
    const cases = [...byCheck].map(([checkId, findings]) => testCase(className, checkId, findings));
    if (resource.kind === 'EC2NodeClass') {
      for (const { checkId, missingInputs } of report.summary.notRun) {
        const message = `not run: needs ${missingInputs.join(', ')} input, not collected in this scan`;
        cases.push({
          name: checkId,
          outcome: 'skipped',
          element: xmlElement(
            'testcase',
            { classname: className, name: checkId, time: 0 },
            {
              children: [xmlElement('skipped', { message })],
            }
          ),
        });
      }
    }
    addSuite(
      className,
      cases.sort((a, b) => a.name.localeCompare(b.name))
    );
  }

  if (report.summary.inputErrors.length > 0) {
    addSuite(
      'inputs',
      report.summary.inputErrors.map((inputError) => ({
        name: inputError.source,
        outcome: 'error',
        element: xmlElement(
          'testcase',
          { classname: 'inputs', name: inputError.source, time: 0 },
          {
            children: [
              xmlElement(
                'error',
                { message: inputError.message, type: 'input' },
                { text: inputError.message }
              ),
            ],
          }
        ),
      }))
    );
  }

  const root = xmlElement(
    'testsuites',
    { name: 'nodeclass-scan', time: 0, ...totals },
    { children: suites }
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n${root}\n`;
}
