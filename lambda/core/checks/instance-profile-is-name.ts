import { defineCheck, forEachNodeClass } from '../check.js';
import { bareIamName, isIamPathOrArn } from '../iam/arns.js';

/** `spec.instanceProfile` is a bare instance profile name (Karpenter passes it verbatim as `IamInstanceProfile.Name`). */
export const instanceProfileIsName = defineCheck({
  id: 'instance-profile-is-name',
  title: 'Instance profile is given as a name, not an ARN or path',
  group: 'spec',
  severity: 'critical',
  inputs: ['spec'],
  rationale:
    'Karpenter passes spec.instanceProfile to EC2 as a name; an ARN or path passes the CRD and Karpenter reports InstanceProfileReady=True, but every RunInstances/CreateFleet call is rejected, so no node launches.',
  remediation:
    'Set spec.instanceProfile to the bare instance profile name (the last segment of the ARN).',
  references: ['#8072', '#8312', '#5470'],
  material: ['instanceProfile'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const profile = spec.instanceProfile;
      if (profile === undefined) {
        return [
          {
            status: 'not-applicable',
            resource,
            message: 'Role mode: Karpenter manages the instance profile.',
          },
        ];
      }
      if (!isIamPathOrArn(profile)) {
        return [{ status: 'pass', resource, message: `Instance profile "${profile}" is a name.` }];
      }
      const name = bareIamName(profile);
      return [
        {
          status: 'fail',
          resource,
          message: `spec.instanceProfile is "${profile}", an ${profile.startsWith('arn:') ? 'ARN' : 'IAM path'}: Karpenter reports InstanceProfileReady=True but every launch fails.`,
          remediation: `Set spec.instanceProfile: ${name}`,
          evidence: { instanceProfile: profile, suggestedName: name },
          location: { path: 'spec.instanceProfile' },
        },
      ];
    }),
});
