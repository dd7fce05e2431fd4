// The per-scan digest: one summary message with what changed and what is open, for people who
// want one message per scan rather than one per finding (filter on `change = digest`).
import { clusterNameOf } from '../cluster-identity.js';
import type { ChangeKind, LifecycleChange } from '../lifecycle.js';
import { CHANGE_KINDS } from '../lifecycle.js';
import { SEVERITIES, type Severity, severityRank } from '../model.js';
import { chatbotNotification } from './chatbot.js';
import {
  headline,
  MAX_MESSAGE_BYTES,
  messageAttributes,
  type OutgoingMessage,
  resourceLabel,
  sanitizeLine,
  structuredMessageBytes,
} from './message.js';
import { fittingSubject } from './sanitize.js';

const DIGEST_MAX_ITEMS = 50;

/** A change of the digest, with its cluster's label when the name alone is ambiguous. */
export interface DigestChange extends LifecycleChange {
  /** `name@region` for a cluster outside the home region (`clusterLabel`); the name otherwise. */
  readonly clusterLabel?: string;
}

export interface DigestInput {
  /** Unique per scan (the batch entry id is derived from it). */
  readonly scanId: string;
  readonly trigger: string;
  readonly scannedAt: string;
  /** The clusters' labels (`clusterLabel`: the name, `name@region` outside the home region). */
  readonly clusters: readonly string[];
  /** The AWS account the clusters are in. */
  readonly account?: string;
  /** Each cluster's region, by label. */
  readonly regions?: Readonly<Record<string, string>>;
  readonly failedClusters: readonly string[];
  readonly nodeClassesScanned: number;
  readonly changes: readonly DigestChange[];
  readonly openBySeverity: Readonly<Record<Severity, number>>;
}

export interface DigestBody {
  readonly version: 1;
  readonly source: 'nodeclass-scanner';
  readonly change: 'digest';
  readonly scanId: string;
  readonly trigger: string;
  readonly scannedAt: string;
  readonly clusters: readonly string[];
  readonly account?: string;
  readonly regions?: Readonly<Record<string, string>>;
  readonly failedClusters: readonly string[];
  readonly nodeClassesScanned: number;
  readonly counts: Readonly<Record<ChangeKind, number>>;
  readonly openBySeverity: Readonly<Record<Severity, number>>;
  readonly changes: readonly {
    readonly change: ChangeKind;
    readonly severity: Severity;
    readonly checkId: string;
    readonly findingId: string;
    readonly resource: string;
    readonly message: string;
  }[];
  readonly omitted: number;
  readonly text: string;
}

function highestSeverity(changes: readonly LifecycleChange[]): Severity {
  let best: Severity = 'info';
  for (const change of changes) {
    if (severityRank(change.next.severity) < severityRank(best)) best = change.next.severity;
  }
  return best;
}

export function renderDigest(input: DigestInput, maxBytes = MAX_MESSAGE_BYTES): OutgoingMessage {
  let limit = DIGEST_MAX_ITEMS;
  for (;;) {
    const message = renderDigestWith(input, limit);
    if (structuredMessageBytes(message.bodies) <= maxBytes || limit === 0) return message;
    limit = Math.floor(limit / 2);
  }
}

