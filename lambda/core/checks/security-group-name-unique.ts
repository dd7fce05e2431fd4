import type { FindingDraft } from '../check.js';
import { defineCheck, forEachNodeClass } from '../check.js';
import { securityGroupMatchesTerm } from '../selectors/security-groups.js';
import { withSecurityGroups } from './support/aws-facts.js';

/** A `name` term matches groups of one VPC only (Karpenter's query has no VPC filter, #8175). */
export const securityGroupNameUnique = defineCheck({
  id: 'security-group-name-unique',
  title: 'Security group name terms match groups in one VPC only',
  group: 'aws',
  severity: 'medium',
  inputs: ['aws'],
  rationale:
    "Karpenter's query for a name term has no VPC filter, so same-named groups in other VPCs are matched and attached too. EC2 rejects launches whose groups are not in the subnet's VPC, and a group meant for other workloads can end up on your nodes.",
  remediation:
    'Select the security group by id or by a cluster-specific tag instead of by name: same-named groups in other VPCs are matched too.',
  references: ['#8175', '#8719'],
  material: ['groups[].id', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      const nameTerms = spec.securityGroupSelectorTerms
        .map((term, index) => ({ term, index }))
        .filter(({ term }) => !term.id && term.name);
      if (nameTerms.length === 0) {
        return [{ status: 'not-applicable', resource, message: 'No name term.' }];
      }
      return withSecurityGroups(target, (facts) =>
        nameTerms.map(({ term, index }): FindingDraft => {
          const path = `spec.securityGroupSelectorTerms[${index}].name`;
          const groups = facts.securityGroups.filter((group) =>
            securityGroupMatchesTerm(group, term)
          );
          const vpcs = [...new Set(groups.map((group) => group.vpcId ?? 'unknown'))];
          if (vpcs.length <= 1) {
            return {
              status: 'pass',
              resource,
              discriminator: path,
              message: `Name "${term.name}" matches ${groups.length} group(s)${vpcs[0] ? ` in ${vpcs[0]}` : ''}.`,
            };
          }
          return {
            status: 'fail',
            resource,
            discriminator: path,
            location: { path },
            message: `Name "${term.name}" matches groups in ${vpcs.length} VPCs (${groups.map((group) => `${group.id} in ${group.vpcId ?? 'unknown'}`).join(', ')}): Karpenter attaches all of them.`,
            evidence: {
              name: term.name,
              groups: groups.map((group) => ({ id: group.id, vpcId: group.vpcId })),
            },
          };
        })
      );
    }),
});
