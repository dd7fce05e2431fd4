// Opt-in Security Hub delivery for the service, in the lifecycle's exactly-once discipline: each
// change goes to Security Hub BEFORE it is claimed. Imports are upserts keyed by the ASFF Id, so a
// redelivered or duplicate import changes nothing; what must not happen is a change claimed (and
// so never diffed again) that Security Hub never got. Hence:
// - a change Security Hub could not take for a transient reason is held back: it is not claimed
//   (nor silently closed) this scan, so the next scan diffs it again and delivers it to both;
// - a change Security Hub refuses for good (not enabled, access denied, invalid record) is not
//   held: alerts never wait on a sink that cannot take them; the failure is logged.
// New, changed and reminder changes import the open finding (reminders keep it fresh: Security
// Hub deletes findings not updated for 90 days). Resolved findings and silently closed ones
// (follow-ons, notices) are imported ARCHIVED, then marked `Workflow.Status: RESOLVED` with
// BatchUpdateFindings; Security Hub sets the workflow back to NEW if the finding reopens. A finding
// that became suppressed is imported ARCHIVED (WARNING) and marked `SUPPRESSED` with a note naming
// the annotation or rule and its reason. Security Hub never resets SUPPRESSED by itself, so a
// finding that fails again after it was closed (`new` with a stored state) is marked NEW.
import {
  type AsffCheck,
  type AsffFinding,
  type AsffSubject,
  type AsffTarget,
  type SecurityHubFailure,
  type SecurityHubPort,
  suppressionNote,
  toAsffFinding,
  type WorkflowUpdate,
} from '../core/asff.js';
import type { FindingState, LifecycleChange, ScanStamp, SilentClose } from '../core/lifecycle.js';
import type { AppLogger } from '../core/ports/service.js';

export interface SecurityHubSink {
  readonly port: SecurityHubPort;
  /** The account, partition and home region: findings are imported in the service's region. */
  readonly target: AsffTarget;
  /** The check catalog's metadata by check id (title, remediation, references). */
  readonly checks: ReadonlyMap<string, AsffCheck>;
}

export interface SecurityHubDelivery {
  /** The cluster's label (for the logs). */
  readonly cluster: string;
  /** The cluster's region (resources and Ids); the home region when undefined. */
  readonly region?: string;
  readonly stamp: ScanStamp;
  readonly changes: readonly LifecycleChange[];
  readonly silenced: readonly SilentClose[];
}

export interface SecurityHubOutcome {
  /** Finding ids (the scanner's) to leave unclaimed this scan: Security Hub should get them first. */
  readonly held: ReadonlySet<string>;
  readonly imported: number;
  readonly resolved: number;
  /** Failures Security Hub will keep refusing (not held back). */
  readonly refused: readonly SecurityHubFailure[];
}

const NOTHING: SecurityHubOutcome = { held: new Set(), imported: 0, resolved: 0, refused: [] };

/** A stored state as the subject of a record: what a resolved finding still is. */
function subjectOfState(state: FindingState): AsffSubject {
  return {
    id: state.id,
    checkId: state.checkId,
    severity: state.severity,
    status: state.findingStatus,
    resource: state.resource,
    message: state.message,
  };
}

interface Planned {
  readonly findingId: string;
  readonly record: AsffFinding;
  /**
   * The workflow set once imported: RESOLVED (fixed, or closed silently), SUPPRESSED with a note
   * (suppressed), NEW (failing again after it was closed).
   */
  readonly workflow?: { readonly status: 'RESOLVED' } | Omit<WorkflowUpdate, 'Id' | 'ProductArn'>;
}

