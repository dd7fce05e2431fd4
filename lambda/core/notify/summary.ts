// One message for many changes of one cluster scan: the first scan of a cluster, or more changes
// than the batch threshold. It replaces the per-change messages (the digest is separate), so a
// first scan with 31 findings is one email and one Slack post, each finding listed with its fix
// and its follow-on findings under it.
import { CHANGE_KINDS, type ChangeKind, type LifecycleChange } from '../lifecycle.js';
import {
  type ResourceRef,
  SEVERITIES,
  type Severity,
  type Suppression,
  severityRank,
} from '../model.js';
import { chatbotNotification } from './chatbot.js';
import {
  type AlertLocation,
  changeEmoji,
  checkTitle,
  clusterLabelAt,
  type FollowOnSummary,
  followOnLines,
  followOnSummaries,
  headline,
  messageAttributes,
  type OutgoingMessage,
  remediationLines,
  remediationText,
  sanitizeLine,
  sanitizeMultiline,
  structuredMessageBytes,
  subjectLocation,
  suppressionLines,
  whereLine,
} from './message.js';
import { remediationParts } from './remediation.js';
import { fittingSubject } from './sanitize.js';

/** Changes listed in full; beyond it (or the size limit) they are counted, not listed. */
const SUMMARY_MAX_ITEMS = 200;
/**
 * Smaller than one SNS message may be: a summary is stored (once, whatever it covers) until it is
 * published, and a longer email is not read anyway.
 */
const MAX_SUMMARY_BYTES = 128 * 1024;
const CHAT_ITEMS = 25;

export interface SummaryInput {
  /** The cluster's name (shown as `name@region` outside the location's home region). */
  readonly cluster: string;
  /** The claiming scan's sequence: makes the message id unique per attempt. */
  readonly scanSeq: number;
  readonly location: AlertLocation;
  /** The changes, in the lifecycle's order (new first, most severe first). */
  readonly changes: readonly LifecycleChange[];
  /** The cluster had no stored state (its first scan, or its first findings): all are new. */
  readonly firstScan: boolean;
}

export interface SummaryItem {
  readonly change: ChangeKind;
  readonly findingId: string;
  readonly checkId: string;
  readonly title: string;
  readonly severity: Severity;
  readonly status: string;
  readonly resource: ResourceRef;
  readonly message: string;
  readonly remediation?: string;
  readonly followOns?: readonly FollowOnSummary[];
  /** On a `suppressed` change: who accepted the finding, why, and until when. */
  readonly suppression?: Suppression;
}

export interface SummaryBody {
  readonly version: 1;
  readonly source: 'nodeclass-scanner';
  readonly change: 'summary';
  readonly cluster: string;
  readonly account?: string;
  readonly region?: string;
  readonly firstScan: boolean;
  readonly counts: Readonly<Record<ChangeKind, number>>;
  readonly bySeverity: Readonly<Record<Severity, number>>;
  readonly changes: readonly SummaryItem[];
  /** Changes notified by this message but not listed (size). */
  readonly omitted: number;
  readonly text: string;
}

