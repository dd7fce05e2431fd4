import { defineCheck, forEachNodeClass } from '../check.js';
import { awsFactsOf, withSlice } from './support/aws-facts.js';

/** `spec.instanceProfile` exists and holds a role (Karpenter never checks: #9390 is main-only). */
export const instanceProfileExists = defineCheck({
  id: 'instance-profile-exists',
  title: 'The instance profile exists and holds a role',
  group: 'aws',
  severity: 'critical',
  inputs: ['aws'],
  rationale:
    'In instanceProfile mode Karpenter makes no IAM call and reports InstanceProfileReady=True whatever the profile is. If it does not exist, EC2 rejects every launch; if it holds no role, nodes boot without credentials and never join the cluster.',
  remediation:
    'Create the instance profile and add the node role to it (aws iam create-instance-profile / add-role-to-instance-profile), or switch to spec.role.',
  references: [
    '#9390',
    '#8538',
    'https://karpenter.sh/docs/concepts/nodeclasses/#specinstanceprofile',
  ],
  material: ['instanceProfile', 'cause', 'reason'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, target) => {
      const { resource } = target;
      if (spec.instanceProfile === undefined) {
        return [
          {
            status: 'not-applicable',
            resource,
            message: 'Role mode: Karpenter manages the instance profile.',
          },
        ];
      }
      const location = { path: 'spec.instanceProfile' };
      return withSlice(
        resource,
        'the instance profile (iam:GetInstanceProfile)',
        awsFactsOf(target).instanceProfile,
        ({ name, profile }) => {
          if (profile === undefined) {
            return [
              {
                status: 'fail',
                resource,
                message: `Instance profile "${name}" does not exist: Karpenter reports InstanceProfileReady=True and every launch fails.`,
                evidence: { instanceProfile: name, cause: 'not-found' },
                location,
              },
            ];
          }
          if (profile.roleNames.length === 0) {
            return [
              {
                status: 'fail',
                resource,
                message: `Instance profile "${name}" holds no role: nodes start without credentials and never join.`,
                remediation: `aws iam add-role-to-instance-profile --instance-profile-name ${name} --role-name <node role>`,
                evidence: { instanceProfile: name, cause: 'no-role', arn: profile.arn },
                location,
              },
            ];
          }
          return [
            {
              status: 'pass',
              resource,
              message: `Instance profile "${name}" exists with role ${profile.roleNames.join(', ')}.`,
              evidence: { arn: profile.arn, roles: profile.roleNames },
            },
          ];
        }
      );
    }),
});
