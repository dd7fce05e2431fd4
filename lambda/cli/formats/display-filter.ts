// `--severity` and `--status`: which findings a report shows. They filter what is printed, in every
// format; the summary and `--fail-on` still count the whole scan.
import type { FindingStatus, Severity } from '../../core/model.js';
import type { ReportFinding, ResolvedFinding, ScanReport } from '../../core/report.js';

export interface DisplayFilter {
  /** Show only findings of these severities (absent: all). */
  readonly severities?: readonly Severity[];
  /** Show only findings of these statuses (absent: all). */
  readonly statuses?: readonly FindingStatus[];
}

export function isFiltering(filter: DisplayFilter | undefined): filter is DisplayFilter {
  return filter?.severities !== undefined || filter?.statuses !== undefined;
}

export function shows(
  finding: Pick<ReportFinding, 'severity' | 'status'>,
  filter: DisplayFilter | undefined
): boolean {
  return (
    (filter?.severities === undefined || filter.severities.includes(finding.severity)) &&
    (filter?.statuses === undefined || filter.statuses.includes(finding.status))
  );
}

/** A resolved finding was open: shown when its severity is, and when fail or error findings are. */
export function showsResolved(
  finding: ResolvedFinding,
  filter: DisplayFilter | undefined
): boolean {
  return (
    (filter?.severities === undefined || filter.severities.includes(finding.severity)) &&
    (filter?.statuses === undefined ||
      filter.statuses.includes('fail') ||
      filter.statuses.includes('error'))
  );
}

/** The report with only the findings the filter shows; its summary still counts the whole scan. */
export function filterReport(report: ScanReport, filter: DisplayFilter | undefined): ScanReport {
  if (!isFiltering(filter)) return report;
  return {
    ...report,
    findings: report.findings.filter((finding) => shows(finding, filter)),
    ...(report.resolved === undefined
      ? {}
      : { resolved: report.resolved.filter((finding) => showsResolved(finding, filter)) }),
  };
}

/** `severity critical,high; status fail`: what the filter keeps, for the table's summary line. */
export function describeFilter(filter: DisplayFilter): string {
  return [
    ...(filter.severities === undefined ? [] : [`severity ${filter.severities.join(',')}`]),
    ...(filter.statuses === undefined ? [] : [`status ${filter.statuses.join(',')}`]),
  ].join('; ');
}