/** `cluster` is the cluster's label (`clusterLabelAt`): same-named clusters get their own ids. */
export function summaryMessageId(cluster: string, scanSeq: number): string {
  return `summary-${scanSeq}-${cluster}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80);
}

function highestSeverity(changes: readonly LifecycleChange[]): Severity {
  let best: Severity = 'info';
  for (const change of changes) {
    if (severityRank(change.next.severity) < severityRank(best)) best = change.next.severity;
  }
  return best;
}

function countBy<K extends string>(keys: readonly K[], of: (key: K) => number): Record<K, number> {
  return Object.fromEntries(keys.map((key) => [key, of(key)])) as Record<K, number>;
}

function nonZero(counts: Readonly<Record<string, number>>, keys: readonly string[]): string {
  return keys
    .filter((key) => (counts[key] ?? 0) > 0)
    .map((key) => `${counts[key]} ${key}`)
    .join(', ');
}

/** Renders the summary, dropping detail and then items until it fits `maxBytes`. */
export function renderSummary(input: SummaryInput, maxBytes = MAX_SUMMARY_BYTES): OutgoingMessage {
  let limit = Math.min(SUMMARY_MAX_ITEMS, input.changes.length);
  let detail = true;
  for (;;) {
    const message = renderSummaryWith(input, limit, detail);
    if (structuredMessageBytes(message.bodies) <= maxBytes || limit === 0) return message;
    if (detail) detail = false;
    else limit = Math.floor(limit / 2);
  }
}

function renderSummaryWith(input: SummaryInput, limit: number, detail: boolean): OutgoingMessage {
  const { changes, location } = input;
  const cluster = sanitizeLine(input.cluster, 100);
  // What people read: `prod`, or `prod@eu-west-1` outside the home region.
  const label = sanitizeLine(clusterLabelAt(input.cluster, location), 130);
  const messageId = summaryMessageId(clusterLabelAt(input.cluster, location), input.scanSeq);
  const counts = countBy(CHANGE_KINDS, (kind) => changes.filter((c) => c.kind === kind).length);
  const bySeverity = countBy(
    SEVERITIES,
    (severity) => changes.filter((c) => c.next.severity === severity).length
  );
  const where = whereLine(input.cluster, location);
  const severities = nonZero(bySeverity, SEVERITIES);
  const title = input.firstScan
    ? `First findings on ${label}: ${changes.length} open (${severities})`
    : `${changes.length} changes on ${label}: ${nonZero(counts, CHANGE_KINDS)}`;
  const listed = changes.slice(0, limit);
  const omitted = changes.length - listed.length;

  const lines = [
    title,
    ...(where === '' ? [] : [`Where: ${where}`]),
    `By severity: ${SEVERITIES.map((severity) => `${bySeverity[severity]} ${severity}`).join(', ')}`,
  ];
  const items: SummaryItem[] = [];
  for (const change of listed) {
    const finding = change.kind === 'resolved' ? undefined : change.finding;
    const message =
      finding?.message ??
      (change.kind === 'resolved'
        ? `No longer failing: ${change.next.message}`
        : change.next.message);
    const parts = finding === undefined ? [] : remediationParts(finding.remediation);
    const followOns = change.kind === 'resolved' ? [] : (change.followOns ?? []);
    const suppression = change.kind === 'suppressed' ? finding?.suppression : undefined;
    // Who suppressed it and why, before what it reported.
    const suppressedBy =
      finding === undefined || suppression === undefined
        ? []
        : suppressionLines(finding).slice(0, 1);
    lines.push(
      '',
      headline(change.kind, change.next, label),
      ...suppressedBy,
      sanitizeMultiline(message, 1_000)
    );
    if (parts.length > 0) {
      lines.push(
        ...(detail
          ? remediationLines(parts)
          : remediationLines(parts.filter((part) => 'text' in part)))
      );
    }
    lines.push(...followOnLines(followOns));
    items.push({
      change: change.kind,
      findingId: change.next.id,
      checkId: change.next.checkId,
      title: checkTitle(change.next.checkId),
      severity: change.next.severity,
      status: finding?.status ?? (change.kind === 'resolved' ? 'pass' : change.next.findingStatus),
      resource: {
        cluster: sanitizeLine(change.next.resource.cluster, 100),
        kind: change.next.resource.kind,
        name: sanitizeLine(change.next.resource.name, 253),
      },
      message: sanitizeMultiline(message, 1_000),
      ...(detail && finding !== undefined && finding.remediation !== ''
        ? { remediation: remediationText(parts) }
        : {}),
      ...(followOns.length > 0 ? { followOns: followOnSummaries(followOns) } : {}),
      ...(suppression === undefined
        ? {}
        : {
            suppression: {
              reason: sanitizeMultiline(suppression.reason, 1_000),
              source: suppression.source,
              status: suppression.status,
              ...(suppression.expires === undefined
                ? {}
                : { expires: sanitizeLine(suppression.expires, 40) }),
            },
          }),
    });
  }
  if (omitted > 0) lines.push('', `… and ${omitted} more (not listed: the message is too large)`);
  lines.push(
    '',
    'Finding ids and evidence are in the JSON message; nodeclass-scan shows the details.'
  );
  const text = lines.join('\n');

  const body: SummaryBody = {
    version: 1,
    source: 'nodeclass-scanner',
    change: 'summary',
    cluster,
    ...(location.account ? { account: sanitizeLine(location.account, 20) } : {}),
    ...(location.region ? { region: sanitizeLine(location.region, 30) } : {}),
    firstScan: input.firstScan,
    counts,
    bySeverity,
    changes: items,
    omitted,
    text,
  };
  const emoji = changes.some((change) => change.kind === 'new' || change.kind === 'changed')
    ? changeEmoji.new
    : changeEmoji.resolved;
  const chatListed = listed.slice(0, CHAT_ITEMS);
  const chatbot = chatbotNotification({
    id: messageId,
    eventType: 'summary',
    title: `${emoji} ${title}`,
    description: [
      ...(where === '' ? [] : [`Where: ${where}`]),
      chatListed
        .map((change) => {
          const followOns = change.kind === 'resolved' ? 0 : (change.followOns?.length ?? 0);
          const more = followOns > 0 ? ` (+${followOns} follow-on)` : '';
          return `• ${headline(change.kind, change.next, label)}${more}`;
        })
        .join('\n'),
      ...(changes.length > chatListed.length
        ? [`… and ${changes.length - chatListed.length} more`]
        : []),
      'Fixes and IAM statements: in the email, in the JSON message, or from nodeclass-scan.',
    ],
    keywords: [
      'summary',
      ...(cluster ? [cluster] : []),
      ...(location.account ? [location.account] : []),
      ...(location.region ? [location.region] : []),
    ],
    additionalContext: {
      cluster,
      ...(location.account ? { account: location.account } : {}),
      ...(location.region ? { region: location.region } : {}),
    },
  });
  const place = `${label}${subjectLocation(location)}`;
  const tag = '[nodeclass-scanner]';
  const subjects = input.firstScan
    ? [
        `${tag} First findings on ${place}: ${severities}`,
        `${tag} First findings on ${place}: ${changes.length} open`,
        `${tag} First findings on ${label}: ${changes.length} open`,
      ]
    : [
        `${tag} ${changes.length} changes on ${place}: ${nonZero(counts, CHANGE_KINDS)}`,
        `${tag} ${changes.length} changes on ${place}`,
        `${tag} ${changes.length} changes on ${label}`,
      ];
  return {
    id: messageId,
    subject: fittingSubject(subjects),
    attributes: messageAttributes('summary', {
      severity: highestSeverity(changes),
      cluster: input.cluster,
      location,
    }),
    bodies: { default: JSON.stringify(body), email: text, https: JSON.stringify(chatbot) },
    covers: changes.map((change) => `${change.kind}:${change.next.id}`),
  };
}
