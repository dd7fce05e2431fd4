// Shared plumbing of the NodePool ⇄ EC2NodeClass checks: walk the NodePools, find the class each
// one launches through (same cluster), and read the NodePool's requirements.
import {
  type FindingDraft,
  forEachNodePool,
  type NodePoolTarget,
  nodeClassRef,
} from '../../check.js';
import type { AwsNodeClassFacts } from '../../facts/aws.js';
import type { NodeClassEntry } from '../../inventory.js';
import { factsKeyOf } from '../../inventory.js';
import type { ResourceRef } from '../../model.js';
import type { EC2NodeClass, NodePool } from '../../schema.js';

export const ARCH_LABEL = 'kubernetes.io/arch';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const ZONE_ID_LABEL = 'topology.k8s.aws/zone-id';
export const CAPACITY_TYPE_LABEL = 'karpenter.sh/capacity-type';

export { forEachNodePool, type NodePoolTarget };

export type NodeClassLookup =
  | { readonly status: 'no-ref' }
  | { readonly status: 'other-kind'; readonly group: string; readonly kind: string }
  | { readonly status: 'missing'; readonly name: string }
  | { readonly status: 'found'; readonly name: string; readonly entry: NodeClassEntry };

/** The EC2NodeClass a NodePool's `nodeClassRef` names, looked up in the NodePool's cluster. */
export function lookUpNodeClass(nodePool: NodePool, target: NodePoolTarget): NodeClassLookup {
  const ref = nodePool.spec.template?.spec?.nodeClassRef;
  if (ref === undefined) return { status: 'no-ref' };
  const group = ref.group ?? '';
  const kind = ref.kind ?? '';
  if (group !== 'karpenter.k8s.aws' || kind !== 'EC2NodeClass') {
    return { status: 'other-kind', group, kind };
  }
  const entry = target.inventory.nodeClasses.find(
    (candidate) => candidate.cluster === target.entry.cluster && candidate.name === ref.name
  );
  return entry ? { status: 'found', name: ref.name, entry } : { status: 'missing', name: ref.name };
}

/** What a check needs of the NodePool's class: its parsed object and its AWS facts. */
export interface ResolvedClass {
  readonly entry: NodeClassEntry;
  readonly nodeClass: EC2NodeClass;
  readonly resource: ResourceRef;
  readonly facts: AwsNodeClassFacts;
}

/**
 * Runs `evaluate` with the NodePool's class; `not-applicable` when the class is missing or of
 * another kind (nodepool-nodeclass-exists reports it) or did not parse (nodeclass-schema-valid).
 */
export function withNodeClass(
  nodePool: NodePool,
  target: NodePoolTarget,
  evaluate: (resolved: ResolvedClass) => readonly FindingDraft[]
): readonly FindingDraft[] {
  const { resource } = target;
  const lookup = lookUpNodeClass(nodePool, target);
  if (lookup.status !== 'found') {
    return [
      {
        status: 'not-applicable',
        resource,
        message:
          'The NodePool has no EC2NodeClass to check against (see nodepool-nodeclass-exists).',
        causedBy: { checkId: 'nodepool-nodeclass-exists' },
      },
    ];
  }
  const { entry } = lookup;
  if (!entry.parsed.ok) {
    return [
      {
        status: 'not-applicable',
        resource,
        message: `EC2NodeClass "${entry.name}" is not valid (see nodeclass-schema-valid).`,
        causedBy: { checkId: 'nodeclass-schema-valid', resource: nodeClassRef(entry) },
      },
    ];
  }
  return evaluate({
    entry,
    nodeClass: entry.parsed.value,
    resource: nodeClassRef(entry),
    facts: target.inventory.awsFacts.get(factsKeyOf(entry)) ?? {},
  });
}

export interface Requirement {
  readonly key: string;
  readonly operator: string;
  readonly values: readonly string[];
}

/** `spec.template.spec.requirements`, skipping malformed items (nodepool-schema-valid reports them). */
export function requirementsOf(nodePool: NodePool): Requirement[] {
  const raw = nodePool.spec.template?.spec?.requirements ?? [];
  const requirements: Requirement[] = [];
  for (const item of raw) {
    if (item === null || typeof item !== 'object') continue;
    const { key, operator, values } = item as Record<string, unknown>;
    if (typeof key !== 'string' || typeof operator !== 'string') continue;
    requirements.push({
      key,
      operator,
      values: Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : [],
    });
  }
  return requirements;
}

/** Whether the NodePool has any requirement on `key`. */
export function constrains(requirements: readonly Requirement[], key: string): boolean {
  return requirements.some((requirement) => requirement.key === key);
}

/** Whether a label value satisfies every requirement on `key` (requirements are ANDed). */
export function admits(requirements: readonly Requirement[], key: string, value: string): boolean {
  return requirements
    .filter((requirement) => requirement.key === key)
    .every((requirement) => {
      switch (requirement.operator) {
        case 'In':
          return requirement.values.includes(value);
        case 'NotIn':
          return !requirement.values.includes(value);
        case 'DoesNotExist':
          return false;
        default:
          // Exists admits every value; Gt/Lt do not apply to these string labels.
          return true;
      }
    });
}

/** Values named by `In` requirements on `key` that every requirement on it admits. */
export function namedValues(requirements: readonly Requirement[], key: string): string[] {
  const named = requirements
    .filter((requirement) => requirement.key === key && requirement.operator === 'In')
    .flatMap((requirement) => requirement.values);
  return [...new Set(named)].filter((value) => admits(requirements, key, value)).sort();
}

/** `spec.template.spec.requirements[i]` of the first requirement on `key`, for locations. */
export function requirementPath(nodePool: NodePool, key: string): string | undefined {
  const raw = nodePool.spec.template?.spec?.requirements ?? [];
  const index = raw.findIndex(
    (item) => item !== null && typeof item === 'object' && (item as { key?: unknown }).key === key
  );
  return index < 0 ? undefined : `spec.template.spec.requirements[${index}]`;
}
