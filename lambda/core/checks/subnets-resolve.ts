import { defineCheck, forEachNodeClass } from '../check.js';
import { list, withSubnets } from './support/aws-facts.js';

/** At least one subnet matches the subnetSelectorTerms. */
export const subnetsResolve = defineCheck({
  id: 'subnets-resolve',
  title: 'Subnet selector terms match at least one subnet',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    'Karpenter launches nodes only into subnets its subnetSelectorTerms match; with none it sets SubnetsReady=False (SubnetsNotFound), the EC2NodeClass is not Ready and no node launches.',
  remediation:
    "Fix spec.subnetSelectorTerms (tag keys and values are case-sensitive; ids must exist in this region) or tag the cluster's subnets.",
  references: ['https://karpenter.sh/docs/concepts/nodeclasses/#specsubnetselectorterms'],
  material: ['queries', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withSubnets(target, (facts) => {
        if (facts.subnets.length > 0) {
          return [
            {
              status: 'pass',
              resource,
              message: `${facts.subnets.length} subnet(s) match: ${list(facts.subnets.map((subnet) => subnet.id))}.`,
              evidence: { subnets: facts.subnets.map((subnet) => subnet.id) },
            },
          ];
        }
        return [
          {
            status: 'fail',
            resource,
            message:
              'No subnet matches spec.subnetSelectorTerms (Karpenter: SubnetsReady=False, SubnetsNotFound).',
            evidence: { queries: facts.queries },
            location: { path: 'spec.subnetSelectorTerms' },
          },
        ];
      });
    }),
});
