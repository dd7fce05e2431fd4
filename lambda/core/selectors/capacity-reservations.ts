// Capacity reservation selector terms → DescribeCapacityReservations queries as Karpenter builds
// them (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/capacityreservation/): always `state=active`; an id term is its own query by
// `CapacityReservationIds`; a term with tags or match criteria adds `owner-id`, tag and
// `instance-match-criteria` filters.
import type { CapacityReservation } from '../facts/aws.js';
import type { FilterQuery } from '../ports/aws-facts.js';
import type { CapacityReservationSelectorTerm } from '../schema.js';
import { ec2WildcardMatches, matchesFilters, tagFilters, tagsMatchTerm } from './ec2-filter.js';

const ACTIVE = { name: 'state', values: ['active'] } as const;

export function capacityReservationQueries(
  terms: readonly CapacityReservationSelectorTerm[]
): FilterQuery[] {
  const queries: FilterQuery[] = [];
  for (const term of terms) {
    if (term.id) queries.push({ filters: [ACTIVE], ids: [term.id] });
    const tags = term.tags ?? {};
    if (Object.keys(tags).length > 0 || term.instanceMatchCriteria) {
      queries.push({
        filters: [
          ACTIVE,
          ...(term.ownerID ? [{ name: 'owner-id', values: [term.ownerID] }] : []),
          ...tagFilters(tags),
          ...(term.instanceMatchCriteria
            ? [{ name: 'instance-match-criteria', values: [term.instanceMatchCriteria] }]
            : []),
        ],
      });
    }
  }
  return queries;
}

function reservationAttribute(
  reservation: CapacityReservation,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'state':
      return [reservation.state];
    case 'owner-id':
      return [reservation.ownerId];
    case 'instance-match-criteria':
      return [reservation.instanceMatchCriteria];
    case 'instance-type':
      return [reservation.instanceType];
    case 'availability-zone':
      return [reservation.availabilityZone];
    default:
      return undefined;
  }
}

export function capacityReservationMatchesQuery(
  reservation: CapacityReservation,
  query: FilterQuery
): boolean {
  return (
    (query.ids === undefined || query.ids.includes(reservation.id)) &&
    matchesFilters('capacity reservations', query.filters, reservation.tags, (name) =>
      reservationAttribute(reservation, name)
    )
  );
}

/** Whether an active reservation is selected by one term (ignores state; see the queries). */
export function capacityReservationMatchesTerm(
  reservation: CapacityReservation,
  term: CapacityReservationSelectorTerm
): boolean {
  if (term.id && reservation.id === term.id) return true;
  const tags = term.tags ?? {};
  if (Object.keys(tags).length === 0 && !term.instanceMatchCriteria) return false;
  return (
    matchesOptional(term.ownerID, reservation.ownerId) &&
    matchesOptional(term.instanceMatchCriteria, reservation.instanceMatchCriteria) &&
    tagsMatchTerm(reservation.tags, tags)
  );
}

function matchesOptional(pattern: string | undefined, value: string | undefined): boolean {
  return !pattern || (value !== undefined && ec2WildcardMatches(pattern, value));
}
