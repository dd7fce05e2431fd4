// Subnet selector terms → DescribeSubnets queries exactly as Karpenter builds them
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/subnet/subnet.go): one query per tag term, id terms batched into one `subnet-id`
// filter, no VPC or state filter.
import type { Ec2Filter, Subnet } from '../facts/aws.js';
import type { FilterQuery } from '../ports/aws-facts.js';
import type { SubnetSelectorTerm } from '../schema.js';
import { ec2WildcardMatches, matchesFilters, tagFilters, tagsMatchTerm } from './ec2-filter.js';

export function subnetQueries(terms: readonly SubnetSelectorTerm[]): FilterQuery[] {
  const queries: FilterQuery[] = [];
  const ids: string[] = [];
  for (const term of terms) {
    if (term.id) ids.push(term.id);
    else queries.push({ filters: tagFilters(term.tags) });
  }
  if (ids.length > 0) queries.push({ filters: [{ name: 'subnet-id', values: ids }] });
  return queries;
}

function subnetAttribute(
  subnet: Subnet,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'subnet-id':
      return [subnet.id];
    case 'vpc-id':
      return [subnet.vpcId];
    case 'availability-zone':
      return [subnet.availabilityZone];
    case 'availability-zone-id':
      return [subnet.availabilityZoneId];
    default:
      return undefined;
  }
}

/** DescribeSubnets filter semantics for one subnet (used by the offline adapter). */
export function subnetMatchesQuery(subnet: Subnet, query: FilterQuery): boolean {
  const filters: readonly Ec2Filter[] = query.filters;
  return (
    (query.ids === undefined || query.ids.includes(subnet.id)) &&
    matchesFilters('subnets', filters, subnet.tags, (name) => subnetAttribute(subnet, name))
  );
}

export function subnetMatchesTerm(subnet: Subnet, term: SubnetSelectorTerm): boolean {
  if (term.id) return ec2WildcardMatches(term.id, subnet.id);
  return tagsMatchTerm(subnet.tags, term.tags);
}

/** Karpenter's status order: most free IPs first, then id. */
export function sortSubnets(subnets: readonly Subnet[]): Subnet[] {
  return [...subnets].sort(
    (a, b) =>
      (b.availableIpAddressCount ?? 0) - (a.availableIpAddressCount ?? 0) ||
      a.id.localeCompare(b.id)
  );
}
