import { controllerReadFault, defineCheck, versionUnreadDraft } from '../check.js';
import { factsKeyOf } from '../inventory.js';
import { launchabilityEvaluable } from '../launchability.js';
import { admittedValues, nodePoolRequirements } from '../nodepool-requirements.js';
import { isAtLeast } from '../version.js';
import { list, withSlice } from './support/aws-facts.js';
import {
  CAPACITY_TYPE_LABEL,
  forEachNodePool,
  lookUpNodeClass,
  requirementPath,
  withNodeClass,
} from './support/nodepools.js';

const CAPACITY_TYPES = ['on-demand', 'spot', 'reserved'] as const;
const RESERVED_SINCE = '1.3.0';
const GATE =
  'reserved capacity exists since Karpenter v1.3.0 behind the ReservedCapacity feature gate (alpha and off by default at first; Helm settings.featureGates.reservedCapacity=true or FEATURE_GATES=ReservedCapacity=true; later releases turn it on by default as beta)';

/** A NodePool that allows only reserved capacity has an active reservation to launch into. */
export const nodePoolCapacityTypeOffered = defineCheck({
  id: 'nodepool-capacity-type-offered',
  title: 'Reserved-only NodePool has a capacity reservation',
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  scope: ['NodePool'],
  rationale:
    "A NodePool that allows only reserved capacity launches only into capacity reservations its EC2NodeClass selects, on Karpenter v1.3.0+ with the ReservedCapacity feature gate on; without one its pods stay Pending. When the region's instance types were read, nodepool-instance-types-offered judges the reservations (zone, type, instances left) instead.",
  remediation:
    "Select an active capacity reservation in the EC2NodeClass's capacityReservationSelectorTerms (with the ReservedCapacity feature gate on, Karpenter v1.3.0+), or also allow on-demand in the NodePool's karpenter.sh/capacity-type requirement.",
  references: [
    'https://karpenter.sh/docs/tasks/odcrs/',
    'https://karpenter.sh/docs/reference/settings/#feature-gates',
  ],
  material: ['reason'],
  evaluate: (inventory, { now }) =>
    forEachNodePool(inventory, (nodePool, target) => {
      const { resource } = target;
      const allowed = admittedValues(
        nodePoolRequirements(nodePool),
        CAPACITY_TYPE_LABEL,
        CAPACITY_TYPES
      );
      if (allowed.length !== 1 || allowed[0] !== 'reserved') {
        return [
          {
            status: 'not-applicable',
            resource,
            message: `The NodePool allows ${allowed.length ? allowed.join(', ') : 'no capacity type'}, not only reserved.`,
          },
        ];
      }
      const path = requirementPath(nodePool, CAPACITY_TYPE_LABEL);
      const location = path ? { location: { path } } : {};
      const version = target.cluster.karpenterVersion;
      const lookup = lookUpNodeClass(nodePool, target);
      if (lookup.status === 'found') {
        const facts = target.inventory.awsFacts.get(factsKeyOf(lookup.entry)) ?? {};
        if (launchabilityEvaluable(facts)) {
          // Whether a reservation serves the NodePool is one step of nodepool-instance-types-offered.
          return [
            {
              status: 'not-applicable',
              resource,
              message:
                'The NodePool allows only reserved capacity: nodepool-instance-types-offered judges the reservations it can launch into.',
            },
          ];
        }
      }
      // The version gate and the ReservedCapacity feature gate come from the controller.
      const faulted = controllerReadFault(target.cluster);
      if (faulted) return [versionUnreadDraft(resource, faulted, target.cluster)];
      if (version !== undefined && !isAtLeast(version, RESERVED_SINCE)) {
        return [
          {
            status: 'fail',
            resource,
            message: `The NodePool allows only reserved capacity, which Karpenter ${version.raw} does not offer: ${GATE}.`,
            evidence: { reason: 'version', karpenterVersion: version.raw },
            ...location,
          },
        ];
      }
      return withNodeClass(nodePool, target, (nodeClass) => {
        const className = nodeClass.entry.name;
        const terms = nodeClass.nodeClass.spec.capacityReservationSelectorTerms ?? [];
        if (terms.length === 0) {
          return [
            {
              status: 'fail',
              resource,
              message: `The NodePool allows only reserved capacity, but EC2NodeClass "${className}" has no capacityReservationSelectorTerms: nothing can launch (${GATE}).`,
              evidence: { reason: 'no-terms', nodeClass: className },
              ...location,
            },
          ];
        }
        return withSlice(
          resource,
          'capacity reservations (DescribeCapacityReservations)',
          nodeClass.facts.capacityReservations,
          (facts) => {
            // Karpenter drops reservations whose EndDate has passed.
            const live = facts.reservations.filter(
              (reservation) =>
                reservation.endDate === undefined || Date.parse(reservation.endDate) > now.getTime()
            );
            if (live.length === 0) {
              return [
                {
                  status: 'fail',
                  resource,
                  message: `The NodePool allows only reserved capacity, but EC2NodeClass "${className}" selects no active capacity reservation: nothing can launch (${GATE}).`,
                  evidence: { reason: 'no-active-reservation', nodeClass: className },
                  ...location,
                },
              ];
            }
            const gate =
              version === undefined
                ? ` Requires Karpenter v${RESERVED_SINCE}+ with the ReservedCapacity feature gate on (the version is unknown).`
                : ' Requires the ReservedCapacity feature gate on.';
            return [
              {
                status: 'pass',
                resource,
                message: `EC2NodeClass "${className}" selects active reservation(s) ${list(live.map((reservation) => reservation.id))}.${gate}`,
                evidence: { reservations: live.map((reservation) => reservation.id) },
              },
            ];
          }
        );
      });
    }),
});
