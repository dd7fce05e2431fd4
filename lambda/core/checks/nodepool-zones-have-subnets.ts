import { defineCheck } from '../check.js';
import type { Subnet } from '../facts/aws.js';
import { list, SUBNETS, withSlice } from './support/aws-facts.js';
import {
  admits,
  constrains,
  forEachNodePool,
  namedValues,
  type Requirement,
  requirementPath,
  requirementsOf,
  withNodeClass,
  ZONE_ID_LABEL,
  ZONE_LABEL,
} from './support/nodepools.js';

function subnetAdmitted(requirements: readonly Requirement[], subnet: Subnet): boolean {
  return (
    admits(requirements, ZONE_LABEL, subnet.availabilityZone ?? '') &&
    admits(requirements, ZONE_ID_LABEL, subnet.availabilityZoneId ?? '')
  );
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
  rationale:
    "Karpenter launches a NodePool's nodes only in zones the NodePool allows and the EC2NodeClass's subnets cover. An allowed zone without a subnet gets no nodes, so pods that need that zone stay Pending; with no zone in common the NodePool launches nothing.",
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
      return withNodeClass(nodePool, target, (nodeClass) =>
        withSlice(resource, SUBNETS, nodeClass.facts.subnets, ({ subnets }) => {
          const className = nodeClass.entry.name;
          if (subnets.length === 0) {
            return [
              {
                status: 'not-applicable',
                resource,
                message: `EC2NodeClass "${className}" selects no subnet (see subnets-resolve).`,
                causedBy: { checkId: 'subnets-resolve', resource: nodeClass.resource },
              },
            ];
          }
          const requirements = requirementsOf(nodePool);
          const subnetZones = [...new Set(subnets.map(zoneText))].sort();
          if (!constrains(requirements, ZONE_LABEL) && !constrains(requirements, ZONE_ID_LABEL)) {
            return [
              {
                status: 'pass',
                resource,
                message: `No zone requirement; EC2NodeClass "${className}" has subnets in ${list(subnetZones)}.`,
              },
            ];
          }
          const usable = subnets.filter((subnet) => subnetAdmitted(requirements, subnet));
          // Zones and zone ids the NodePool names (In) that no usable subnet is in.
          const zonesWithoutSubnet = [
            ...namedValues(requirements, ZONE_LABEL).filter(
              (zone) => !usable.some((subnet) => subnet.availabilityZone === zone)
            ),
            ...namedValues(requirements, ZONE_ID_LABEL).filter(
              (zoneId) => !usable.some((subnet) => subnet.availabilityZoneId === zoneId)
            ),
          ];
          const path =
            requirementPath(nodePool, ZONE_LABEL) ?? requirementPath(nodePool, ZONE_ID_LABEL);
          const evidence = { zonesWithoutSubnet, subnetZones };
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
        })
      );
    }),
});
