import { defineCheck, forEachNodeClass } from '../check.js';
import { list, withSecurityGroups } from './support/aws-facts.js';

/** At least one security group matches the securityGroupSelectorTerms. */
export const securityGroupsResolve = defineCheck({
  id: 'security-groups-resolve',
  title: 'Security group selector terms match at least one group',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    'Karpenter attaches only the security groups its securityGroupSelectorTerms match; with none it sets SecurityGroupsReady=False (SecurityGroupsNotFound), the EC2NodeClass is not Ready and no node launches.',
  remediation:
    'Fix spec.securityGroupSelectorTerms (name matches the GroupName, not the Name tag; tags are case-sensitive) or tag the node security group.',
  references: ['https://karpenter.sh/docs/concepts/nodeclasses/#specsecuritygroupselectorterms'],
  material: ['queries', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withSecurityGroups(target, (facts) => {
        if (facts.securityGroups.length > 0) {
          return [
            {
              status: 'pass',
              resource,
              message: `${facts.securityGroups.length} security group(s) match: ${list(facts.securityGroups.map((group) => group.id))}.`,
              evidence: { securityGroups: facts.securityGroups.map((group) => group.id) },
            },
          ];
        }
        return [
          {
            status: 'fail',
            resource,
            message:
              'No security group matches spec.securityGroupSelectorTerms (Karpenter: SecurityGroupsReady=False, SecurityGroupsNotFound).',
            evidence: { queries: facts.queries },
            location: { path: 'spec.securityGroupSelectorTerms' },
          },
        ];
      });
    }),
});
