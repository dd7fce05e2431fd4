// What the service's state store cannot hold. DynamoDB refuses an item over 400 KB, and a refused
// write used to fail the whole cluster scan, every time: one oversized object silenced every alert
// of its cluster. The store measures each item a scan would write before anything is written
// (`FindingStore.oversizedItems`); here each refused item becomes an `error` finding on the object
// it belongs to, saying what could not be stored and why, and the rest of the scan is stored and
// alerted as usual.
import { findCheck } from './checks/index.js';
import { nodeClassSchemaValid } from './checks/nodeclass-schema-valid.js';
import { type FindingMaker, toFinding } from './evaluate.js';
import type { NodeClassIndexEntry } from './event-index.js';
import type { Finding, ResourceRef } from './model.js';
import { groupThousands } from './text-budget.js';

/** Evidence `rule` of the findings made here. */
export const STATE_SIZE_RULE = 'scanner-state-size';

/** An item the store measured over its limit; nothing of it was written. */
export type OversizedItem =
  | {
      /** A NodeClass's entry in the event index. */
      readonly item: 'nodeclass-index';
      readonly entry: Pick<NodeClassIndexEntry, 'cluster' | 'name'>;
      readonly bytes: number;
      readonly maxBytes: number;
      /** The field of the entry that takes the most room. */
      readonly largestField?: keyof NodeClassIndexEntry;
    }
  | {
      /** The stored state of a finding (with room for the notification a claim carries). */
      readonly item: 'finding-state';
      readonly finding: Finding;
      readonly bytes: number;
      readonly maxBytes: number;
    };

/** Where each index field comes from in the EC2NodeClass. */
const INDEX_FIELD_PATHS: Partial<Record<keyof NodeClassIndexEntry, string>> = {
  name: 'metadata.name',
  amiSelectorTerms: 'spec.amiSelectorTerms',
  resolvedAmiIds: 'status.amis',
  nodeRole: 'spec.role',
  instanceProfile: 'spec.instanceProfile',
};

function nodeClassResource(entry: Pick<NodeClassIndexEntry, 'cluster' | 'name'>): ResourceRef {
  return { cluster: entry.cluster, kind: 'EC2NodeClass', name: entry.name };
}

const sizes = (item: OversizedItem) =>
  `${groupThousands(item.bytes)} bytes, over the ${groupThousands(item.maxBytes)}-byte DynamoDB item limit`;

/** The `error` finding that reports one refused item on its object. */
function oversizedItemFinding(item: OversizedItem): Finding {
  if (item.item === 'nodeclass-index') {
    const path = (item.largestField && INDEX_FIELD_PATHS[item.largestField]) ?? 'spec';
    return toFinding(nodeClassSchemaValid, {
      status: 'error',
      resource: nodeClassResource(item.entry),
      message: `The scanner cannot store this EC2NodeClass in its event index (${sizes(item)}; most of it is ${path}). AMI and IAM events do not re-evaluate it until it fits; scheduled scans still check it.`,
      remediation: `Shorten ${path}: no selector term, role or instance profile Karpenter can use comes near this size (AMI names have at most 128 characters, IAM names at most 128).`,
      evidence: {
        path,
        rule: STATE_SIZE_RULE,
        item: item.item,
        bytes: item.bytes,
        maxBytes: item.maxBytes,
      },
      discriminator: `${path}#${STATE_SIZE_RULE}`,
      location: { path },
    });
  }
  const { finding } = item;
  // Reported under the finding's own check, so a stored failure of it is not taken for resolved.
  const check: FindingMaker = findCheck(finding.checkId) ?? {
    id: finding.checkId,
    severity: finding.severity,
    remediation: '',
    material: [],
  };
  return toFinding(check, {
    status: 'error',
    resource: finding.resource,
    severity: finding.severity,
    message: `The scanner cannot store its ${finding.checkId} finding ${finding.id} on this object (${sizes(item)}), so it reports this instead: that finding is not stored or alerted until it fits.`,
    remediation:
      'Finding texts are bounded, so only an extremely long object or cluster name can cause this: shorten it.',
    evidence: {
      rule: STATE_SIZE_RULE,
      item: item.item,
      findingId: finding.id,
      bytes: item.bytes,
      maxBytes: item.maxBytes,
    },
    discriminator: `${STATE_SIZE_RULE}#${finding.id}`,
  });
}

const nodeClassKey = (resource: Pick<ResourceRef, 'cluster' | 'name'>) =>
  `${resource.cluster}\u0000${resource.name}`;

/**
 * The scan without what cannot be stored, and with an `error` finding for each refused item: the
 * findings to diff (a refused finding is left out; its `error` stands in for it) and the index
 * entries to write (a refused entry is left out: its NodeClass is not indexed).
 */
export function applyStorageLimits(scan: {
  readonly findings: readonly Finding[];
  readonly index: readonly NodeClassIndexEntry[];
  readonly oversized: readonly OversizedItem[];
}): { findings: Finding[]; index: NodeClassIndexEntry[]; refused: Finding[] } {
  if (scan.oversized.length === 0) {
    return { findings: [...scan.findings], index: [...scan.index], refused: [] };
  }
  const refusedFindings = new Set<string>();
  const refusedEntries = new Set<string>();
  for (const item of scan.oversized) {
    if (item.item === 'finding-state') refusedFindings.add(item.finding.id);
    else refusedEntries.add(nodeClassKey(item.entry));
  }
  const refused = scan.oversized.map(oversizedItemFinding);
  const findings = scan.findings.filter(
    (finding) =>
      !refusedFindings.has(finding.id) &&
      // An object with a refused index entry no longer passes nodeclass-schema-valid.
      !(
        finding.status === 'pass' &&
        finding.checkId === nodeClassSchemaValid.id &&
        finding.resource.kind === 'EC2NodeClass' &&
        refusedEntries.has(nodeClassKey(finding.resource))
      )
  );
  return {
    findings: [...findings, ...refused],
    index: scan.index.filter((entry) => !refusedEntries.has(nodeClassKey(entry))),
    refused,
  };
}
