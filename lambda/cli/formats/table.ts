import {
  FINDING_STATUSES,
  type Finding,
  type FindingStatus,
  originLabel,
  type ResourceRef,
  resourceKey,
  SEVERITIES,
  type Severity,
  sameResource,
} from '../../core/model.js';
import type { ReportFinding, ResolvedFinding, ScanReport } from '../../core/report.js';
import { terminalSafe } from '../terminal.js';
import {
  type DisplayFilter,
  describeFilter,
  isFiltering,
  shows,
  showsResolved,
} from './display-filter.js';
import { positionOf, type SourceIndex, sourceOf } from './sources.js';
import { hangingLines, jsonBlock, splitPolicies } from './wrap.js';

export interface TableOptions {
  readonly color: boolean;
  readonly sources: SourceIndex;
  /** Columns to wrap to (hanging indents); absent: one line per entry, however long. */
  readonly width?: number;
  /** Findings and errors only: no pass counts, no summary line (`--quiet`). */
  readonly quiet?: boolean;
  /** `--severity`/`--status`: which findings are shown (the summary still counts them all). */
  readonly filter?: DisplayFilter;
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

function heading(
  resource: ResourceRef,
  sources: SourceIndex,
  sample: Finding,
  width: number | undefined
): string[] {
  const source = sourceOf(sources, sample);
  const position = source ? positionOf(source, undefined) : undefined;
  const where = source ? `  (${source.file}${position ? `:${position.line}` : ''})` : '';
  return hangingLines('', terminalSafe(`${resourceHeading(resource)}${where}`), 4, width);
}

/** Where messages continue and fixes start: under the check id column's start. */
const INDENT_WIDTH = 2 + 8 + 1 + 5 + 1;
const INDENT = ' '.repeat(INDENT_WIDTH);
/** The room a message column needs on its first line; with less, messages follow their check id. */
const MIN_TEXT = 40;

/** Each line painted on its own, so a wrapped line never carries colour into the next. */
function painted(lines: readonly string[], code: string, color: boolean): string[] {
  return lines.map((line) => {
    const text = line.trimStart();
    return `${line.slice(0, line.length - text.length)}${paint(text, code, color)}`;
  });
}

/**
 * `label text` at INDENT, continued under the text; IAM policies in it (remediations that say
 * what to add) as indented JSON blocks, ready to copy.
 */
function labelled(label: string, text: string, context: BlockContext): string[] {
  const lead = `${INDENT}${paint(label, DIM, context.color)} `;
  const hang = INDENT_WIDTH + label.length + 1;
  const lines: string[] = [];
  for (const piece of splitPolicies(text)) {
    const first = lines.length === 0 ? lead : ' '.repeat(hang);
    if (piece.kind === 'text') {
      lines.push(...hangingLines(first, terminalSafe(piece.text), hang, context.width));
    } else {
      if (lines.length === 0) lines.push(lead.trimEnd());
      lines.push(...jsonBlock(piece.value, hang, context.width).map(terminalSafe));
    }
  }
  return lines;
}

/** Follow-ons sit under their root, indented; they are the root's consequence, not own failures. */
function followOnLines(root: Finding, context: BlockContext): string[] {
  return (context.followOns.get(root.id) ?? []).flatMap((finding) => {
    const where = sameResource(finding.resource, root.resource)
      ? ''
      : ` on ${finding.resource.kind} ${finding.resource.name}${
          finding.resource.origin ? ` (${originLabel(finding.resource.origin)})` : ''
        }`;
    const line = `↳ ${finding.checkId}${where} (${finding.severity} ${finding.status}, caused by ${root.checkId}): ${finding.message}`;
    return painted(
      hangingLines(INDENT, terminalSafe(line), INDENT_WIDTH + 2, context.width),
      DIM,
      context.color
    );
  });
}

function findingLines(finding: Finding, idWidth: number, context: BlockContext): string[] {
  const { color } = context;
  const label = finding.severity.toUpperCase().padEnd(8);
  const status = finding.status.padEnd(5);
  const lead = `  ${paint(label, SEVERITY_COLORS[finding.severity], color)} ${paint(
    status,
    finding.status === 'error' ? ERROR_COLOR : '',
    color && finding.status === 'error'
  )} ${terminalSafe(finding.checkId.padEnd(idWidth))}  `;
  return [
    ...hangingLines(lead, terminalSafe(finding.message), INDENT_WIDTH, context.width),
    ...labelled('fix:', finding.remediation, context),
    ...followOnLines(finding, context),
  ];
}

/** One line: what was accepted, what it would be, and why (it never counts as a failure). */
function suppressedLines(finding: Finding, context: BlockContext): string[] {
  const suppression = finding.suppression;
  const source = suppression === undefined ? '' : `, ${suppression.source}`;
  const until = suppression?.expires === undefined ? '' : `, until ${suppression.expires}`;
  const was = suppression?.status ?? 'fail';
  const line = `${finding.checkId} (${finding.severity} ${was}${source}${until}): ${suppression?.reason ?? ''}`;
  return [
    ...painted(
      hangingLines('  suppressed  ', terminalSafe(line), INDENT_WIDTH, context.width),
      DIM,
      context.color
    ),
    ...followOnLines(finding, context),
  ];
}

/** A notice: something to know, not a failure (it never counts); its remediation is advice. */
function noticeLines(finding: Finding, context: BlockContext): string[] {
  const { color } = context;
  return [
    ...hangingLines(
      `  ${paint('notice', NOTICE_COLOR, color)}  `,
      terminalSafe(`${finding.checkId}: ${finding.message}`),
      INDENT_WIDTH,
      context.width
    ),
    ...labelled('advice:', finding.remediation, context),
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
  const lead = `  ${paint(label, SEVERITY_COLORS[errors.severity], color)} ${paint('error', ERROR_COLOR, color)} ${collapsedLabel(errors).padEnd(idWidth)}  `;
  return [
    ...hangingLines(lead, terminalSafe(errors.message), INDENT_WIDTH, context.width),
    ...labelled('checks:', errors.findings.map((f) => f.checkId).join(', '), context),
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

/**
 * The counting rule of every format: the JSON report's `summary`. Each status counts every finding
 * that has it, follow-ons included (`byStatus`); failures by severity count root failures only
 * (`failuresBySeverity`). The table prints these numbers and says how many of each are follow-ons.
 */
interface SummaryCounts {
  readonly byStatus: Readonly<Record<FindingStatus, number>>;
  readonly failuresBySeverity: Readonly<Record<Severity, number>>;
  /** Of `byStatus`, the follow-ons (findings with `causedBy`). */
  readonly followOns: Readonly<Record<FindingStatus, number>>;
}

function summaryCounts(report: ScanReport): SummaryCounts {
  const followOns = Object.fromEntries(FINDING_STATUSES.map((status) => [status, 0])) as Record<
    FindingStatus,
    number
  >;
  for (const finding of report.findings) {
    if (finding.causedBy !== undefined) followOns[finding.status] += 1;
  }
  const { byStatus, failuresBySeverity } = report.summary;
  return { byStatus, failuresBySeverity, followOns };
}

function statusCount(counts: SummaryCounts, status: FindingStatus, detail: string[] = []): string {
  const followOns = counts.followOns[status];
  const details = [...detail, ...(followOns > 0 ? [`${followOns} follow-on`] : [])];
  return `${counts.byStatus[status]} ${status}${details.length === 0 ? '' : ` (${details.join('; ')})`}`;
}

/** The summary of the whole scan (`report` unfiltered), whatever the filter shows. */
function summaryLine(report: ScanReport, context: BlockContext, shown: number): string[] {
  const { nodeClasses, notRun, inputErrors } = report.summary;
  const counts = summaryCounts(report);
  const failing = SEVERITIES.filter((severity) => counts.failuresBySeverity[severity] > 0);
  const bySeverity = failing.map(
    (severity) => `${counts.failuresBySeverity[severity]} ${severity}`
  );
  const optional = (status: FindingStatus, word: string) =>
    counts.byStatus[status] > 0 ? [plural(counts.byStatus[status], word)] : [];
  const tally = [
    statusCount(counts, 'fail', bySeverity.length === 0 ? [] : [bySeverity.join(', ')]),
    statusCount(counts, 'error'),
    ...optional('suppressed', 'suppressed'),
    ...optional('notice', 'notice'),
    statusCount(counts, 'pass'),
    statusCount(counts, 'not-applicable'),
  ];
  const parts = [tally.join(', '), `${plural(nodeClasses, 'NodeClass', 'NodeClasses')} scanned`];
  if (report.resolved !== undefined) {
    const open = report.findings.filter((f) => f.causedBy === undefined && isOpen(f));
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
  if (context.filter !== undefined) {
    parts.push(
      `${shown} of ${plural(report.findings.length, 'finding')} shown (${describeFilter(context.filter)})`
    );
  }
  return hangingLines('Summary: ', parts.join(' · '), 'Summary: '.length, context.width);
}

interface BlockContext {
  readonly color: boolean;
  readonly sources: SourceIndex;
  readonly width: number | undefined;
  /** The filter, when one hides findings. */
  readonly filter: DisplayFilter | undefined;
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
    const longest = Math.max(
      0,
      ...failed.map((f) => f.checkId.length),
      ...errors.map((e) => ('findings' in e ? collapsedLabel(e).length : e.checkId.length))
    );
    // Messages in a column, unless the column would leave them too little room.
    const idWidth =
      context.width === undefined || context.width - (INDENT_WIDTH + longest + 2) >= MIN_TEXT
        ? longest
        : 0;
    const lines = [
      ...failed.flatMap((f) => findingLines(f, idWidth, context)),
      ...errors.flatMap((e) =>
        'findings' in e ? collapsedLines(e, idWidth, context) : findingLines(e, idWidth, context)
      ),
      ...suppressed.flatMap((f) => suppressedLines(f, context)),
      ...notices.flatMap((f) => noticeLines(f, context)),
      ...(context.passes ? passSummary(group) : []),
    ];
    // Quiet: a resource with nothing but passes has nothing to show.
    if (lines.length === 0) continue;
    blocks.push(
      [...heading(first.resource, context.sources, first, context.width), ...lines].join('\n')
    );
  }
  return blocks;
}

function resolvedLines(finding: ResolvedFinding, context: BlockContext): string[] {
  const label = finding.severity.toUpperCase().padEnd(8);
  return hangingLines(
    `  ${paint(label, SEVERITY_COLORS[finding.severity], context.color)} `,
    terminalSafe(
      `${finding.checkId}  ${resourceHeading(finding.resource)}${
        finding.resource.origin ? ` (${originLabel(finding.resource.origin)})` : ''
      }: ${finding.message}`
    ),
    INDENT_WIDTH,
    context.width
  );
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
        ...resolved.flatMap((f) => resolvedLines(f, context)),
      ].join('\n')
    );
  }
  return sections;
}

/**
 * Human output: findings grouped by cluster and resource, follow-ons under their root, passes as
 * counts, one summary line. With a baseline, grouped first by change (new, changed, unchanged).
 * With a width, every line is wrapped to it, continuing under its text (hanging indents).
 */
export function formatTable(report: ScanReport, options: TableOptions): string {
  const filter = isFiltering(options.filter) ? options.filter : undefined;
  const shown = report.findings.filter((finding) => shows(finding, filter));
  const byId = new Map(shown.map((finding) => [finding.id, finding]));
  const followOns = new Map<string, ReportFinding[]>();
  const topLevel: ReportFinding[] = [];
  for (const finding of shown) {
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
    width: options.width,
    filter,
    followOns,
    passes: report.resolved === undefined && options.quiet !== true,
  };
  const resolved = (report.resolved ?? []).filter((finding) => showsResolved(finding, filter));
  const blocks =
    report.resolved === undefined
      ? resourceBlocks(topLevel, context)
      : baselineSections(topLevel, resolved, context);
  if (options.quiet === true) {
    return blocks.length === 0 ? '' : `${blocks.join('\n\n')}\n`;
  }
  if (blocks.length === 0) {
    blocks.push(
      report.summary.nodeClasses === 0
        ? 'No EC2NodeClass found in the given inputs.'
        : filter === undefined
          ? 'No findings.'
          : 'No findings to show.'
    );
  }
  return `${blocks.join('\n\n')}\n\n${summaryLine(report, context, shown.length).join('\n')}\n`;
}
