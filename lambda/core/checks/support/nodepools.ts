// Shared plumbing of the NodePool ⇄ EC2NodeClass checks: walk the NodePools, find the class each
// one launches through (same cluster), and the subnets its zone requirements admit. The
// requirement semantics themselves live in ../../nodepool-requirements.ts.
import {
  type FindingDraft,
  forEachNodePool,
  type NodePoolTarget,
  nodeClassRef,
} from '../../check.js';
import type { AwsNodeClassFacts, Subnet } from '../../facts/aws.js';
import type { NodeClassEntry } from '../../inventory.js';
import { factsKeyOf } from '../../inventory.js';
import type { ResourceRef } from '../../model.js';
import { labelAdmits, nodePoolRequirements } from '../../nodepool-requirements.js';
import type { EC2NodeClass, NodePool, NodeSelectorRequirement } from '../../schema.js';
import { SUBNETS, withSlice } from './aws-facts.js';

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

/**
 * `withNodeClass`, then the class's subnets: `evaluate` runs when the class selects at least one;
 * none is `not-applicable` (subnets-resolve reports it), unreadable subnets an `error` finding.
 */
export function withNodeClassSubnets(
  nodePool: NodePool,
  target: NodePoolTarget,
  evaluate: (resolved: ResolvedClass, subnets: readonly Subnet[]) => readonly FindingDraft[]
): readonly FindingDraft[] {
  const { resource } = target;
  return withNodeClass(nodePool, target, (nodeClass) =>
    withSlice(resource, SUBNETS, nodeClass.facts.subnets, ({ subnets }) => {
      if (subnets.length === 0) {
        return [
          {
            status: 'not-applicable',
            resource,
            message: `EC2NodeClass "${nodeClass.entry.name}" selects no subnet (see subnets-resolve).`,
            causedBy: { checkId: 'subnets-resolve', resource: nodeClass.resource },
          },
        ];
      }
      return evaluate(nodeClass, subnets);
    })
  );
}

/**
 * The subnets in a zone the NodePool's zone and zone-id requirements admit: where Karpenter may
 * launch its nodes. A subnet whose zone is unknown counts as in some zone the requirements do not
 * name.
 */
export function admittedSubnets(
  requirements: readonly NodeSelectorRequirement[],
  subnets: readonly Subnet[]
): Subnet[] {
  return subnets.filter(
    (subnet) =>
      labelAdmits(requirements, ZONE_LABEL, subnet.availabilityZone ?? '') &&
      labelAdmits(requirements, ZONE_ID_LABEL, subnet.availabilityZoneId ?? '')
  );
}

/** `spec.template.spec.requirements[i]` of the first requirement on `key`, for locations. */
export function requirementPath(nodePool: NodePool, key: string): string | undefined {
  const index = nodePoolRequirements(nodePool).findIndex((requirement) => requirement.key === key);
  return index < 0 ? undefined : `spec.template.spec.requirements[${index}]`;
}
