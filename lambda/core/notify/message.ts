// One SNS message per lifecycle change. The message uses SNS `MessageStructure: json`: `default`
// (JSON body with the finding and a `text` rendering, for SQS/Lambda/email-json subscribers),
// `email` (the text rendering) and `https` (the Chatbot custom-notification variant, which is how
// AWS Chatbot subscribes). Message attributes carry the routing keys for subscription filters.
import { findCheck } from '../checks/index.js';
import type { ChangeKind, FindingState, LifecycleChange } from '../lifecycle.js';
import type { Finding, ResourceRef, Severity } from '../model.js';
import { type ChatbotNotification, chatbotNotification } from './chatbot.js';
import {
  EVIDENCE_LIMITS,
  emailSubject,
  sanitizeDeep,
  sanitizeText,
  truncateText,
  utf8Length,
} from './sanitize.js';

/** SNS allows 256 KiB per message including attributes; stay clear of it. */
export const MAX_MESSAGE_BYTES = 240 * 1024;
export const MAX_MESSAGE_CHARS = 4_000;
export const MAX_REMEDIATION_CHARS = 2_000;
const INITIAL_EVIDENCE_CHARS = 60_000;

export type MessageKind = ChangeKind | 'digest';

/** What the publisher port sends: one SNS PublishBatch entry. */
export interface OutgoingMessage {
  /** Unique within one scan: used as the batch entry id (`[A-Za-z0-9_-]{1,80}`). */
  readonly id: string;
  /** Email subject (ASCII, < 100 characters). */
  readonly subject: string;
  /** String message attributes for subscription filter policies. */
  readonly attributes: Readonly<Record<string, string>>;
  /** Per-protocol bodies (`MessageStructure: json`). */
  readonly bodies: { readonly default: string; readonly email: string; readonly https: string };
}

/** The JSON body contract (`default`). */
export interface FindingMessageBody {
  readonly version: 1;
  readonly source: 'nodeclass-scanner';
  readonly change: ChangeKind;
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
  };
  readonly previous?: { readonly severity: Severity; readonly message: string };
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly resolvedAt?: string;
  readonly evidenceTruncated: boolean;
  readonly text: string;
}

