// One structured log line per open finding of a cluster after each scan, and one per finding this
// scan closed: the dashboard's "failing NodeClasses" table (a CloudWatch Logs Insights query) keeps
// the latest `state` of each finding and shows the open ones. Logging the closes is what lets a
// resolved finding leave the table without waiting for it to age out of the time range.
import type { FindingState } from '../core/lifecycle.js';
import { severityRank } from '../core/model.js';
import type { AppLogger } from '../core/ports/service.js';
import { FINDING_STATE_LOG_MESSAGE } from '../shared/telemetry.js';

export interface FindingStateLogScan {
  /**
   * The cluster's label (`clusterLabel`: its name, `name@region` outside the home region): the
   * table groups by it, so same-named clusters of two regions keep their own rows.
   */
  readonly cluster: string;
  /** The cluster's name, account and region (its identity). */
  readonly name?: string;
  readonly account?: string;
  readonly region?: string;
  readonly scanId: string;
  readonly scanSeq: number;
}

/**
 * Logs `before` → `after` of one cluster scan: every finding open after it (`state: open`), and
 * every finding open before it and not after (`state: resolved`).
 */
export function logFindingStates(
  logger: AppLogger,
  scan: FindingStateLogScan,
  before: readonly FindingState[],
  after: readonly FindingState[]
): void {
  const openAfter = new Set(after.filter((state) => state.status === 'open').map((s) => s.id));
  const closed = before.filter((state) => state.status === 'open' && !openAfter.has(state.id));
  const line = (state: FindingState, lineState: 'open' | 'resolved') =>
    logger.info(FINDING_STATE_LOG_MESSAGE, {
      state: lineState,
      cluster: scan.cluster,
      ...(scan.name === undefined ? {} : { clusterName: scan.name }),
      ...(scan.account === undefined ? {} : { account: scan.account }),
      ...(scan.region === undefined ? {} : { region: scan.region }),
      kind: state.resource.kind,
      name: state.resource.name,
      checkId: state.checkId,
      severity: state.severity,
      // Sorts the table most severe first (0 = critical).
      severityRank: severityRank(state.severity),
      findingStatus: state.findingStatus,
      findingId: state.id,
      firstSeen: state.firstSeen,
      scanId: scan.scanId,
      scanSeq: scan.scanSeq,
    });
  for (const state of after) if (state.status === 'open') line(state, 'open');
  for (const state of closed) line(state, 'resolved');
}
