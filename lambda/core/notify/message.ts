// One SNS message per lifecycle change. The message uses SNS `MessageStructure: json`: `default`
// (JSON body with the finding and a `text` rendering, for SQS/Lambda/email-json subscribers),
// `email` (the text rendering) and `https` (the Chatbot custom-notification variant, which is how
// AWS Chatbot subscribes). Message attributes carry the routing keys for subscription filters.
import { findCheck } from '../checks/index.js';
import { clusterLabel } from '../cluster-identity.js';
import type { ChangeKind, FindingState, LifecycleChange } from '../lifecycle.js';
import type { Finding, ResourceRef, Severity, Suppression } from '../model.js';
import { type ChatbotNotification, chatbotNotification } from './chatbot.js';
import type { OutgoingMessage } from './outgoing-message.js';
import {
  pasteableJson,
  type RemediationPart,
  remediationParts,
  remediationProse,
} from './remediation.js';
import {
  EVIDENCE_LIMITS,
  fittingSubject,
  isPolicyLike,
  sanitizeDeep,
  sanitizeText,
  type TextBlock,
  truncateText,
  utf8Length,
} from './sanitize.js';

/** SNS allows 256 KiB per message including attributes; stay clear of it. */
export const MAX_MESSAGE_BYTES = 240 * 1024;
const MAX_MESSAGE_CHARS = 4_000;
const MAX_REMEDIATION_CHARS = 2_000;
const INITIAL_EVIDENCE_CHARS = 60_000;
/** Follow-on findings listed under their root in one message. */
const MAX_FOLLOW_ONS = 20;

export type MessageKind = ChangeKind | 'digest' | 'summary';
export type { OutgoingMessage } from './outgoing-message.js';

/**
 * Where the findings are: the AWS account and region of the cluster (the cluster's name is on each
 * finding). With `homeRegion`, a cluster of another region is shown as `name@region`, so two
 * same-named clusters of two regions never read alike.
 */
export interface AlertLocation {
  readonly account?: string;
  readonly region?: string;
  /** The deployment's home region: its clusters are shown by name alone. */
  readonly homeRegion?: string;
}

/** The cluster as people read it: `prod`, or `prod@eu-west-1` outside the home region. */
export function clusterLabelAt(cluster: string, location: AlertLocation = {}): string {
  return clusterLabel({ name: cluster, region: location.region ?? '' }, location.homeRegion);
}

/** One string naming the finding across accounts and regions (a Slack thread per finding). */
function qualifiedFindingId(id: string, location: AlertLocation = {}): string {
  return [location.account, location.region, id].filter((part) => part).join('/');
}

/** The JSON body contract (`default`). */
export interface FindingMessageBody {
  readonly version: 1;
  readonly source: 'nodeclass-scanner';
  readonly change: ChangeKind;
  readonly account?: string;
  readonly region?: string;
  readonly finding: {
    readonly id: string;
    readonly checkId: string;
    readonly title: string;
    readonly severity: Severity;
    readonly status: Finding['status'];
    readonly resource: ResourceRef;
    readonly message: string;
    readonly remediation: string;
    readonly evidence: unknown;
    /** On a `suppressed` change: who accepted the finding (annotation or rule), why, until when. */
    readonly suppression?: Suppression;
  };
  /** Findings that could not be evaluated because of this one: shown here, never alerted. */
  readonly followOns?: readonly FollowOnSummary[];
  readonly previous?: { readonly severity: Severity; readonly message: string };
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly resolvedAt?: string;
  readonly evidenceTruncated: boolean;
  readonly text: string;
}

export interface FollowOnSummary {
  readonly id: string;
  readonly checkId: string;
  readonly severity: Severity;
  readonly status: Finding['status'];
  readonly message: string;
}

const CHANGE_LABEL: Readonly<Record<ChangeKind, string>> = {
  new: 'NEW',
  changed: 'CHANGED',
  resolved: 'RESOLVED',
  suppressed: 'SUPPRESSED',
  reminder: 'STILL FAILING',
};

function oneLine(value: string, maxLength: number, markdown = false): string {
  return sanitizeText(value, { maxLength, markdown });
}

function manyLines(value: string, maxLength: number, markdown = false): string {
  return sanitizeText(value, { maxLength, multiline: true, markdown });
}

export function checkTitle(checkId: string): string {
  return findCheck(checkId)?.title ?? checkId;
}