const CHANGE_LABEL: Readonly<Record<ChangeKind, string>> = {
  new: 'NEW',
  changed: 'CHANGED',
  resolved: 'RESOLVED',
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

export function resourceLabel(resource: ResourceRef): string {
  const where = resource.cluster === '' ? '' : `${oneLine(resource.cluster, 100)}/`;
  return `${where}${resource.kind}/${oneLine(resource.name, 253)}`;
}

/** The one-line headline, never truncated away (only user-controlled parts are capped). */
export function headline(kind: ChangeKind, state: FindingState): string {
  return `${CHANGE_LABEL[kind]} ${state.severity.toUpperCase()} ${state.checkId} on ${resourceLabel(state.resource)}`;
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

/** Evidence bounded to `maxChars` of JSON; beyond that, a truncated preview marks the cut. */
export function boundEvidence(
  evidence: unknown,
  maxChars: number
): { value: unknown; truncated: boolean } {
  return boundClean(sanitizeDeep(evidence, EVIDENCE_LIMITS), maxChars);
}

function boundClean(clean: unknown, maxChars: number): { value: unknown; truncated: boolean } {
  const json = JSON.stringify(clean ?? {});
  if (json.length <= maxChars) return { value: clean ?? {}, truncated: false };
  return {
    value: { truncated: true, preview: truncateText(json, Math.max(0, maxChars)) },
    truncated: true,
  };
}

function renderText(input: {
  kind: ChangeKind;
  state: FindingState;
  finding: Finding;
  previous?: FindingState;
  evidence: unknown;
}): string {
  const { kind, state, finding, previous } = input;
  const lines = [headline(kind, state), '', manyLines(finding.message, MAX_MESSAGE_CHARS)];
  if (kind === 'changed' && previous !== undefined) {
    lines.push('', `Before (${previous.severity}): ${manyLines(previous.message, 1_000)}`);
  }
  if (kind !== 'resolved' && finding.remediation !== '') {
    lines.push('', `Fix: ${manyLines(finding.remediation, MAX_REMEDIATION_CHARS)}`);
  }
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
  state: { severity: Severity; checkId?: string; cluster: string; status?: string }
): Record<string, string> {
  const attributes: Record<string, string> = { change: kind, severity: state.severity };
  if (state.checkId !== undefined) attributes.checkId = state.checkId;
  // SNS rejects empty attribute values; manifest-only scans have no cluster.
  if (state.cluster !== '') attributes.cluster = oneLine(state.cluster, 256);
  if (state.status !== undefined) attributes.status = state.status;
  return attributes;
}

/** Size of the `Message` SNS receives for `MessageStructure: json`. */
export function structuredMessageBytes(bodies: OutgoingMessage['bodies']): number {
  return utf8Length(JSON.stringify(bodies));
}

export interface RenderOptions {
  readonly maxBytes?: number;
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
  const state = change.next;
  const finding = findingOf(change);
  // Sanitised once: the size loop below only re-cuts it.
  const evidence = sanitizeDeep(finding.evidence, EVIDENCE_LIMITS);
  let budget = INITIAL_EVIDENCE_CHARS;
  for (;;) {
    const bodies = renderBodies(change, state, finding, evidence, budget);
    if (structuredMessageBytes(bodies) <= maxBytes || budget === 0) {
      return {
        id: `${change.kind}-${state.id}`.slice(0, 80),
        subject: emailSubject(`[nodeclass-scanner] ${headline(change.kind, state)}`),
        attributes: attributesOf(change.kind, {
          severity: state.severity,
          checkId: state.checkId,
          cluster: state.resource.cluster,
          status: finding.status,
        }),
        bodies,
      };
    }
    budget = budget < 64 ? 0 : Math.floor(budget / 2);
  }
}

function renderBodies(
  change: LifecycleChange,
  state: FindingState,
  finding: Finding,
  cleanEvidence: unknown,
  evidenceBudget: number
): OutgoingMessage['bodies'] {
  const evidence =
    evidenceBudget === 0
      ? { value: { truncated: true }, truncated: Object.keys(finding.evidence).length > 0 }
      : boundClean(cleanEvidence, evidenceBudget);
  const text = renderText({
    kind: change.kind,
    state,
    finding,
    evidence: evidence.value,
    ...(change.previous ? { previous: change.previous } : {}),
  });
  const body: FindingMessageBody = {
    version: 1,
    source: 'nodeclass-scanner',
    change: change.kind,
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
      remediation: manyLines(finding.remediation, MAX_REMEDIATION_CHARS),
      evidence: evidence.value,
    },
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
  const chatbot: ChatbotNotification = chatbotNotification({
    id: `${state.id}-${state.revision}`,
    threadId: state.id,
    eventType: change.kind,
    title: `${CHANGE_EMOJI[change.kind]} ${headline(change.kind, state)}`,
    description: [
      manyLines(finding.message, 1_500, true),
      ...(change.kind === 'changed' && change.previous
        ? [`Before (${change.previous.severity}): ${manyLines(change.previous.message, 500, true)}`]
        : []),
      `Check: ${checkTitle(state.checkId)} · first seen ${state.firstSeen}`,
    ].join('\n'),
    nextSteps:
      change.kind === 'resolved' || finding.remediation === ''
        ? []
        : [manyLines(finding.remediation, 500, true)],
    keywords: [
      state.severity,
      state.checkId,
      ...(state.resource.cluster ? [state.resource.cluster] : []),
    ],
    relatedResources: [resourceLabel(state.resource)],
    additionalContext: { findingId: state.id, change: change.kind },
  });
  return { default: JSON.stringify(body), email: text, https: JSON.stringify(chatbot) };
}

const CHANGE_EMOJI: Readonly<Record<ChangeKind, string>> = {
  new: ':rotating_light:',
  changed: ':arrows_counterclockwise:',
  resolved: ':white_check_mark:',
  reminder: ':hourglass:',
};

export {
  attributesOf as messageAttributes,
  manyLines as sanitizeMultiline,
  oneLine as sanitizeLine,
};
