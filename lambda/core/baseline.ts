// A baseline is an earlier JSON report. Comparing with it tells CI what this change introduced:
// each open finding is new, changed or unchanged (decided by `changeBetween`, as the service's
// lifecycle decides it), and what the baseline had open and this scan no longer has is resolved.
import * as z from 'zod';
import { changeBetween, type MaterialRecord } from './material.js';
import { FINDING_STATUSES, type Finding, SEVERITIES } from './model.js';
import {
  compareFindings,
  type ReportFinding,
  type ResolvedFinding,
  type ScanReport,
} from './report.js';

/**
 * What is read of a baseline report: only what the comparison needs; other fields (and fields a
 * later version adds) are ignored. `materialHash` is absent from reports written before it existed.
 */
export const BaselineSchema = z.looseObject({
  version: z.literal(1),
  findings: z.array(
    z.looseObject({
      id: z.string().min(1),
      checkId: z.string(),
      severity: z.enum(SEVERITIES),
      status: z.enum(FINDING_STATUSES),
      resource: z.looseObject({
        cluster: z.string(),
        kind: z.enum(['EC2NodeClass', 'NodePool', 'Cluster']),
        name: z.string(),
        // Same-named manifest objects: kept so a resolved finding still names its file.
        origin: z
          .looseObject({
            file: z.string(),
            document: z.number().int().nonnegative(),
            item: z.number().int().nonnegative().optional(),
          })
          .optional()
          .catch(undefined),
      }),
      message: z.string(),
      materialHash: z.string().optional(),
    })
  ),
});
export type Baseline = z.infer<typeof BaselineSchema>;
type BaselineFinding = Baseline['findings'][number];

function isOpen(finding: Pick<Finding, 'status'>): boolean {
  return finding.status === 'fail' || finding.status === 'error';
}

function materialRecord(finding: BaselineFinding): MaterialRecord {
  return {
    severity: finding.severity,
    status: finding.status,
    ...(finding.materialHash === undefined ? {} : { materialHash: finding.materialHash }),
  };
}

/** What this scan looked at: a baseline finding outside it is not resolved, only not looked at. */
export interface BaselineScope {
  /** Checks this scan ran (selected and not skipped for a missing input). */
  readonly checkIds: readonly string[];
}

function inScope(finding: BaselineFinding, report: ScanReport, scope: BaselineScope): boolean {
  const { cluster } = finding.resource;
  return (
    scope.checkIds.includes(finding.checkId) &&
    (cluster === '' || report.summary.clusters.includes(cluster))
  );
}

/**
 * The report compared with a baseline: every `fail`/`error` finding gains `change` (a finding the
 * baseline did not have open is `new`, even when it was passing or suppressed there); `resolved`
 * lists the baseline's open findings that this scan looked at and found no longer open (passing,
 * suppressed or gone; not the `fail` an earlier version reported for what is now a notice of the
 * same severity). Passing, notice, not-applicable and suppressed findings get no `change`.
 */
export function compareWithBaseline(
  report: ScanReport,
  baseline: Baseline,
  scope: BaselineScope
): ScanReport {
  const previous = new Map<string, BaselineFinding>();
  for (const finding of baseline.findings) {
    if (isOpen(finding) && !previous.has(finding.id)) previous.set(finding.id, finding);
  }
  const findings: ReportFinding[] = report.findings.map((finding) => {
    if (!isOpen(finding)) return finding;
    const before = previous.get(finding.id);
    const change = changeBetween(before && materialRecord(before), finding);
    return { ...finding, change };
  });
  const stillOpen = new Set(findings.filter(isOpen).map((finding) => finding.id));
  // A baseline taken by a version that reported this notice as a `fail` (same id and severity):
  // it was never a failure, so nothing was fixed. At another severity it was a real failure that
  // is now only a notice (a critical pending AMI after an upgrade): that one is resolved.
  const notices = new Map(
    findings
      .filter((finding) => finding.status === 'notice')
      .map((finding) => [finding.id, finding.severity])
  );
  const wasNotice = (finding: BaselineFinding) =>
    finding.status === 'fail' && notices.get(finding.id) === finding.severity;
  const resolved: ResolvedFinding[] = [...previous.values()]
    .filter(
      (finding) =>
        !stillOpen.has(finding.id) && !wasNotice(finding) && inScope(finding, report, scope)
    )
    .map(({ id, checkId, resource, severity, message }) => ({
      id,
      checkId,
      resource: {
        cluster: resource.cluster,
        kind: resource.kind,
        name: resource.name,
        ...(resource.origin === undefined
          ? {}
          : {
              origin: {
                file: resource.origin.file,
                document: resource.origin.document,
                ...(resource.origin.item === undefined ? {} : { item: resource.origin.item }),
              },
            }),
      },
      severity,
      message,
    }))
    .sort(compareFindings);
  return { ...report, findings, resolved };
}
