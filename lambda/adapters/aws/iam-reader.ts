import {
  GetInstanceProfileCommand,
  GetRoleCommand,
  type IAMClient,
  type Role as IamRole,
  ListAttachedRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import type { InstanceProfile, Role } from '../../core/facts/aws.js';
import { isNotFound, toSourceUnavailable } from './aws-errors.js';
import { AWS_FACT_ACTIONS } from './fact-descriptors.js';
import { collectPages } from './paginate.js';
import { instanceProfileFromSdk, roleFromSdk } from './sdk-shapes.js';

export const iamReaderActions = [
  ...AWS_FACT_ACTIONS.getInstanceProfile,
  ...AWS_FACT_ACTIONS.getRole,
] as const;

export type IamSender = Pick<IAMClient, 'send'>;

export function createIamReader(iam: IamSender) {
  return {
    /** undefined for NoSuchEntity. */
    async getInstanceProfile(name: string): Promise<InstanceProfile | undefined> {
      try {
        const response = await iam.send(
          new GetInstanceProfileCommand({ InstanceProfileName: name })
        );
        return response.InstanceProfile
          ? instanceProfileFromSdk(response.InstanceProfile)
          : undefined;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw toSourceUnavailable('iam:GetInstanceProfile', error);
      }
    },

    /** GetRole + ListAttachedRolePolicies (all pages); undefined for NoSuchEntity. */
    async getRole(name: string): Promise<Role | undefined> {
      let role: IamRole | undefined;
      try {
        role = (await iam.send(new GetRoleCommand({ RoleName: name }))).Role;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw toSourceUnavailable('iam:GetRole', error);
      }
      if (!role) return undefined;
      try {
        const attached = await collectPages(
          (marker) =>
            iam.send(
              new ListAttachedRolePoliciesCommand({
                RoleName: name,
                ...(marker === undefined ? {} : { Marker: marker }),
              })
            ),
          (page) => page.AttachedPolicies,
          (page) => (page.IsTruncated ? page.Marker : undefined)
        );
        return roleFromSdk(role, attached);
      } catch (error) {
        // Deleted between the two calls: the role is gone.
        if (isNotFound(error)) return undefined;
        throw toSourceUnavailable('iam:ListAttachedRolePolicies', error);
      }
    },
  };
}