/** `cluster/kind/name`; `cluster` is `label` when given (`clusterLabelAt`). */
export function resourceLabel(resource: ResourceRef, label?: string): string {
  const cluster = resource.cluster === '' ? '' : (label ?? resource.cluster);
  const where = cluster === '' ? '' : `${oneLine(cluster, 130)}/`;
  return `${where}${resource.kind}/${oneLine(resource.name, 253)}`;
}

/**
 * The one-line headline, never truncated away (only user-controlled parts are capped). `label`
 * names the cluster as people read it (`clusterLabelAt`).
 */
export function headline(kind: ChangeKind, state: FindingState, label?: string): string {
  return `${CHANGE_LABEL[kind]} ${state.severity.toUpperCase()} ${state.checkId} on ${resourceLabel(state.resource, label)}`;
}

/** `cluster prod, account 111122223333, region eu-west-1` (the parts that are known). */
export function whereLine(cluster: string, location: AlertLocation = {}): string {
  return [
    ...(cluster === '' ? [] : [`cluster ${oneLine(cluster, 100)}`]),
    ...(location.account ? [`account ${oneLine(location.account, 20)}`] : []),
    ...(location.region ? [`region ${oneLine(location.region, 30)}`] : []),
  ].join(', ');
}

/** `in 111122223333 eu-west-1` for subjects, empty when neither is known. */
export function subjectLocation(location: AlertLocation = {}): string {
  const parts = [location.account, location.region].filter((part) => part);
  return parts.length === 0 ? '' : ` in ${parts.join(' ')}`;
}

const ANNOTATION_PREFIX = 'ignore-check.nodeclass-scanner/';

/**
 * What a `suppressed` change says first: who accepted the finding (the annotation on the object,
 * or an ignore rule), the reason given, until when, and how to undo it. Empty without a suppression.
 */
export function suppressionLines(
  finding: Pick<Finding, 'checkId' | 'resource' | 'suppression'>
): string[] {
  const { suppression } = finding;
  if (suppression === undefined) return [];
  const until =
    suppression.expires === undefined ? '' : `, until ${oneLine(suppression.expires, 40)}`;
  const by =
    suppression.source === 'annotation'
      ? `the annotation ${ANNOTATION_PREFIX}${finding.checkId} on ${finding.resource.kind}/${oneLine(finding.resource.name, 253)}`
      : 'an ignore rule of the configuration';
  return [
    `Suppressed by ${by}${until}: "${oneLine(suppression.reason, 500)}"`,
    `It no longer alerts; if it still fails once the suppression is removed or expires, it alerts as new.`,
    ...(suppression.source === 'annotation'
      ? [
          'Not agreed? Remove the annotation, or refuse annotation suppressions with the annotationSuppression setting.',
        ]
      : []),
  ];
}

/** The suppression as the JSON body carries it (user text sanitised). */
function suppressionBody(suppression: Suppression): Suppression {
  return {
    reason: manyLines(suppression.reason, 1_000),
    source: suppression.source,
    status: suppression.status,
    ...(suppression.expires === undefined ? {} : { expires: oneLine(suppression.expires, 40) }),
  };
}

/** The finding this change is about; a resolved finding whose resource is gone is rebuilt from state. */
function findingOf(change: LifecycleChange): Finding {
  if (change.finding !== undefined && change.kind !== 'resolved') return change.finding;
  const state = change.previous ?? change.next;
  const remediation = change.finding?.remediation ?? findCheck(state.checkId)?.remediation ?? '';
  return {
    id: state.id,
    checkId: state.checkId,
    severity: state.severity,
    status: change.finding?.status ?? 'pass',
    resource: state.resource,
    message: change.finding?.message ?? `No longer failing: ${state.message}`,
    remediation,
    evidence: change.finding?.evidence ?? {},
    materialHash: change.finding?.materialHash ?? state.materialHash ?? '',
  };
}

/**
 * Over budget, the evidence becomes a cut preview; IAM policies in it are kept whole beside the
 * preview while they fit (a policy is there to be pasted: a cut one is useless).
 */
