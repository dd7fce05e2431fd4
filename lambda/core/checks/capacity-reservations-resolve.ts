import { defineCheck, forEachNodeClass } from '../check.js';
import { capacityReservationMatchesTerm } from '../selectors/capacity-reservations.js';
import { awsFactsOf, list, withSlice } from './support/aws-facts.js';

const RESERVATION_EXPIRY_WARNING_DAYS = 7;
const DAY_MS = 86_400_000;

/** Every capacity reservation term matches an active reservation that is not about to end. */
export const capacityReservationsResolve = defineCheck({
  id: 'capacity-reservations-resolve',
  title: 'Capacity reservation terms match active reservations',
  group: 'aws',
  severity: 'medium',
  inputs: ['aws'],
  rationale:
    'Karpenter launches into reserved capacity only through reservations its terms match, and drops reservations that have ended. A term that matches nothing, or a reservation that ends, silently sends launches to on-demand or spot capacity while CapacityReservationsReady stays True, so the capacity you paid for goes unused.',
  remediation:
    'Fix spec.capacityReservationSelectorTerms (id, ownerID, tags, instanceMatchCriteria) or renew the reservation before it ends.',
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#speccapacityreservationselectorterms',
    'https://karpenter.sh/docs/tasks/odcrs/',
  ],
  material: ['unmatchedTerms', 'ending[].id', 'reason'],
  evaluate: (inventory, { now }) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      const terms = spec.capacityReservationSelectorTerms ?? [];
      if (terms.length === 0) {
        return [
          { status: 'not-applicable', resource, message: 'No capacityReservationSelectorTerms.' },
        ];
      }
      return withSlice(
        resource,
        'capacity reservations (DescribeCapacityReservations)',
        awsFactsOf(target).capacityReservations,
        (facts) => {
          // Karpenter drops reservations whose EndDate has passed.
          const live = facts.reservations.filter(
            (reservation) =>
              reservation.endDate === undefined || Date.parse(reservation.endDate) > now.getTime()
          );
          const unmatched = terms
            .map((term, index) => ({ term, index }))
            .filter(
              ({ term }) =>
                !live.some((reservation) => capacityReservationMatchesTerm(reservation, term))
            );
          const horizon = now.getTime() + RESERVATION_EXPIRY_WARNING_DAYS * DAY_MS;
          const ending = live.filter(
            (reservation) =>
              reservation.endDate !== undefined && Date.parse(reservation.endDate) <= horizon
          );
          const problems = [
            ...unmatched.map(({ index }) => `term ${index} matches no active reservation`),
            ...ending.map((reservation) => `${reservation.id} ends on ${reservation.endDate}`),
          ];
          if (problems.length === 0) {
            return [
              {
                status: 'pass',
                resource,
                message: `${live.length} active reservation(s) match: ${list(live.map((reservation) => reservation.id))}.`,
              },
            ];
          }
          return [
            {
              status: 'fail',
              resource,
              message: `Capacity reservations: ${problems.join('; ')}.${live.length === 0 ? ' Karpenter launches on-demand/spot instead (CapacityReservationsReady stays True).' : ''}`,
              evidence: {
                unmatchedTerms: unmatched.map(({ index }) => index),
                ending: ending.map((reservation) => ({
                  id: reservation.id,
                  endDate: reservation.endDate,
                })),
                matched: live.map((reservation) => reservation.id),
              },
              ...(unmatched[0]
                ? {
                    location: {
                      path: `spec.capacityReservationSelectorTerms[${unmatched[0].index}]`,
                    },
                  }
                : {}),
            },
          ];
        }
      );
    }),
});
