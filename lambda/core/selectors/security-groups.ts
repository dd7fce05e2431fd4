// Security group selector terms → DescribeSecurityGroups queries as Karpenter builds them
// (https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/providers/securitygroup/securitygroup.go): one query per tag term, ids batched into one `group-id` filter,
// names into one `group-name` filter, and no VPC filter (#8175).
import type { SecurityGroup } from '../facts/aws.js';
import type { FilterQuery } from '../ports/aws-facts.js';
import type { SecurityGroupSelectorTerm } from '../schema.js';
import { ec2WildcardMatches, matchesFilters, tagFilters, tagsMatchTerm } from './ec2-filter.js';

export function securityGroupQueries(terms: readonly SecurityGroupSelectorTerm[]): FilterQuery[] {
  const queries: FilterQuery[] = [];
  const ids: string[] = [];
  const names: string[] = [];
  for (const term of terms) {
    if (term.id) ids.push(term.id);
    else if (term.name) names.push(term.name);
    else queries.push({ filters: tagFilters(term.tags) });
  }
  if (ids.length > 0) queries.push({ filters: [{ name: 'group-id', values: ids }] });
  if (names.length > 0) queries.push({ filters: [{ name: 'group-name', values: names }] });
  return queries;
}

function groupAttribute(
  group: SecurityGroup,
  name: string
): readonly (string | undefined)[] | undefined {
  switch (name) {
    case 'group-id':
      return [group.id];
    case 'group-name':
      return [group.name];
    case 'vpc-id':
      return [group.vpcId];
    default:
      return undefined;
  }
}

export function securityGroupMatchesQuery(group: SecurityGroup, query: FilterQuery): boolean {
  return (
    (query.ids === undefined || query.ids.includes(group.id)) &&
    matchesFilters('security groups', query.filters, group.tags, (name) =>
      groupAttribute(group, name)
    )
  );
}

export function securityGroupMatchesTerm(
  group: SecurityGroup,
  term: SecurityGroupSelectorTerm
): boolean {
  if (term.id) return ec2WildcardMatches(term.id, group.id);
  if (term.name) return group.name !== undefined && ec2WildcardMatches(term.name, group.name);
  return tagsMatchTerm(group.tags, term.tags);
}
