import { defineCheck, forEachNodeClass } from '../check.js';
import { awsFactsOf, list, SECURITY_GROUPS, SUBNETS, unreadable } from './support/aws-facts.js';

/** Matched subnets and security groups share one VPC, the cluster's. */
export const networkSingleVpc = defineCheck({
  id: 'network-single-vpc',
  title: "Subnets and security groups are all in the cluster's VPC",
  group: 'aws',
  severity: 'high',
  inputs: ['aws'],
  rationale:
    "Karpenter sends no VPC filter when it resolves subnets and security groups, so selectors can match resources of several VPCs. EC2 rejects a launch that mixes them (SecurityGroupSubnetVPCMismatch), and resources outside the cluster's VPC put nodes in a network that is not the cluster's, such as another cluster's VPC.",
  remediation:
    'Narrow spec.subnetSelectorTerms and spec.securityGroupSelectorTerms (ids or cluster-specific tags) so they only match the cluster VPC; Karpenter sends no VPC filter.',
  references: ['#8175', '#3007'],
  material: ['vpcs', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, (_nodeClass, target) => {
      const { resource, cluster } = target;
      const facts = awsFactsOf(target);
      if (facts.subnets?.status !== 'ok') return [unreadable(resource, SUBNETS, facts.subnets)];
      if (facts.securityGroups?.status !== 'ok') {
        return [unreadable(resource, SECURITY_GROUPS, facts.securityGroups)];
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
      // A missing VpcId proves no mismatch: compare what is known and say what was not.
      const byVpc = new Map<string, string[]>();
      const vpcUnknown: string[] = [];
      for (const member of members) {
        if (member.vpcId === undefined) vpcUnknown.push(member.id);
        else byVpc.set(member.vpcId, [...(byVpc.get(member.vpcId) ?? []), member.id]);
      }
      const unknownNote =
        vpcUnknown.length > 0 ? ` (VPC not reported for ${list(vpcUnknown, 3)})` : '';
      const evidence = {
        vpcs: Object.fromEntries(byVpc),
        ...(vpcUnknown.length > 0 ? { vpcUnknown } : {}),
      };
      if (byVpc.size === 0) {
        return [
          {
            status: 'error',
            resource,
            message: `Not evaluated: no matched subnet or security group reported its VPC${unknownNote}.`,
            evidence,
          },
        ];
      }
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
            message: `Subnets and security groups are in ${vpc}, not in the cluster's VPC ${clusterVpc}: nodes would launch outside the cluster's network (for example in another cluster's VPC, #3007).${unknownNote}`,
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
              ? `All subnets and security groups are in ${vpc} (cluster VPC not known, not compared)${unknownNote}.`
              : `All subnets and security groups are in the cluster VPC ${vpc}${unknownNote}.`,
          evidence,
        },
      ];
    }),
});
