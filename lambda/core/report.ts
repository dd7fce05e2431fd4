import type { Evaluation } from './evaluate.js';
import type { ChangeVerdict } from './material.js';
import {
  FINDING_STATUSES,
  type Finding,
  type FindingStatus,
  isAtOrAbove,
  SEVERITIES,
  type Severity,
  severityRank,
} from './model.js';

export interface ReportSummary {
  readonly total: number;
  readonly byStatus: Readonly<Record<FindingStatus, number>>;
  /** Failing findings per severity; follow-ons (`causedBy`) are counted through their root only. */
  readonly failuresBySeverity: Readonly<Record<Severity, number>>;
  readonly nodeClasses: number;
  readonly clusters: readonly string[];
  readonly notRun: Evaluation['notRun'];
  /** Problems reading inputs (unreadable files, unreachable sources), each naming what and where. */
  readonly inputErrors: readonly InputError[];
}

export interface InputError {
  readonly source: string;
  readonly message: string;
}

/** A finding as reported: with a baseline, `fail`/`error` findings also say how they compare. */
export interface ReportFinding extends Finding {
  readonly change?: ChangeVerdict;
}

/** A finding open (`fail`/`error`) in the baseline and no longer open in this scan. */
export interface ResolvedFinding {
  readonly id: string;
  readonly checkId: string;
  readonly resource: Finding['resource'];
  readonly severity: Severity;
  readonly message: string;
}

/** The JSON report contract. `resolved` (and each open finding's `change`) only with a baseline. */
export interface ScanReport {
  readonly version: 1;
  readonly scannedAt: string;
  readonly findings: readonly ReportFinding[];
  readonly summary: ReportSummary;
  readonly resolved?: readonly ResolvedFinding[];
}

function countBy<K extends string>(keys: readonly K[], values: readonly K[]): Record<K, number> {
  const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
  for (const value of values) counts[value] += 1;
  return counts;
}

/**
 * `a.localeCompare(b)`: the same default collator (what localeCompare without arguments uses),
 * made once, and no collation at all for equal texts (most comparisons of a large scan's sort).
 */
const collator = new Intl.Collator();
const localeOrder = (a: string, b: string) => (a === b ? 0 : collator.compare(a, b));

/** Most severe first, then by cluster, resource, check: a stable, readable order. */
export function compareFindings(
  a: Pick<Finding, 'severity' | 'resource' | 'checkId' | 'id'>,
  b: Pick<Finding, 'severity' | 'resource' | 'checkId' | 'id'>
): number {
  return (
    severityRank(a.severity) - severityRank(b.severity) ||
    localeOrder(a.resource.cluster, b.resource.cluster) ||
    localeOrder(a.resource.name, b.resource.name) ||
    localeOrder(a.checkId, b.checkId) ||
    localeOrder(a.id, b.id)
  );
}

export function buildReport(input: {
  readonly evaluation: Evaluation;
  readonly now: Date;
  readonly nodeClasses: number;
  readonly clusters: readonly string[];
  readonly inputErrors?: readonly InputError[];
}): ScanReport {
  const findings = [...input.evaluation.findings].sort(compareFindings);
  return {
    version: 1,
    scannedAt: input.now.toISOString(),
    findings,
    summary: {
      total: findings.length,
      byStatus: countBy(
        FINDING_STATUSES,
        findings.map((finding) => finding.status)
      ),
      failuresBySeverity: countBy(
        SEVERITIES,
        findings
          .filter((f) => f.status === 'fail' && f.causedBy === undefined)
          .map((f) => f.severity)
      ),
      nodeClasses: input.nodeClasses,
      clusters: input.clusters,
      notRun: input.evaluation.notRun,
      inputErrors: input.inputErrors ?? [],
    },
  };
}

/**
 * Whether a finding can fail a CI gate on its own: `fail`, or `error` (a check that could not look
 * is not a pass). Notices inform and never count, whatever their severity; suppressed findings never count; a follow-on counts through its root only; with a
 * baseline, what the baseline already had (`unchanged`) was accepted when the baseline was taken.
 */
function countsForGate(finding: ReportFinding): boolean {
  return (
    (finding.status === 'fail' || finding.status === 'error') &&
    finding.causedBy === undefined &&
    finding.change !== 'unchanged'
  );
}

/** True when the report should fail a CI gate: a finding that counts at or above the threshold. */
export function breachesThreshold(report: ScanReport, threshold: Severity | 'none'): boolean {
  if (threshold === 'none') return false;
  return report.findings.some(
    (finding) => countsForGate(finding) && isAtOrAbove(finding.severity, threshold)
  );
}
