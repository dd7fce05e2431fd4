// IAM lookups for the IAM-event path: a changed managed policy → the roles it is attached to; a
// changed role → the instance profiles holding it (NodeClasses in instance-profile mode name the
// profile, not the role).
import {
  type IAMClient,
  ListEntitiesForPolicyCommand,
  ListInstanceProfilesForRoleCommand,
} from '@aws-sdk/client-iam';
import type { IamEntityReader } from '../../core/ports/service.js';
import { isNotFound, toSourceUnavailable } from './aws-errors.js';
import { collectPages } from './paginate.js';

export const iamEntitiesActions = [
  'iam:ListEntitiesForPolicy',
  'iam:ListInstanceProfilesForRole',
] as const;

export type IamEntitiesSender = Pick<IAMClient, 'send'>;

export function createIamEntityReader(iam: IamEntitiesSender): IamEntityReader {
  return {
    async rolesAttachedToPolicy(policyArn) {
      try {
        const roles = await collectPages(
          'iam:ListEntitiesForPolicy',
          (marker) =>
            iam.send(
              new ListEntitiesForPolicyCommand({
                PolicyArn: policyArn,
                EntityFilter: 'Role',
                ...(marker ? { Marker: marker } : {}),
              })
            ),
          (page) => page.PolicyRoles,
          (page) => (page.IsTruncated ? page.Marker : undefined)
        );
        return roles.flatMap((role) => (role.RoleName ? [role.RoleName] : []));
      } catch (error) {
        // A deleted policy is attached to nothing any more.
        if (isNotFound(error)) return [];
        throw toSourceUnavailable('iam:ListEntitiesForPolicy', error);
      }
    },

    async instanceProfilesForRole(roleName) {
      try {
        const profiles = await collectPages(
          'iam:ListInstanceProfilesForRole',
          (marker) =>
            iam.send(
              new ListInstanceProfilesForRoleCommand({
                RoleName: roleName,
                ...(marker ? { Marker: marker } : {}),
              })
            ),
          (page) => page.InstanceProfiles,
          (page) => (page.IsTruncated ? page.Marker : undefined)
        );
        return profiles.flatMap((profile) =>
          profile.InstanceProfileName ? [profile.InstanceProfileName] : []
        );
      } catch (error) {
        if (isNotFound(error)) return [];
        throw toSourceUnavailable('iam:ListInstanceProfilesForRole', error);
      }
    },
  };
}
