import { defineCheck } from '../check.js';
import { PERMISSION_MATERIAL, permissionCheckDrafts } from '../iam/permission-check.js';

/** The controller may pass the class' node role to EC2 (`iam:PassRole`, `iam:PassedToService=ec2`). */
export const controllerCanPassNodeRole = defineCheck({
  id: 'controller-can-pass-node-role',
  title: 'Controller can pass the node role to EC2',
  group: 'aws',
  severity: 'critical',
  inputs: ['permissions'],
  rationale:
    "Launching an instance with an instance profile requires iam:PassRole on the profile's role for ec2.amazonaws.com. Without it EC2 rejects every CreateFleet and RunInstances call Karpenter makes for the class, and no node launches.",
  remediation:
    "Allow iam:PassRole on the node role with iam:PassedToService ec2.amazonaws.com in the controller's policy (AllowPassingInstanceRole).",
  references: ['#7953', '#5444', 'https://karpenter.sh/docs/reference/cloudformation/'],
  material: PERMISSION_MATERIAL,
  evaluate: (inventory) =>
    permissionCheckDrafts(inventory, {
      group: 'pass-node-role',
      subject: 'Passing the node role to EC2 (iam:PassRole)',
    }),
});