function boundClean(clean: unknown, maxChars: number): { value: unknown; truncated: boolean } {
  const json = JSON.stringify(clean ?? {});
  if (json.length <= maxChars) return { value: clean ?? {}, truncated: false };
  const kept: Record<string, unknown> = {};
  let room = maxChars;
  if (clean !== null && typeof clean === 'object' && !Array.isArray(clean)) {
    for (const [key, value] of Object.entries(clean as Record<string, unknown>)) {
      if (!isPolicyLike(value)) continue;
      const size = JSON.stringify(value).length + key.length + 4;
      if (size > room) continue;
      kept[key] = value;
      room -= size;
    }
  }
  return {
    value: { truncated: true, ...kept, preview: truncateText(json, Math.max(0, room)) },
    truncated: true,
  };
}

/** The remediation as one string for the JSON body: prose capped, embedded JSON whole. */
export function remediationText(parts: readonly RemediationPart[]): string {
  return parts
    .map((part) =>
      'text' in part ? manyLines(part.text, MAX_REMEDIATION_CHARS) : JSON.stringify(part.json)
    )
    .join(' ');
}

/** Email lines of a remediation: prose, then each JSON document fenced on lines of its own. */
export function remediationLines(parts: readonly RemediationPart[], prefix = 'Fix: '): string[] {
  const lines: string[] = [];
  for (const part of parts) {
    if ('text' in part) {
      const text = manyLines(part.text, MAX_REMEDIATION_CHARS);
      lines.push(lines.length === 0 ? `${prefix}${text}` : text);
    } else {
      if (lines.length === 0) lines.push(prefix.trimEnd());
      lines.push('```', pasteableJson(part.json, Number.POSITIVE_INFINITY), '```');
    }
  }
  return lines;
}

/** Chat blocks of a remediation's JSON (its prose goes to `nextSteps`). */
function remediationCode(parts: readonly RemediationPart[]): TextBlock[] {
  const json = parts.flatMap((part) => ('json' in part ? [part.json] : []));
  if (json.length === 0) return [];
  return ['Policy to add (paste as is):', ...json.map((value) => ({ code: pasteableJson(value) }))];
}

export function followOnSummaries(followOns: readonly Finding[] = []): FollowOnSummary[] {
  return followOns.slice(0, MAX_FOLLOW_ONS).map((finding) => ({
    id: finding.id,
    checkId: finding.checkId,
    severity: finding.severity,
    status: finding.status,
    message: manyLines(finding.message, 500),
  }));
}

/** `- check (status): message` lines under a root, or nothing. */
export function followOnLines(followOns: readonly Finding[] = [], indent = ''): string[] {
  if (followOns.length === 0) return [];
  const listed = followOns.slice(0, MAX_FOLLOW_ONS);
  return [
    `${indent}Caused by this (not alerted on their own):`,
    ...listed.map(
      (finding) =>
        `${indent}- ${finding.checkId} (${finding.status}): ${oneLine(finding.message, 300)}`
    ),
    ...(followOns.length > listed.length
      ? [`${indent}- … and ${followOns.length - listed.length} more`]
      : []),
  ];
}

function renderText(input: {
  kind: ChangeKind;
  state: FindingState;
  finding: Finding;
  remediation: readonly RemediationPart[];
  followOns?: readonly Finding[];
  location: AlertLocation;
  previous?: FindingState;
  evidence: unknown;
}): string {
  const { kind, state, finding, previous } = input;
  const where = whereLine(state.resource.cluster, input.location);
  const suppressed = kind === 'suppressed' ? suppressionLines(finding) : [];
  const lines = [
    headline(kind, state, clusterLabelAt(state.resource.cluster, input.location)),
    ...(where === '' ? [] : [`Where: ${where}`]),
    '',
    ...(suppressed.length > 0 ? [...suppressed, ''] : []),
    suppressed.length > 0
      ? `What it reported (${finding.suppression?.status ?? 'fail'}): ${manyLines(finding.message, MAX_MESSAGE_CHARS)}`
      : manyLines(finding.message, MAX_MESSAGE_CHARS),
  ];
  if (kind === 'changed' && previous !== undefined) {
    lines.push('', `Before (${previous.severity}): ${manyLines(previous.message, 1_000)}`);
  }
  if (kind !== 'resolved' && input.remediation.length > 0) {
    lines.push('', ...remediationLines(input.remediation));
  }
  const followOns = followOnLines(input.followOns);
  if (followOns.length > 0) lines.push('', ...followOns);
  lines.push(
    '',
    `Check: ${checkTitle(state.checkId)} (${state.checkId})`,
    `First seen: ${state.firstSeen}  Last seen: ${state.lastSeen}`,
    `Finding id: ${state.id}`
  );
  const evidenceJson = JSON.stringify(input.evidence, null, 2);
  if (evidenceJson !== undefined && evidenceJson !== '{}')
    lines.push('', 'Evidence:', evidenceJson);
  return lines.join('\n');
}

