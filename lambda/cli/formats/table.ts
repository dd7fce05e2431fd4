import {
  type Finding,
  originLabel,
  type ResourceRef,
  resourceKey,
  SEVERITIES,
  type Severity,
  sameResource,
} from '../../core/model.js';
import type { ReportFinding, ResolvedFinding, ScanReport } from '../../core/report.js';
import { terminalSafe } from '../terminal.js';
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
const NOTICE_COLOR = '\u001b[36m';
const DIM = '\u001b[2m';

// Names, messages and file paths are untrusted: data goes through `terminalSafe` before `paint`.
function paint(text: string, code: string, color: boolean): string {
  return color ? `${code}${text}${RESET}` : text;
}

function resourceHeading(resource: ResourceRef): string {
  const cluster = resource.cluster === '' ? '' : `cluster ${resource.cluster} · `;
  return `${cluster}${resource.kind} ${resource.name}`;
}

function heading(resource: ResourceRef, sources: SourceIndex, sample: Finding): string {
  const source = sourceOf(sources, sample);
  const position = source ? positionOf(source, undefined) : undefined;
  const where = source ? `  (${source.file}${position ? `:${position.line}` : ''})` : '';
  return terminalSafe(`${resourceHeading(resource)}${where}`);
}

const INDENT = ' '.repeat(2 + 8 + 1 + 5 + 1);

/** Follow-ons sit under their root, indented; they are the root's consequence, not own failures. */
function followOnLines(root: Finding, context: BlockContext): string[] {
  return (context.followOns.get(root.id) ?? []).map((finding) => {
    const where = sameResource(finding.resource, root.resource)
      ? ''
      : ` on ${finding.resource.kind} ${finding.resource.name}${
          finding.resource.origin ? ` (${originLabel(finding.resource.origin)})` : ''
        }`;
    const line = `${INDENT}↳ ${finding.checkId}${where} (${finding.severity} ${finding.status}, caused by ${root.checkId}): ${finding.message}`;
    return paint(terminalSafe(line), DIM, context.color);
  });
}

function findingLines(finding: Finding, idWidth: number, context: BlockContext): string[] {
  const { color } = context;
  const label = finding.severity.toUpperCase().padEnd(8);
  const status = finding.status.padEnd(5);
  const line = `  ${paint(label, SEVERITY_COLORS[finding.severity], color)} ${paint(
    status,
    finding.status === 'error' ? ERROR_COLOR : '',
    color && finding.status === 'error'
  )} ${terminalSafe(finding.checkId.padEnd(idWidth))}  ${terminalSafe(finding.message)}`;
  return [
    line,
    `${INDENT}${paint('fix:', DIM, color)} ${terminalSafe(finding.remediation)}`,
    ...followOnLines(finding, context),
  ];
}

/** One line: what was accepted, what it would be, and why (it never counts as a failure). */
function suppressedLines(finding: Finding, context: BlockContext): string[] {
  const suppression = finding.suppression;
  const source = suppression === undefined ? '' : `, ${suppression.source}`;
  const until = suppression?.expires === undefined ? '' : `, until ${suppression.expires}`;
  const was = suppression?.status ?? 'fail';
  const line = `  suppressed  ${finding.checkId} (${finding.severity} ${was}${source}${until}): ${suppression?.reason ?? ''}`;
  return [paint(terminalSafe(line), DIM, context.color), ...followOnLines(finding, context)];
}

/** A notice: something to know, not a failure (it never counts); its remediation is advice. */
function noticeLines(finding: Finding, context: BlockContext): string[] {
  const { color } = context;
  return [
    `  ${paint('notice', NOTICE_COLOR, color)}  ${terminalSafe(`${finding.checkId}: ${finding.message}`)}`,
    `${INDENT}${paint('advice:', DIM, color)} ${terminalSafe(finding.remediation)}`,
  ];
}

