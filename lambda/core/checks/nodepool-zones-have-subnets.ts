import { defineCheck } from '../check.js';
import type { Subnet } from '../facts/aws.js';
import { launchabilityEvaluable } from '../launchability.js';
import {
  type LabelValueSet,
  labelValueSet,
  nodePoolRequirements,
} from '../nodepool-requirements.js';
import { list } from './support/aws-facts.js';
import {
  admittedSubnets,
  forEachNodePool,
  requirementPath,
  withNodeClassSubnets,
  ZONE_ID_LABEL,
  ZONE_LABEL,
} from './support/nodepools.js';

/** The values an `In` names that every requirement on the key admits, sorted. */
function named(allowed: LabelValueSet): string[] {
  return [...(allowed.values ?? [])].sort();
}

function zoneText(subnet: Subnet): string {
  return `${subnet.availabilityZone ?? '?'} (${subnet.availabilityZoneId ?? '?'})`;
}

/** The zones the NodePool allows have subnets its EC2NodeClass selects. */
export const nodePoolZonesHaveSubnets = defineCheck({
  id: 'nodepool-zones-have-subnets',
  title: 'NodePool zones have subnets in the EC2NodeClass',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  scope: ['NodePool'],
  rationale:
    "Karpenter launches a NodePool's nodes only in zones the NodePool allows and the EC2NodeClass's subnets cover. An allowed zone without a subnet gets no nodes, so pods that need that zone stay Pending. With no zone in common the NodePool launches nothing: nodepool-instance-types-offered reports that whenever the region's instance types were read, and this check only when they were not.",
  remediation:
    "Allow in the NodePool's topology.kubernetes.io/zone (or topology.k8s.aws/zone-id) requirement the zones of the class's subnets, or select subnets in the zones the NodePool names.",
  references: [
    'https://karpenter.sh/docs/concepts/scheduling/#well-known-labels',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specsubnetselectorterms',
  ],
  material: ['zonesWithoutSubnet', 'subnetZones'],
  evaluate: (inventory) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      return withNodeClassSubnets(nodePool, target, (nodeClass, subnets) => {
        const className = nodeClass.entry.name;
        const requirements = nodePoolRequirements(nodePool);
        const zones = labelValueSet(requirements, ZONE_LABEL);
        const zoneIds = labelValueSet(requirements, ZONE_ID_LABEL);
        const subnetZones = [...new Set(subnets.map(zoneText))].sort();
        if (!zones.constrained && !zoneIds.constrained) {
          return [
            {
              status: 'pass',
              resource,
              message: `No zone requirement; EC2NodeClass "${className}" has subnets in ${list(subnetZones)}.`,
            },
          ];
        }
        const usable = admittedSubnets(requirements, subnets);
        // Zones and zone ids the NodePool names (In) that no usable subnet is in.
        const zonesWithoutSubnet = [
          ...named(zones).filter(
            (zone) => !usable.some((subnet) => subnet.availabilityZone === zone)
          ),
          ...named(zoneIds).filter(
            (zoneId) => !usable.some((subnet) => subnet.availabilityZoneId === zoneId)
          ),
        ];
        const path =
          requirementPath(nodePool, ZONE_LABEL) ?? requirementPath(nodePool, ZONE_ID_LABEL);
        const evidence = { zonesWithoutSubnet, subnetZones };
        if (usable.length === 0 && launchabilityEvaluable(nodeClass.facts)) {
          // The NodePool launches nothing: nodepool-instance-types-offered names this step.
          return [
            {
              status: 'not-applicable',
              resource,
              message: `No zone the NodePool allows has a subnet of EC2NodeClass "${className}": reported by nodepool-instance-types-offered.`,
              evidence,
            },
          ];
        }
        if (usable.length === 0) {
          const named = zonesWithoutSubnet.length
            ? list(zonesWithoutSubnet)
            : 'none of the subnet zones';
          return [
            {
              status: 'fail',
              resource,
              message: `The NodePool allows ${named}; EC2NodeClass "${className}" has subnets only in ${list(subnetZones)}. No allowed zone has a subnet: Karpenter launches nothing for this NodePool.`,
              evidence,
              ...(path ? { location: { path } } : {}),
            },
          ];
        }
        if (zonesWithoutSubnet.length > 0) {
          return [
            {
              status: 'fail',
              severity: 'low',
              resource,
              message: `Zone(s) ${list(zonesWithoutSubnet)} allowed by the NodePool have no subnet in EC2NodeClass "${className}" (subnets in ${list(subnetZones)}): pods that need them stay pending.`,
              evidence,
              ...(path ? { location: { path } } : {}),
            },
          ];
        }
        return [
          {
            status: 'pass',
            resource,
            message: `Every allowed zone has a subnet: ${list([...new Set(usable.map(zoneText))].sort())}.`,
            evidence,
          },
        ];
      });
    }),
});
