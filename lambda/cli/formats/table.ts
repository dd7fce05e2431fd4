import { type Finding, type ResourceRef, SEVERITIES, type Severity } from '../../core/model.js';
import type { ScanReport } from '../../core/report.js';
import { positionOf, type SourceIndex, sourceOf } from './sources.js';

export interface TableOptions {
  readonly color: boolean;
  readonly sources: SourceIndex;
}

const RESET = '\u001b[0m';
const SEVERITY_COLORS: Readonly<Record<Severity, string>> = {
  critical: '\u001b[1;31m',
  high: '\u001b[31m',
  medium: '\u001b[33m',
  low: '\u001b[36m',
  info: '\u001b[2m',
};
const ERROR_COLOR = '\u001b[35m';
const DIM = '\u001b[2m';

// Names and messages come from untrusted manifests: never let them emit terminal escapes.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/g;

/** Untrusted text made safe for a terminal: control characters become a visible `\uXXXX`. */
export function terminalSafe(text: string): string {
  return text.replace(
    CONTROL,
    (char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`
  );
}

function paint(text: string, code: string, color: boolean): string {
  return color ? `${code}${text}${RESET}` : text;
}

function heading(resource: ResourceRef, sources: SourceIndex, sample: Finding): string {
  const cluster = resource.cluster === '' ? '' : `cluster ${resource.cluster} · `;
  const source = sourceOf(sources, sample);
  const position = source ? positionOf(source, undefined) : undefined;
  const where = source ? `  (${source.file}${position ? `:${position.line}` : ''})` : '';
  return terminalSafe(`${cluster}${resource.kind} ${resource.name}${where}`);
}

function findingLines(finding: Finding, idWidth: number, color: boolean): string[] {
  const label = finding.severity.toUpperCase().padEnd(8);
  const status = finding.status.padEnd(5);
  const line = `  ${paint(label, SEVERITY_COLORS[finding.severity], color)} ${paint(
    status,
    finding.status === 'error' ? ERROR_COLOR : '',
    color && finding.status === 'error'
  )} ${finding.checkId.padEnd(idWidth)}  ${terminalSafe(finding.message)}`;
  const indent = ' '.repeat(2 + 8 + 1 + 5 + 1);
  return [line, `${indent}${paint('fix:', DIM, color)} ${terminalSafe(finding.remediation)}`];
}

/** Several checks that could not look for the same reason (e.g. an object that does not parse). */
interface CollapsedErrors {
  readonly severity: Severity;
  readonly message: string;
  readonly checkIds: readonly string[];
}

/** Errors sharing a message become one entry; the most severe first (findings arrive sorted). */
function collapseErrors(errors: readonly Finding[]): (Finding | CollapsedErrors)[] {
  const byMessage = new Map<string, Finding[]>();
  for (const error of errors) {
    const same = byMessage.get(error.message);
    if (same) same.push(error);
    else byMessage.set(error.message, [error]);
  }
  return [...byMessage.values()].map((same) => {
    const [head] = same;
    if (same.length === 1 && head) return head;
    return {
      severity: head?.severity ?? 'info',
      message: head?.message ?? '',
      checkIds: same.map((f) => f.checkId),
    };
  });
}

function collapsedLabel(errors: CollapsedErrors): string {
  return `${errors.checkIds.length} checks`;
}

function collapsedLines(errors: CollapsedErrors, idWidth: number, color: boolean): string[] {
  const label = errors.severity.toUpperCase().padEnd(8);
  const line = `  ${paint(label, SEVERITY_COLORS[errors.severity], color)} ${paint('error', ERROR_COLOR, color)} ${collapsedLabel(errors).padEnd(idWidth)}  ${terminalSafe(errors.message)}`;
  const indent = ' '.repeat(2 + 8 + 1 + 5 + 1);
  return [line, `${indent}${paint('checks:', DIM, color)} ${errors.checkIds.join(', ')}`];
}

function passSummary(findings: readonly Finding[]): string[] {
  const passed = findings.filter((f) => f.status === 'pass').length;
  const notApplicable = findings.filter((f) => f.status === 'not-applicable').length;
  if (passed + notApplicable === 0) return [];
  return [`  ${passed} passed, ${notApplicable} not applicable`];
}

function plural(count: number, word: string, words = `${word}s`): string {
  return `${count} ${count === 1 ? word : words}`;
}

function summaryLine(report: ScanReport): string {
  const { byStatus, failuresBySeverity, nodeClasses, notRun, inputErrors } = report.summary;
  const failing = SEVERITIES.filter((severity) => failuresBySeverity[severity] > 0)
    .map((severity) => `${failuresBySeverity[severity]} ${severity}`)
    .join(', ');
  const parts = [
    `${byStatus.fail} fail${failing === '' ? '' : ` (${failing})`}, ${byStatus.error} error, ${byStatus.pass} pass, ${byStatus['not-applicable']} not-applicable`,
    `${plural(nodeClasses, 'NodeClass', 'NodeClasses')} scanned`,
  ];
  if (notRun.length > 0) {
    const byInputs = new Map<string, number>();
    for (const { missingInputs } of notRun) {
      const key = missingInputs.join('+');
      byInputs.set(key, (byInputs.get(key) ?? 0) + 1);
    }
    const reasons = [...byInputs].map(([inputs, count]) => `${count} need ${inputs} input`);
    parts.push(`${plural(notRun.length, 'check')} not run (${reasons.join(', ')})`);
  }
  if (inputErrors.length > 0) {
    parts.push(`${plural(inputErrors.length, 'input')} could not be read (see stderr)`);
  }
  return `Summary: ${parts.join(' · ')}`;
}

/** Human output: findings grouped by cluster and resource, passes as counts, one summary line. */
export function formatTable(report: ScanReport, options: TableOptions): string {
  const groups = new Map<string, Finding[]>();
  for (const finding of report.findings) {
    const { cluster, kind, name } = finding.resource;
    const key = [cluster, kind, name].join('\u0000');
    const group = groups.get(key);
    if (group) group.push(finding);
    else groups.set(key, [finding]);
  }
  const blocks: string[] = [];
  for (const key of [...groups.keys()].sort((a, b) => a.localeCompare(b))) {
    const findings = groups.get(key) ?? [];
    const first = findings[0];
    if (!first) continue;
    const failed = findings.filter((f) => f.status === 'fail');
    const errors = collapseErrors(findings.filter((f) => f.status === 'error'));
    const idWidth = Math.max(
      0,
      ...failed.map((f) => f.checkId.length),
      ...errors.map((e) => ('checkIds' in e ? collapsedLabel(e).length : e.checkId.length))
    );
    blocks.push(
      [
        heading(first.resource, options.sources, first),
        ...failed.flatMap((f) => findingLines(f, idWidth, options.color)),
        ...errors.flatMap((e) =>
          'checkIds' in e
            ? collapsedLines(e, idWidth, options.color)
            : findingLines(e, idWidth, options.color)
        ),
        ...passSummary(findings),
      ].join('\n')
    );
  }
  if (blocks.length === 0) {
    blocks.push(
      report.summary.nodeClasses === 0
        ? 'No EC2NodeClass found in the given inputs.'
        : 'No findings.'
    );
  }
  return `${blocks.join('\n\n')}\n\n${summaryLine(report)}\n`;
}