function plan(sink: SecurityHubSink, delivery: SecurityHubDelivery): Planned[] {
  const target: AsffTarget = {
    ...sink.target,
    ...(delivery.region === undefined ? {} : { resourceRegion: delivery.region }),
  };
  const record = (
    subject: AsffSubject,
    state: FindingState,
    compliance?: Parameters<typeof toAsffFinding>[1]['compliance']
  ): AsffFinding => {
    const check = sink.checks.get(subject.checkId);
    return toAsffFinding(subject, {
      target,
      times: {
        firstObservedAt: state.firstSeen,
        lastObservedAt: state.lastSeen,
        // The scan's start: a later scan's record is later.
        updatedAt: delivery.stamp.at,
      },
      ...(check ? { check } : {}),
      ...(compliance ? { compliance } : {}),
    });
  };
  const planned: Planned[] = delivery.changes.map((change) => {
    if (change.kind === 'resolved') {
      const previous = change.previous ?? change.next;
      return {
        findingId: change.next.id,
        record: record(subjectOfState(previous), change.next, {
          status: 'PASSED',
          recordState: 'ARCHIVED',
        }),
        workflow: { status: 'RESOLVED' },
      };
    }
    const subject = change.finding ?? subjectOfState(change.next);
    // Suppressed: WARNING, ARCHIVED (the status mapping), and the suppression as a note.
    const workflow =
      change.kind === 'suppressed'
        ? { status: 'SUPPRESSED' as const, note: suppressionNote(subject) }
        : change.kind === 'new' && change.previous !== undefined
          ? { status: 'NEW' as const }
          : undefined;
    return {
      findingId: change.next.id,
      record: record(subject, change.next),
      ...(workflow === undefined ? {} : { workflow }),
    };
  });
  for (const close of delivery.silenced) {
    // A notice → PASSED (INFORMATIONAL), a follow-on → its own status; archived either way.
    const base = record(close.finding, close.next);
    planned.push({
      findingId: close.next.id,
      record: { ...base, RecordState: 'ARCHIVED' },
      workflow: { status: 'RESOLVED' },
    });
  }
  return planned;
}

/**
 * Delivers the changes of one cluster scan to Security Hub before they are claimed. Without a
 * sink (the `securityHub` setting off) it does nothing.
 */
export async function deliverToSecurityHub(
  sink: SecurityHubSink | undefined,
  delivery: SecurityHubDelivery,
  logger: AppLogger
): Promise<SecurityHubOutcome> {
  if (sink === undefined) return NOTHING;
  const planned = plan(sink, delivery);
  if (planned.length === 0) return NOTHING;
  const byAsffId = new Map(planned.map((item) => [item.record.Id, item]));
  const importFailures = await sink.port.importFindings(planned.map((item) => item.record));
  const importFailed = new Set(importFailures.map((failure) => failure.id));
  const imported = planned.filter((item) => !importFailed.has(item.record.Id));
  const toResolve = imported.filter((item) => item.workflow?.status === 'RESOLVED');
  const resolveFailures =
    toResolve.length === 0
      ? []
      : await sink.port.markResolved(
          toResolve.map((item) => ({ Id: item.record.Id, ProductArn: item.record.ProductArn }))
        );
  const toUpdate = imported.flatMap((item): WorkflowUpdate[] =>
    item.workflow === undefined || item.workflow.status === 'RESOLVED'
      ? []
      : [{ Id: item.record.Id, ProductArn: item.record.ProductArn, ...item.workflow }]
  );
  const updateFailures = toUpdate.length === 0 ? [] : await sink.port.updateWorkflow(toUpdate);
  const failures = [...importFailures, ...resolveFailures, ...updateFailures];
  const held = new Set(
    failures
      .filter((failure) => failure.kind === 'transient')
      .flatMap((failure) => byAsffId.get(failure.id)?.findingId ?? [])
  );
  const refused = failures.filter((failure) => failure.kind !== 'transient');
  const resolveFailed = new Set(resolveFailures.map((failure) => failure.id));
  const outcome: SecurityHubOutcome = {
    held,
    imported: planned.length - importFailed.size,
    resolved: toResolve.filter((item) => !resolveFailed.has(item.record.Id)).length,
    refused,
  };
  if (held.size > 0) {
    logger.warn('Security Hub did not take some findings: their changes wait for the next scan', {
      cluster: delivery.cluster,
      held: held.size,
      codes: [...new Set(failures.map((failure) => failure.code))],
    });
  }
  if (refused.length > 0) {
    logger.error('Security Hub refused findings', {
      cluster: delivery.cluster,
      refused: refused.slice(0, 10).map(({ id, code, kind }) => ({ id, code, kind })),
      count: refused.length,
    });
  }
  return outcome;
}