function renderDigestWith(input: DigestInput, limit: number): OutgoingMessage {
  const counts = Object.fromEntries(
    CHANGE_KINDS.map((kind) => [kind, input.changes.filter((c) => c.kind === kind).length])
  ) as Record<ChangeKind, number>;
  const listed = input.changes.slice(0, limit);
  const omitted = input.changes.length - listed.length;
  const clusters = input.clusters.map((cluster) => sanitizeLine(cluster, 130));
  const failed = input.failedClusters.map((cluster) => sanitizeLine(cluster, 130));
  const summary = `${CHANGE_KINDS.map((kind) => `${counts[kind]} ${kind}`).join(', ')}`;
  const open = SEVERITIES.map((severity) => `${input.openBySeverity[severity]} ${severity}`).join(
    ', '
  );
  const title = `Scan digest for ${clusters.join(', ') || 'no cluster'}: ${summary}`;
  const account = input.account ? sanitizeLine(input.account, 20) : undefined;
  const regions = Object.fromEntries(
    input.clusters.flatMap((cluster) => {
      const region = input.regions?.[cluster];
      return region ? [[sanitizeLine(cluster, 130), sanitizeLine(region, 30)]] : [];
    })
  );
  // A label outside the home region names its region already (`prod@eu-west-1`).
  const placed = clusters.map((cluster) =>
    regions[cluster] && !cluster.includes('@') ? `${cluster} (${regions[cluster]})` : cluster
  );
  const where = [
    ...(account ? [`account ${account}`] : []),
    ...(placed.length > 0 ? [`clusters ${placed.join(', ')}`] : []),
  ].join(', ');
  const lines = [
    title,
    ...(where === '' ? [] : [`Where: ${where}`]),
    `Open findings: ${open}`,
    `Trigger: ${sanitizeLine(input.trigger, 100)}  Scanned at: ${input.scannedAt}  NodeClasses: ${input.nodeClassesScanned}`,
    ...(failed.length > 0 ? [`Clusters that could not be scanned: ${failed.join(', ')}`] : []),
    '',
    ...listed.flatMap((change) => [
      `- ${headline(change.kind, change.next, change.clusterLabel)}`,
      ...(change.kind === 'resolved' ? [] : (change.followOns ?? [])).map(
        (followOn) => `    caused by it: ${followOn.checkId} (${followOn.status})`
      ),
    ]),
    ...(omitted > 0 ? [`… and ${omitted} more`] : []),
  ];
  const text = lines.join('\n');
  const body: DigestBody = {
    version: 1,
    source: 'nodeclass-scanner',
    change: 'digest',
    scanId: input.scanId,
    trigger: sanitizeLine(input.trigger, 100),
    scannedAt: input.scannedAt,
    clusters,
    ...(account ? { account } : {}),
    ...(Object.keys(regions).length > 0 ? { regions } : {}),
    failedClusters: failed,
    nodeClassesScanned: input.nodeClassesScanned,
    counts,
    openBySeverity: input.openBySeverity,
    changes: listed.map((change) => ({
      change: change.kind,
      severity: change.next.severity,
      checkId: change.next.checkId,
      findingId: change.next.id,
      resource: resourceLabel(change.next.resource, change.clusterLabel),
      message: sanitizeLine(change.finding?.message ?? change.next.message, 300),
    })),
    omitted,
    text,
  };
  const chatbot = chatbotNotification({
    id: `digest-${input.scanId}`,
    eventType: 'digest',
    title: `:bar_chart: ${title}`,
    description: [
      ...(where === '' ? [] : [`Where: ${where}`]),
      `Open findings: ${open}`,
      ...(failed.length > 0 ? [`Could not scan: ${failed.join(', ')}`] : []),
      ...listed
        .slice(0, 20)
        .map((change) => `• ${headline(change.kind, change.next, change.clusterLabel)}`),
      ...(input.changes.length > 20 ? [`… and ${input.changes.length - 20} more`] : []),
    ].join('\n'),
    keywords: ['digest', ...clusters.slice(0, 5), ...(account ? [account] : [])],
    additionalContext: { scanId: input.scanId, trigger: input.trigger },
  });
  const single = input.clusters.length === 1 ? (input.clusters[0] ?? '') : '';
  const singleRegion = input.regions?.[single];
  const location = {
    ...(input.account ? { account: input.account } : {}),
    ...(singleRegion ? { region: singleRegion } : {}),
  };
  const place = [account, single === '' ? undefined : regions[sanitizeLine(single, 130)]]
    .filter((part) => part)
    .join(' ');
  const changed = CHANGE_KINDS.filter((kind) => counts[kind] > 0)
    .map((kind) => `${counts[kind]} ${kind}`)
    .join(', ');
  const subjectTitle = `Scan digest for ${clusters.join(', ') || 'no cluster'}${place ? ` in ${place}` : ''}: ${changed || 'no changes'}`;
  return {
    id: `digest-${input.scanId}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80),
    subject: fittingSubject([
      `[nodeclass-scanner] ${subjectTitle}`,
      `[nodeclass-scanner] ${title}`,
    ]),
    attributes: messageAttributes('digest', {
      severity: highestSeverity(input.changes),
      // The attribute is the cluster's name, as on every message (its region is beside it).
      cluster: clusterNameOf(single),
      location,
    }),
    covers: [],
    bodies: { default: JSON.stringify(body), email: text, https: JSON.stringify(chatbot) },
  };
}
