// Shared plumbing of the NodePool ⇄ EC2NodeClass checks: walk the NodePools, find the class each
// one launches through (same cluster), and the subnets its zone requirements admit. The
// requirement semantics themselves live in ../../nodepool-requirements.ts.
import {
  controllerReadFault,
  type FindingDraft,
  forEachNodePool,
  type NodePoolTarget,
  nodeClassRef,
  versionUnreadDraft,
} from '../../check.js';
import type { AwsNodeClassFacts, SelectedImage, Subnet } from '../../facts/aws.js';
import { LABEL } from '../../instance-types.js';
import type { NodeClassEntry } from '../../inventory.js';
import { factsKeyOf } from '../../inventory.js';
import { type Launchability, launchability, launchabilityEvaluable } from '../../launchability.js';
import type { ResourceRef } from '../../model.js';
import { admittedValues, labelAdmits, nodePoolRequirements } from '../../nodepool-requirements.js';
import type { EC2NodeClass, NodePool, NodeSelectorRequirement } from '../../schema.js';
import { SUBNETS, unreadable, withSlice } from './aws-facts.js';

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

/** What the NodePool's launchability was computed from, and the result. */
export interface LaunchabilityContext {
  readonly nodeClass: ResolvedClass;
  readonly subnets: readonly Subnet[];
  readonly images: readonly SelectedImage[];
  readonly result: Launchability;
}

/**
 * `withNodeClassSubnets`, then Karpenter's offerings for the NodePool (core/launchability.ts):
 * not applicable when the region's instance types and offerings were not recorded or the class
 * resolves no image; an `error` when they, the images or (for reserved capacity) the
 * reservations could not be read, since each decides a step.
 */
export function withLaunchability(
  nodePool: NodePool,
  target: NodePoolTarget,
  now: Date,
  evaluate: (context: LaunchabilityContext) => readonly FindingDraft[]
): readonly FindingDraft[] {
  const { resource } = target;
  return withNodeClassSubnets(nodePool, target, (nodeClass, subnets) => {
    const { facts } = nodeClass;
    // Either listing failing leaves the other's partial view: no verdict on it.
    if (facts.instanceTypes?.status === 'unavailable') {
      return [unreadable(resource, 'instance types (DescribeInstanceTypes)', facts.instanceTypes)];
    }
    if (facts.instanceTypeOfferings?.status === 'unavailable') {
      return [
        unreadable(
          resource,
          'instance type offerings (DescribeInstanceTypeOfferings)',
          facts.instanceTypeOfferings
        ),
      ];
    }
    if (!launchabilityEvaluable(facts)) {
      return [
        {
          status: 'not-applicable',
          resource,
          message:
            'Instance types were not collected (a world file without instanceTypes or instanceTypeOfferings for its region); nodepool-arch-has-image, nodepool-zones-have-subnets and nodepool-capacity-type-offered judge what they can without them.',
        },
      ];
    }
    const amis = facts.amis;
    if (amis?.status !== 'ok') return [unreadable(resource, 'AMI facts', amis)];
    if (amis.value.available.status !== 'ok') {
      return [unreadable(resource, 'images (DescribeImages)', amis.value.available)];
    }
    // An SSM parameter that could not be read hides the images it names (an alias's per
    // architecture, a custom ssmParameter term): the selection is partial, so no verdict.
    const unreadParameter = [
      ...(amis.value.alias?.parameters ?? []),
      ...amis.value.ssmParameters,
    ].find((lookup) => lookup.value.status === 'unavailable');
    if (unreadParameter !== undefined && unreadParameter.value.status === 'unavailable') {
      return [unreadable(resource, `SSM parameter ${unreadParameter.name}`, unreadParameter.value)];
    }
    const images = amis.value.available.value.selected;
    const reservations = facts.capacityReservations;
    const reserved =
      admittedValues(nodePoolRequirements(nodePool), LABEL.capacityType, ['reserved']).length > 0;
    if (reservations?.status === 'unavailable' && reserved) {
      return [
        unreadable(resource, 'capacity reservations (DescribeCapacityReservations)', reservations),
      ];
    }
    // Offerings depend on the controller's version and feature gates (reserved capacity).
    const faulted = controllerReadFault(target.cluster);
    if (faulted) return [versionUnreadDraft(resource, faulted, target.cluster)];
    if (images.length === 0) {
      return [
        {
          status: 'not-applicable',
          resource,
          message: `EC2NodeClass "${nodeClass.entry.name}" resolves no image (see ami-selector-resolves).`,
          causedBy: { checkId: 'ami-selector-resolves', resource: nodeClass.resource },
        },
      ];
    }
    const result = launchability({
      nodePool,
      spec: nodeClass.nodeClass.spec,
      facts,
      subnets,
      images,
      cluster: target.cluster,
      now,
    });
    return evaluate({ nodeClass, subnets, images, result });
  });
}
