import type { CheckInput, ClusterContext, Inventory, NodeClassEntry } from './inventory.js';
import { clusterOf } from './inventory.js';
import type { CheckStatus, FindingLocation, ResourceRef, Severity } from './model.js';
import type { EC2NodeClass } from './schema.js';

export type CheckGroup = 'spec' | 'aws' | 'cluster';

/** Metadata that lives with each check; the README catalog is generated from it. */
export interface CheckMeta {
  /** Stable kebab-case ID stating the compliant condition; never renamed. */
  readonly id: string;
  readonly title: string;
  readonly group: CheckGroup;
  /** Default severity; a finding may override it (version-aware checks). */
  readonly severity: Severity;
  /** Inputs the check needs; it is not run when any of them was not collected. */
  readonly inputs: readonly CheckInput[];
  /** What to change, in general terms; findings may give a more exact one. */
  readonly remediation: string;
  /** Upstream issues and documents (`#NNNN` = aws/karpenter-provider-aws). */
  readonly references: readonly string[];
}

/** What a check returns; `evaluate` turns drafts into findings with ids and defaults. */
export interface FindingDraft {
  readonly status: CheckStatus;
  readonly resource: ResourceRef;
  readonly message: string;
  readonly severity?: Severity;
  readonly remediation?: string;
  readonly evidence?: Readonly<Record<string, unknown>>;
  /** Distinguishes several findings of one check on one resource (e.g. the JSON path). */
  readonly discriminator?: string;
  readonly location?: FindingLocation;
}

export interface CheckContext {
  /** Scan time; checks never read the clock. */
  readonly now: Date;
}

export interface Check extends CheckMeta {
  evaluate(inventory: Inventory, context: CheckContext): readonly FindingDraft[];
}

export function nodeClassRef(entry: NodeClassEntry): ResourceRef {
  return { cluster: entry.cluster, kind: 'EC2NodeClass', name: entry.name };
}

/** The NodeClass being checked, with its cluster and its parsed object when it parsed. */
export interface NodeClassTarget {
  readonly entry: NodeClassEntry;
  readonly resource: ResourceRef;
  readonly cluster: ClusterContext;
  readonly inventory: Inventory;
}

const NO_CLUSTER: ClusterContext = { name: '', partition: 'aws' };

/**
 * Runs `evaluateOne` for every NodeClass whose object parsed. NodeClasses that did not parse get
 * one `error` finding each (the schema check reports the reasons), so no NodeClass is skipped.
 */
export function forEachNodeClass(
  inventory: Inventory,
  evaluateOne: (nodeClass: EC2NodeClass, target: NodeClassTarget) => readonly FindingDraft[]
): FindingDraft[] {
  const drafts: FindingDraft[] = [];
  for (const entry of inventory.nodeClasses) {
    const resource = nodeClassRef(entry);
    if (!entry.parsed.ok) {
      drafts.push({
        status: 'error',
        resource,
        message:
          'Not evaluated: the object is not a valid karpenter.k8s.aws/v1 EC2NodeClass (see nodeclass-schema-valid).',
        evidence: { issues: entry.parsed.issues.slice(0, 5) },
      });
      continue;
    }
    const cluster = clusterOf(inventory, entry.cluster) ?? {
      ...NO_CLUSTER,
      name: entry.cluster,
    };
    drafts.push(...evaluateOne(entry.parsed.value, { entry, resource, cluster, inventory }));
  }
  return drafts;
}

/** Defines a check; keeps metadata and logic in one object literal with checked types. */
export function defineCheck(check: Check): Check {
  return check;
}
