import { defineCheck } from '../check.js';
import {
  INSTANCE_TYPE_KEYS,
  instanceTypeAllowed,
  instanceTypeRequirements,
} from '../instance-types.js';
import { type NodeSelectorRequirement, nodePoolRequirements } from '../nodepool-requirements.js';
import { list, unreadable } from './support/aws-facts.js';
import {
  admittedSubnets,
  forEachNodePool,
  requirementPath,
  withNodeClassSubnets,
} from './support/nodepools.js';

const OFFERINGS = 'instance type offerings (DescribeInstanceTypeOfferings)';

function requirementText(requirement: NodeSelectorRequirement): string {
  const listed = requirement.values ?? [];
  const values = listed.length === 0 ? '' : ` [${listed.join(', ')}]`;
  return `${requirement.key} ${requirement.operator}${values}`;
}

function sample(types: readonly string[]): string {
  return list([...new Set(types)].sort(), 5);
}

/** Some instance type the NodePool allows is offered in a zone of its EC2NodeClass's subnets. */
export const nodePoolInstanceTypesOffered = defineCheck({
  id: 'nodepool-instance-types-offered',
  title: 'NodePool instance types are offered in the EC2NodeClass subnet zones',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  scope: ['NodePool'],
  rationale:
    "Karpenter launches only instance types EC2 offers in the zones of the EC2NodeClass's subnets. If the NodePool's requirements allow none of them there, Karpenter finds no compatible instance type for any pod and the NodePool launches nothing.",
  remediation:
    "Widen the NodePool's instance-type, family, category, generation or size requirements to types offered in the zones of the class's subnets, or select subnets in zones where the required types are offered.",
  references: [
    'https://karpenter.sh/docs/reference/instance-types/',
    'https://karpenter.sh/docs/concepts/scheduling/#well-known-labels',
    'https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeInstanceTypeOfferings.html',
  ],
  material: ['nodeClass', 'zones', 'requirements'],
  evaluate: (inventory) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      const requirements = instanceTypeRequirements(nodePool);
      if (requirements.length === 0) {
        return [
          {
            status: 'not-applicable',
            resource,
            message:
              'The NodePool does not restrict instance types, families, categories, generations or sizes.',
          },
        ];
      }
      return withNodeClassSubnets(nodePool, target, (nodeClass, subnets) => {
        const className = nodeClass.entry.name;
        // Karpenter launches only in zones both the class's subnets and the NodePool allow.
        const zones = [
          ...new Set(
            admittedSubnets(nodePoolRequirements(nodePool), subnets).flatMap((subnet) =>
              subnet.availabilityZone === undefined ? [] : [subnet.availabilityZone]
            )
          ),
        ].sort();
        if (zones.length === 0) {
          return [
            {
              status: 'not-applicable',
              resource,
              message: `No zone allowed by the NodePool has a subnet of EC2NodeClass "${className}" (see nodepool-zones-have-subnets).`,
              causedBy: { checkId: 'nodepool-zones-have-subnets' },
            },
          ];
        }
        const slice = nodeClass.facts.instanceTypeOfferings;
        if (slice === undefined) {
          return [
            {
              status: 'not-applicable',
              resource,
              message:
                'Instance type offerings were not collected (a world file without an instanceTypeOfferings section for its region).',
            },
          ];
        }
        if (slice.status === 'unavailable') return [unreadable(resource, OFFERINGS, slice)];
        const allowed = slice.value.offerings.filter((offering) =>
          instanceTypeAllowed(offering.instanceType, requirements)
        );
        const inZones = allowed.filter((offering) => zones.includes(offering.zone));
        const shown = requirements.map(requirementText);
        if (inZones.length > 0) {
          const types = [...new Set(inZones.map((offering) => offering.instanceType))];
          return [
            {
              status: 'pass',
              resource,
              message: `${types.length} instance type(s) the NodePool allows are offered in ${list(zones)}: ${sample(types)}.`,
            },
          ];
        }
        const elsewhere = [...new Set(allowed.map((offering) => offering.zone))].sort();
        const where =
          elsewhere.length === 0
            ? 'No instance type the requirements allow is offered anywhere in the region.'
            : `Types the requirements allow (${sample(allowed.map((offering) => offering.instanceType))}) are offered only in ${list(elsewhere)}.`;
        const firstKey = INSTANCE_TYPE_KEYS.find((key) =>
          requirements.some((requirement) => requirement.key === key)
        );
        const path = firstKey === undefined ? undefined : requirementPath(nodePool, firstKey);
        return [
          {
            status: 'fail',
            resource,
            message: `No instance type allowed by ${list(shown)} is offered in the zones of EC2NodeClass "${className}"'s subnets (${list(zones)}). ${where} Karpenter launches nothing for this NodePool.`,
            evidence: {
              nodeClass: className,
              zones,
              requirements: requirements.map(({ key, operator, values }) => ({
                key,
                operator,
                values: [...(values ?? [])],
              })),
              offeredElsewhere: elsewhere,
            },
            ...(path ? { location: { path } } : {}),
          },
        ];
      });
    }),
});
