import { defineCheck, forEachNodeClass } from '../check.js';
import { list, withSubnets } from './support/aws-facts.js';

/** Below this many free addresses a subnet is reported (Karpenter itself never checks, #5234). */
const FREE_IP_THRESHOLD = 16;

/** Every matched subnet has free IP addresses to spare. */
export const subnetsHaveFreeIps = defineCheck({
  id: 'subnets-have-free-ips',
  title: 'Matched subnets have free IP addresses',
  group: 'aws',
  severity: 'medium',
  inputs: ['aws'],
  rationale:
    'Every node, and with the VPC CNI each of its pods, takes an address from its subnet. Karpenter does not check free addresses when it picks a subnet, so launches into an exhausted subnet fail with InsufficientFreeAddressesInSubnet and pods stay Pending.',
  remediation:
    'Add larger subnets (or a secondary CIDR) to spec.subnetSelectorTerms, or free addresses in the exhausted ones; consider prefix delegation sizing.',
  references: ['#5234', '#2921'],
  material: ['subnets[].id', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource } = target;
      return withSubnets(target, (facts) => {
        if (facts.subnets.length === 0) {
          return [
            {
              status: 'not-applicable',
              resource,
              message: 'No subnet matches (see subnets-resolve).',
            },
          ];
        }
        const low = facts.subnets.filter(
          (subnet) =>
            subnet.availableIpAddressCount !== undefined &&
            subnet.availableIpAddressCount < FREE_IP_THRESHOLD
        );
        if (low.length === 0) {
          return [
            {
              status: 'pass',
              resource,
              message: `Every matched subnet has at least ${FREE_IP_THRESHOLD} free IP addresses.`,
            },
          ];
        }
        const all = low.length === facts.subnets.length;
        const exhausted = all && low.every((subnet) => subnet.availableIpAddressCount === 0);
        const consequence = !all
          ? ''
          : exhausted
            ? ' Launches fail with InsufficientFreeAddressesInSubnet.'
            : ' Launches will fail with InsufficientFreeAddressesInSubnet once the last addresses are used.';
        return [
          {
            status: 'fail',
            resource,
            severity: all ? 'high' : 'medium',
            message: `${all ? 'All' : `${low.length} of ${facts.subnets.length}`} matched subnet(s) have fewer than ${FREE_IP_THRESHOLD} free IP addresses: ${list(low.map((subnet) => `${subnet.id} (${subnet.availableIpAddressCount})`))}.${consequence}`,
            evidence: {
              threshold: FREE_IP_THRESHOLD,
              subnets: low.map((subnet) => ({
                id: subnet.id,
                free: subnet.availableIpAddressCount,
              })),
            },
          },
        ];
      });
    }),
});
