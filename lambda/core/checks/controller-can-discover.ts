import { defineCheck } from '../check.js';
import { PERMISSION_MATERIAL, permissionCheckDrafts } from '../iam/permission-check.js';

/** The controller may read what it resolves the class from (EC2 Describe*, SSM parameters, the cluster). */
export const controllerCanDiscover = defineCheck({
  id: 'controller-can-discover',
  title: 'Controller can discover images, subnets, security groups and the cluster',
  group: 'aws',
  severity: 'high',
  inputs: ['permissions'],
  rationale:
    'Karpenter resolves images, subnets, security groups and instance types with ec2:Describe*, aliases and ssmParameter terms with ssm:GetParameter, and the cluster endpoint with eks:DescribeCluster. When one is denied, Karpenter cannot resolve what the class names: its readiness conditions fail and it launches no nodes.',
  remediation:
    "Allow Karpenter's read actions: AllowRegionalReadActions (ec2:Describe*), AllowSSMReadActions (ssm:GetParameter, plus any custom parameter) and AllowAPIServerEndpointDiscovery (eks:DescribeCluster).",
  references: ['https://karpenter.sh/docs/reference/cloudformation/'],
  material: PERMISSION_MATERIAL,
  evaluate: (inventory) =>
    permissionCheckDrafts(inventory, {
      group: 'discover',
      subject: 'Discovery (ec2:Describe*, ssm:GetParameter, eks:DescribeCluster)',
    }),
});
