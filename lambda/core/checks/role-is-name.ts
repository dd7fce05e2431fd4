import { defineCheck, forEachNodeClass } from '../check.js';
import { arnResource, bareIamName, isIamPathOrArn } from '../iam/arns.js';

/**
 * `spec.role` is a bare role name. Karpenter strips an ARN or path to its last segment when it
 * adds the role to the instance profile, but compares the raw string with the role IAM returns,
 * so an ARN or path never compares equal and the profile is replaced again and again (#8838).
 */
export const roleIsName = defineCheck({
  id: 'role-is-name',
  title: 'Node role is given as a name, not an ARN or path',
  group: 'spec',
  severity: 'medium',
  inputs: ['spec'],
  rationale:
    'Karpenter adds the role to the instance profile it manages by its bare name but compares spec.role verbatim with the name IAM returns; an ARN or path never matches, so it keeps creating new instance profiles. Orphaned profiles pile up until the account reaches its IAM instance profile quota and creation fails.',
  remediation: 'Set spec.role to the bare IAM role name (the last segment of the ARN).',
  references: ['https://karpenter.sh/docs/concepts/nodeclasses/#specrole', '#8838', '#5470'],
  material: ['role'],
  evaluate: (inventory) =>
    forEachNodeClass(inventory, ({ spec }, { resource }) => {
      const role = spec.role;
      if (role === undefined || role === '') {
        return [
          {
            status: 'not-applicable',
            resource,
            message:
              role === undefined
                ? 'Instance profile mode: spec.role is not set.'
                : 'spec.role is empty (reported by nodeclass-schema-valid).',
          },
        ];
      }
      const isArn = role.startsWith('arn:');
      if (!isIamPathOrArn(role)) {
        return [{ status: 'pass', resource, message: `Role "${role}" is a name.` }];
      }
      const name = bareIamName(role);
      // An instance-profile ARN in spec.role is a mix-up, not only a formatting problem.
      const resourceType = isArn ? arnResource(role).split('/')[0] : undefined;
      const mixUp =
        resourceType !== undefined && resourceType !== 'role'
          ? ` It names an IAM ${resourceType}, not a role.`
          : '';
      return [
        {
          status: 'fail',
          resource,
          message: `spec.role is "${role}", an ${isArn ? 'ARN' : 'IAM path'}: Karpenter compares it verbatim with the role name IAM returns and keeps re-creating the instance profile.${mixUp}`,
          remediation: `Set spec.role: ${name}`,
          evidence: {
            role,
            suggestedName: name,
            ...(resourceType === undefined ? {} : { arnResourceType: resourceType }),
          },
          location: { path: 'spec.role' },
        },
      ];
    }),
});
