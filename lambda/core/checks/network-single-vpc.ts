import { defineCheck, forEachNodeClass } from '../check.js';
import { awsFactsOf, list, unreadable } from './support/aws-facts.js';

/** Matched subnets and security groups share one VPC, the cluster's. */
export const networkSingleVpc = defineCheck({
  id: 'network-single-vpc',
  title: "Subnets and security groups are all in the cluster's VPC",
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  remediation:
    'Narrow spec.subnetSelectorTerms and spec.securityGroupSelectorTerms (ids or cluster-specific tags) so they only match the cluster VPC; Karpenter sends no VPC filter.',
  references: ['#8175', '#3007'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource, cluster } = target;
      const facts = awsFactsOf(target);
      if (facts.subnets?.status !== 'ok')
        return [unreadable(resource, 'subnets (DescribeSubnets)', facts.subnets)];
      if (facts.securityGroups?.status !== 'ok') {
        return [
          unreadable(resource, 'security groups (DescribeSecurityGroups)', facts.securityGroups),
        ];
      }
      const members = [
        ...facts.subnets.value.subnets.map((subnet) => ({ id: subnet.id, vpcId: subnet.vpcId })),
        ...facts.securityGroups.value.securityGroups.map((group) => ({
          id: group.id,
          vpcId: group.vpcId,
        })),
      ];
      if (members.length === 0) {
        return [
          { status: 'not-applicable', resource, message: 'No subnet or security group matches.' },
        ];
      }
      const byVpc = new Map<string, string[]>();
      for (const member of members) {
        const vpc = member.vpcId ?? 'unknown';
        byVpc.set(vpc, [...(byVpc.get(vpc) ?? []), member.id]);
      }
      const evidence = { vpcs: Object.fromEntries(byVpc) };
      if (byVpc.size > 1) {
        return [
          {
            status: 'fail',
            resource,
            message: `Subnets and security groups span ${byVpc.size} VPCs: ${[...byVpc].map(([vpc, ids]) => `${vpc} (${list(ids, 3)})`).join('; ')}. Launches fail with SecurityGroupSubnetVPCMismatch.`,
            evidence,
          },
        ];
      }
      const [vpc] = [...byVpc.keys()];
      if (cluster.aws?.status === 'unavailable') {
        return [unreadable(resource, 'the cluster VPC (DescribeCluster)', cluster.aws)];
      }
      const clusterVpc = cluster.aws?.value.vpcId;
      if (clusterVpc !== undefined && clusterVpc !== vpc) {
        return [
          {
            status: 'fail',
            resource,
            message: `Subnets and security groups are in ${vpc}, not in the cluster's VPC ${clusterVpc}: nodes cannot reach the control plane.`,
            evidence: { ...evidence, clusterVpc },
          },
        ];
      }
      return [
        {
          status: 'pass',
          resource,
          message:
            clusterVpc === undefined
              ? `All subnets and security groups are in ${vpc} (cluster VPC not known, not compared).`
              : `All subnets and security groups are in the cluster VPC ${vpc}.`,
          evidence,
        },
      ];
    }),
});