/** Several checks that could not look for the same reason (e.g. an object that does not parse). */
interface CollapsedErrors {
  readonly severity: Severity;
  readonly message: string;
  readonly findings: readonly Finding[];
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
    return { severity: head?.severity ?? 'info', message: head?.message ?? '', findings: same };
  });
}

function collapsedLabel(errors: CollapsedErrors): string {
  return `${errors.findings.length} checks`;
}

function collapsedLines(errors: CollapsedErrors, idWidth: number, context: BlockContext): string[] {
  const { color } = context;
  const label = errors.severity.toUpperCase().padEnd(8);
  const line = `  ${paint(label, SEVERITY_COLORS[errors.severity], color)} ${paint('error', ERROR_COLOR, color)} ${collapsedLabel(errors).padEnd(idWidth)}  ${terminalSafe(errors.message)}`;
  return [
    line,
    `${INDENT}${paint('checks:', DIM, color)} ${terminalSafe(errors.findings.map((f) => f.checkId).join(', '))}`,
    ...errors.findings.flatMap((finding) => followOnLines(finding, context)),
  ];
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

const isOpen = (finding: Finding) => finding.status === 'fail' || finding.status === 'error';

function summaryLine(report: ScanReport): string {
  const { byStatus, failuresBySeverity, nodeClasses, notRun, inputErrors } = report.summary;
  // Follow-ons are shown under their root and counted apart, so one cause is one failure.
  const own = report.findings.filter((f) => f.causedBy === undefined);
  const followOns = report.findings.length - own.length;
  const failing = SEVERITIES.filter((severity) => failuresBySeverity[severity] > 0);
  const failed = failing.reduce((sum, severity) => sum + failuresBySeverity[severity], 0);
  const bySeverity = failing.map((severity) => `${failuresBySeverity[severity]} ${severity}`);
  const counts = [
    `${failed} fail${failed === 0 ? '' : ` (${bySeverity.join(', ')})`}`,
    `${own.filter((f) => f.status === 'error').length} error`,
    ...(followOns > 0 ? [`${followOns} follow-on`] : []),
    ...(byStatus.suppressed > 0 ? [`${byStatus.suppressed} suppressed`] : []),
    ...(byStatus.notice > 0 ? [plural(byStatus.notice, 'notice')] : []),
    `${byStatus.pass} pass`,
    `${byStatus['not-applicable']} not-applicable`,
  ];
  const parts = [counts.join(', '), `${plural(nodeClasses, 'NodeClass', 'NodeClasses')} scanned`];
  if (report.resolved !== undefined) {
    const open = own.filter(isOpen);
    const count = (change: string) => open.filter((f) => f.change === change).length;
    parts.push(
      `vs baseline: ${count('new')} new, ${count('changed')} changed, ${count('unchanged')} unchanged, ${report.resolved.length} resolved`
    );
  }
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

interface BlockContext {
  readonly color: boolean;
  readonly sources: SourceIndex;
  /** Root finding id → the follow-ons shown under it. */
  readonly followOns: ReadonlyMap<string, readonly ReportFinding[]>;
  /** Show pass/not-applicable counts per resource (not in the sections of a baseline comparison). */
  readonly passes: boolean;
}

/** Findings grouped by cluster and resource: fails, errors, suppressed, notices, then pass counts. */
function resourceBlocks(findings: readonly ReportFinding[], context: BlockContext): string[] {
  const groups = new Map<string, ReportFinding[]>();
  for (const finding of findings) {
    const key = resourceKey(finding.resource);
    const group = groups.get(key);
    if (group) group.push(finding);
    else groups.set(key, [finding]);
  }
  const blocks: string[] = [];
  for (const key of [...groups.keys()].sort((a, b) => a.localeCompare(b))) {
    const group = groups.get(key) ?? [];
    const first = group[0];
    if (!first) continue;
    const failed = group.filter((f) => f.status === 'fail');
    const errors = collapseErrors(group.filter((f) => f.status === 'error'));
    const suppressed = group.filter((f) => f.status === 'suppressed');
    const notices = group.filter((f) => f.status === 'notice');
    const idWidth = Math.max(
      0,
      ...failed.map((f) => f.checkId.length),
      ...errors.map((e) => ('findings' in e ? collapsedLabel(e).length : e.checkId.length))
    );
    blocks.push(
      [
        heading(first.resource, context.sources, first),
        ...failed.flatMap((f) => findingLines(f, idWidth, context)),
        ...errors.flatMap((e) =>
          'findings' in e ? collapsedLines(e, idWidth, context) : findingLines(e, idWidth, context)
        ),
        ...suppressed.flatMap((f) => suppressedLines(f, context)),
        ...notices.flatMap((f) => noticeLines(f, context)),
        ...(context.passes ? passSummary(group) : []),
      ].join('\n')
    );
  }
  return blocks;
}

function resolvedLine(finding: ResolvedFinding, color: boolean): string {
  const label = finding.severity.toUpperCase().padEnd(8);
  return `  ${paint(label, SEVERITY_COLORS[finding.severity], color)} ${terminalSafe(
    `${finding.checkId}  ${resourceHeading(finding.resource)}${
      finding.resource.origin ? ` (${originLabel(finding.resource.origin)})` : ''
    }: ${finding.message}`
  )}`;
}

/** With a baseline: what is new, what changed, what was already there, what was fixed. */
function baselineSections(
  findings: readonly ReportFinding[],
  resolved: readonly ResolvedFinding[],
  context: BlockContext
): string[] {
  const sections: string[] = [];
  const section = (title: string, selected: readonly ReportFinding[], always: boolean) => {
    if (selected.length === 0) {
      if (always) sections.push(`${title}: none`);
      return;
    }
    sections.push(`${title}: ${selected.length}`, ...resourceBlocks(selected, context));
  };
  section(
    'New since the baseline',
    findings.filter((f) => f.change === 'new'),
    true
  );
  section(
    'Changed since the baseline',
    findings.filter((f) => f.change === 'changed'),
    true
  );
  section(
    'Unchanged',
    findings.filter((f) => f.change === 'unchanged'),
    false
  );
  section(
    'Suppressed',
    findings.filter((f) => f.status === 'suppressed'),
    false
  );
  section(
    'Notices',
    findings.filter((f) => f.status === 'notice'),
    false
  );
  if (resolved.length > 0) {
    sections.push(
      [
        `Resolved since the baseline: ${resolved.length}`,
        ...resolved.map((f) => resolvedLine(f, context.color)),
      ].join('\n')
    );
  }
  return sections;
}

/**
 * Human output: findings grouped by cluster and resource, follow-ons under their root, passes as
 * counts, one summary line. With a baseline, grouped first by change (new, changed, unchanged).
 */
export function formatTable(report: ScanReport, options: TableOptions): string {
  const byId = new Map(report.findings.map((finding) => [finding.id, finding]));
  const followOns = new Map<string, ReportFinding[]>();
  const topLevel: ReportFinding[] = [];
  for (const finding of report.findings) {
    const root = finding.causedBy === undefined ? undefined : byId.get(finding.causedBy);
    const nests =
      root !== undefined &&
      root.causedBy === undefined &&
      (isOpen(root) || root.status === 'suppressed');
    if (!nests) {
      topLevel.push(finding);
      continue;
    }
    const siblings = followOns.get(root.id);
    if (siblings) siblings.push(finding);
    else followOns.set(root.id, [finding]);
  }
  const context: BlockContext = {
    color: options.color,
    sources: options.sources,
    followOns,
    passes: report.resolved === undefined,
  };
  const blocks =
    report.resolved === undefined
      ? resourceBlocks(topLevel, context)
      : baselineSections(topLevel, report.resolved, context);
  if (blocks.length === 0) {
    blocks.push(
      report.summary.nodeClasses === 0
        ? 'No EC2NodeClass found in the given inputs.'
        : 'No findings.'
    );
  }
  return `${blocks.join('\n\n')}\n\n${summaryLine(report)}\n`;
}