function attributesOf(
  kind: MessageKind,
  state: {
    severity: Severity;
    checkId?: string;
    cluster: string;
    status?: string;
    location?: AlertLocation;
    /** On a `suppressed` change: `annotation` or `config`. */
    suppressedBy?: Suppression['source'];
  }
): Record<string, string> {
  const attributes: Record<string, string> = { change: kind, severity: state.severity };
  if (state.checkId !== undefined) attributes.checkId = state.checkId;
  if (state.suppressedBy !== undefined) attributes.suppressedBy = state.suppressedBy;
  // SNS rejects empty attribute values; manifest-only scans have no cluster.
  if (state.cluster !== '') attributes.cluster = oneLine(state.cluster, 256);
  if (state.status !== undefined) attributes.status = state.status;
  if (state.location?.account) attributes.account = oneLine(state.location.account, 20);
  if (state.location?.region) attributes.region = oneLine(state.location.region, 30);
  return attributes;
}

/** Size of the `Message` SNS receives for `MessageStructure: json`. */
export function structuredMessageBytes(bodies: OutgoingMessage['bodies']): number {
  return utf8Length(JSON.stringify(bodies));
}

export interface RenderOptions {
  readonly maxBytes?: number;
  /** The account and region the cluster is in, named in every message. */
  readonly location?: AlertLocation;
}

/**
 * Renders one lifecycle change. If the message would exceed `maxBytes`, the evidence is cut
 * (halving its budget until it fits, down to none): the headline, message and fix always stay.
 */
export function renderChangeMessage(
  change: LifecycleChange,
  options: RenderOptions = {}
): OutgoingMessage {
  const maxBytes = options.maxBytes ?? MAX_MESSAGE_BYTES;
  const location = options.location ?? {};
  const state = change.next;
  const finding = findingOf(change);
  // Sanitised once: the size loop below only re-cuts it.
  const evidence = sanitizeDeep(finding.evidence, EVIDENCE_LIMITS);
  const remediation = remediationParts(finding.remediation);
  let budget = INITIAL_EVIDENCE_CHARS;
  for (;;) {
    const bodies = renderBodies(
      { change, state, finding, remediation, location },
      evidence,
      budget
    );
    if (structuredMessageBytes(bodies) <= maxBytes || budget === 0) {
      return {
        id: `${change.kind}-${state.id}`.slice(0, 80),
        subject: changeSubject(change.kind, state, location),
        attributes: attributesOf(change.kind, {
          severity: state.severity,
          checkId: state.checkId,
          cluster: state.resource.cluster,
          status: finding.status,
          location,
          ...(change.kind === 'suppressed' && finding.suppression
            ? { suppressedBy: finding.suppression.source }
            : {}),
        }),
        bodies,
        covers: [`${change.kind}:${state.id}`],
      };
    }
    budget = budget < 64 ? 0 : Math.floor(budget / 2);
  }
}

/**
 * The most informative subject that fits: headline and location, headline, then the resource
 * without the check id (the body has it); else the headline shortened at a word boundary.
 */
function changeSubject(kind: ChangeKind, state: FindingState, location: AlertLocation): string {
  const tag = '[nodeclass-scanner]';
  const where = subjectLocation(location);
  const label = clusterLabelAt(state.resource.cluster, location);
  const full = `${tag} ${headline(kind, state, label)}`;
  const short = `${tag} ${CHANGE_LABEL[kind]} ${state.severity.toUpperCase()} ${resourceLabel(state.resource, label)}`;
  return fittingSubject([`${full}${where}`, full, `${short}${where}`, short, full]);
}

interface Rendering {
  readonly change: LifecycleChange;
  readonly state: FindingState;
  readonly finding: Finding;
  readonly remediation: readonly RemediationPart[];
  readonly location: AlertLocation;
}

