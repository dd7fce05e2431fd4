import { defineCheck } from '../check.js';
import { PERMISSION_MATERIAL, permissionCheckDrafts } from '../iam/permission-check.js';

/** Role mode: the controller may create, tag, fill and clean up the instance profiles it manages. */
export const controllerCanManageInstanceProfile = defineCheck({
  id: 'controller-can-manage-instance-profile',
  title: 'Controller can manage instance profiles (role mode)',
  group: 'aws',
  severity: 'high',
  inputs: ['permissions'],
  rationale:
    'In role mode Karpenter creates and tags the instance profile, adds the role to it and deletes it when it is no longer used. If its policy denies these calls, InstanceProfileReady stays False and the class launches nothing, or unused profiles are left behind.',
  remediation:
    "Allow the instance-profile actions of Karpenter's reference policy (AllowScopedInstanceProfile*, AllowInstanceProfileReadActions, AllowUnscopedInstanceProfileListAction).",
  references: [
    'https://karpenter.sh/docs/concepts/nodeclasses/#specrole',
    'https://karpenter.sh/docs/reference/cloudformation/',
    '#8838',
  ],
  material: PERMISSION_MATERIAL,
  evaluate: (inventory) =>
    permissionCheckDrafts(inventory, {
      group: 'manage-instance-profile',
      subject: 'Managing the instance profile (iam:CreateInstanceProfile…)',
      notApplicable: (nodeClass) =>
        nodeClass.spec.instanceProfile === undefined
          ? undefined
          : 'instanceProfile mode: Karpenter makes no instance-profile calls.',
    }),
});
