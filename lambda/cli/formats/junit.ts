import { type Finding, originLabel, type ResourceRef } from '../../core/model.js';
import type { ReportFinding, ScanReport } from '../../core/report.js';
import { xmlElement } from './xml.js';

/**
 * `cluster/NodeClass` (the cluster is omitted for a manifest scan); other kinds keep their kind.
 * Same-named manifest objects add where they are (`default (v1/al2.yaml#1)`), one suite each.
 */
export function junitClassName(resource: ResourceRef): string {
  const name =
    resource.kind === 'EC2NodeClass' ? resource.name : `${resource.kind}/${resource.name}`;
  const qualified = resource.cluster === '' ? name : `${resource.cluster}/${name}`;
  return resource.origin === undefined
    ? qualified
    : `${qualified} (${originLabel(resource.origin)})`;
}

interface TestCase {
  readonly name: string;
  readonly outcome: 'pass' | 'failure' | 'error' | 'skipped';
  readonly element: string;
}

/** Finding id → the finding, and root id → its follow-ons (findings with `causedBy`). */
interface Links {
  readonly byId: ReadonlyMap<string, Finding>;
  readonly followOns: ReadonlyMap<string, readonly Finding[]>;
}

function linksOf(findings: readonly Finding[]): Links {
  const byId = new Map(findings.map((finding) => [finding.id, finding]));
  const followOns = new Map<string, Finding[]>();
  for (const finding of findings) {
    if (finding.causedBy === undefined) continue;
    followOns.set(finding.causedBy, [...(followOns.get(finding.causedBy) ?? []), finding]);
  }
  return { byId, followOns };
}

function detail(findings: readonly ReportFinding[], links: Links): string {
  return findings
    .map((f) => {
      const change = f.change === undefined ? '' : `, ${f.change}`;
      const followOns = (links.followOns.get(f.id) ?? []).map(
        (follow) =>
          `\nFollow-on: ${follow.checkId} (${follow.severity} ${follow.status}): ${follow.message}`
      );
      return `[${f.severity}${change}] ${f.message}\nRemediation: ${f.remediation}${followOns.join('')}`;
    })
    .join('\n\n');
}

function skippedCase(
  attrs: Record<string, string | number>,
  message: string,
  output: readonly string[]
): TestCase {
  return {
    name: String(attrs.name),
    outcome: 'skipped',
    element: xmlElement('testcase', attrs, {
      children: [xmlElement('skipped', { message }), ...output],
    }),
  };
}

/**
 * Notices as the testcase's `<system-out>`: shown with the test, never a failure (a testcase with
 * only notices passes).
 */
function noticeOutput(notices: readonly Finding[]): string[] {
  if (notices.length === 0) return [];
  const text = notices
    .map((f) => `notice [${f.severity}]: ${f.message}\nAdvice: ${f.remediation}`)
    .join('\n\n');
  return [xmlElement('system-out', {}, { text })];
}

/**
 * One check on one resource; several findings (e.g. one per violation) share the testcase. Only
 * a finding's own failure fails it: suppressed findings and follow-ons (whose root fails in its
 * own testcase) are skipped, with the reason; notices pass, their text in `<system-out>`.
 */
function testCase(
  className: string,
  checkId: string,
  findings: readonly Finding[],
  links: Links
): TestCase {
  const own = findings.filter((f) => f.causedBy === undefined);
  const failed = own.filter((f) => f.status === 'fail');
  const errored = own.filter((f) => f.status === 'error');
  const suppressed = findings.filter((f) => f.status === 'suppressed');
  const followOns = findings.filter(
    (f) => f.causedBy !== undefined && (f.status === 'fail' || f.status === 'error')
  );
  const output = noticeOutput(own.filter((f) => f.status === 'notice'));
  const attrs = { classname: className, name: checkId, time: 0 };
  if (failed.length > 0) {
    const message = failed.map((f) => f.message).join(' | ');
    const child = xmlElement(
      'failure',
      { message, type: failed[0]?.severity },
      { text: detail(failed, links) }
    );
    return {
      name: checkId,
      outcome: 'failure',
      element: xmlElement('testcase', attrs, { children: [child, ...output] }),
    };
  }
  if (errored.length > 0) {
    const message = errored.map((f) => f.message).join(' | ');
    const child = xmlElement('error', { message, type: 'error' }, { text: detail(errored, links) });
    return {
      name: checkId,
      outcome: 'error',
      element: xmlElement('testcase', attrs, { children: [child, ...output] }),
    };
  }
  if (suppressed.length > 0) {
    const reasons = suppressed.map((f) => f.suppression?.reason ?? 'no reason given');
    return skippedCase(attrs, `suppressed: ${[...new Set(reasons)].join(' | ')}`, output);
  }
  if (followOns.length > 0) {
    const causes = followOns.map((f) => {
      const root = links.byId.get(f.causedBy ?? '');
      return `caused by ${root?.checkId ?? f.causedBy}: ${f.message}`;
    });
    return skippedCase(attrs, causes.join(' | '), output);
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
  return {
    name: checkId,
    outcome: 'pass',
    element: xmlElement('testcase', attrs, { children: output }),
  };
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

  const links = linksOf(report.findings);
  for (const [className, { resource, byCheck }] of [...byResource].sort(([a], [b]) =>
    a.localeCompare(b)
  )) {
    const cases = [...byCheck].map(([checkId, findings]) =>
      testCase(className, checkId, findings, links)
    );
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
