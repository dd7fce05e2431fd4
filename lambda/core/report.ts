import type { Evaluation } from './evaluate.js';
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
  /** Failing findings per severity. */
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

/** The JSON report contract (ARCHITECTURE.md). */
export interface ScanReport {
  readonly version: 1;
  readonly scannedAt: string;
  readonly findings: readonly Finding[];
  readonly summary: ReportSummary;
}

function countBy<K extends string>(keys: readonly K[], values: readonly K[]): Record<K, number> {
  const counts = Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>;
  for (const value of values) counts[value] += 1;
  return counts;
}

/** Most severe first, then by cluster, resource, check: a stable, readable order. */
export function compareFindings(a: Finding, b: Finding): number {
  return (
    severityRank(a.severity) - severityRank(b.severity) ||
    a.resource.cluster.localeCompare(b.resource.cluster) ||
    a.resource.name.localeCompare(b.resource.name) ||
    a.checkId.localeCompare(b.checkId) ||
    a.id.localeCompare(b.id)
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
        findings.filter((f) => f.status === 'fail').map((f) => f.severity)
      ),
      nodeClasses: input.nodeClasses,
      clusters: input.clusters,
      notRun: input.evaluation.notRun,
      inputErrors: input.inputErrors ?? [],
    },
  };
}

/**
 * True when the report should fail a CI gate: a failing finding at or above the threshold, or an
 * `error` at or above it (a check that could not look is not a pass).
 */
export function breachesThreshold(report: ScanReport, threshold: Severity | 'none'): boolean {
  if (threshold === 'none') return false;
  return report.findings.some(
    (finding) =>
      (finding.status === 'fail' || finding.status === 'error') &&
      isAtOrAbove(finding.severity, threshold)
  );
}