function renderBodies(
  rendering: Rendering,
  cleanEvidence: unknown,
  evidenceBudget: number
): OutgoingMessage['bodies'] {
  const { change, state, finding, remediation, location } = rendering;
  const evidence =
    evidenceBudget === 0
      ? { value: { truncated: true }, truncated: Object.keys(finding.evidence).length > 0 }
      : boundClean(cleanEvidence, evidenceBudget);
  const followOns = change.kind === 'resolved' ? [] : (change.followOns ?? []);
  const text = renderText({
    kind: change.kind,
    state,
    finding,
    remediation,
    followOns,
    location,
    evidence: evidence.value,
    ...(change.previous ? { previous: change.previous } : {}),
  });
  const body: FindingMessageBody = {
    version: 1,
    source: 'nodeclass-scanner',
    change: change.kind,
    ...(location.account ? { account: oneLine(location.account, 20) } : {}),
    ...(location.region ? { region: oneLine(location.region, 30) } : {}),
    finding: {
      id: finding.id,
      checkId: finding.checkId,
      title: checkTitle(finding.checkId),
      severity: state.severity,
      status: finding.status,
      resource: {
        cluster: oneLine(finding.resource.cluster, 100),
        kind: finding.resource.kind,
        name: oneLine(finding.resource.name, 253),
      },
      message: manyLines(finding.message, MAX_MESSAGE_CHARS),
      remediation: remediationText(remediation),
      evidence: evidence.value,
      ...(change.kind === 'suppressed' && finding.suppression
        ? { suppression: suppressionBody(finding.suppression) }
        : {}),
    },
    ...(followOns.length > 0 ? { followOns: followOnSummaries(followOns) } : {}),
    ...(change.kind === 'changed' && change.previous
      ? {
          previous: {
            severity: change.previous.severity,
            message: manyLines(change.previous.message, 1_000),
          },
        }
      : {}),
    firstSeen: state.firstSeen,
    lastSeen: state.lastSeen,
    ...(state.resolvedAt ? { resolvedAt: state.resolvedAt } : {}),
    evidenceTruncated: evidence.truncated,
    text,
  };
  const where = whereLine(state.resource.cluster, location);
  const label = clusterLabelAt(state.resource.cluster, location);
  const suppressed = change.kind === 'suppressed' ? suppressionLines(finding) : [];
  const chatbot: ChatbotNotification = chatbotNotification({
    id: `${state.id}-${state.revision}`,
    // One thread per finding of one cluster: same-named clusters of two regions never share one.
    threadId: qualifiedFindingId(state.id, location),
    eventType: change.kind,
    title: `${CHANGE_EMOJI[change.kind]} ${headline(change.kind, state, label)}`,
    description: [
      ...(suppressed.length > 0 ? [suppressed.join('\n')] : []),
      manyLines(finding.message, 1_500),
      ...(change.kind === 'changed' && change.previous
        ? [`Before (${change.previous.severity}): ${manyLines(change.previous.message, 500)}`]
        : []),
      ...(change.kind === 'resolved' ? [] : remediationCode(remediation)),
      ...(followOns.length > 0 ? [followOnLines(followOns).join('\n')] : []),
      ...(where === '' ? [] : [`Where: ${where}`]),
      `Check: ${checkTitle(state.checkId)} · first seen ${state.firstSeen}`,
    ],
    nextSteps:
      change.kind === 'resolved'
        ? []
        : [
            ...(finding.suppression?.source === 'annotation' && change.kind === 'suppressed'
              ? [
                  `Not agreed? Remove the annotation ${ANNOTATION_PREFIX}${state.checkId} from ${resourceLabel(state.resource, label)}, or refuse annotation suppressions with the annotationSuppression setting.`,
                ]
              : []),
            ...remediationProse(remediation).map((step) => manyLines(step, 500)),
          ],
    keywords: [
      state.severity,
      state.checkId,
      ...(state.resource.cluster ? [state.resource.cluster] : []),
      ...(location.account ? [location.account] : []),
      ...(location.region ? [location.region] : []),
    ],
    relatedResources: [resourceLabel(state.resource, label)],
    additionalContext: {
      findingId: state.id,
      change: change.kind,
      ...(location.account ? { account: location.account } : {}),
      ...(location.region ? { region: location.region } : {}),
    },
  });
  return { default: JSON.stringify(body), email: text, https: JSON.stringify(chatbot) };
}

const CHANGE_EMOJI: Readonly<Record<ChangeKind, string>> = {
  new: ':rotating_light:',
  changed: ':arrows_counterclockwise:',
  resolved: ':white_check_mark:',
  suppressed: ':mute:',
  reminder: ':hourglass:',
};

export {
  attributesOf as messageAttributes,
  CHANGE_EMOJI as changeEmoji,
  manyLines as sanitizeMultiline,
  oneLine as sanitizeLine,
};
