import {
  IAMClient,
  ListEntitiesForPolicyCommand,
  ListInstanceProfilesForRoleCommand,
} from '@aws-sdk/client-iam';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createIamEntityReader } from '../../../lambda/adapters/aws/iam-entities.js';

const iam = mockClient(IAMClient);
const reader = createIamEntityReader(new IAMClient({}));
const POLICY = 'arn:aws:iam::111122223333:policy/karpenter-node-extra';
const noSuchEntity = Object.assign(new Error('not found'), { name: 'NoSuchEntityException' });

beforeEach(() => {
  iam.reset();
});

describe('createIamEntityReader', () => {
  it('lists the roles a policy is attached to, following Marker pages', async () => {
    iam
      .on(ListEntitiesForPolicyCommand)
      .resolvesOnce({ PolicyRoles: [{ RoleName: 'A' }], IsTruncated: true, Marker: 'p2' })
      .resolves({ PolicyRoles: [{ RoleName: 'B' }], IsTruncated: false });
    expect(await reader.rolesAttachedToPolicy(POLICY)).toEqual(['A', 'B']);
    expect(iam.commandCalls(ListEntitiesForPolicyCommand).map((c) => c.args[0].input)).toEqual([
      { PolicyArn: POLICY, EntityFilter: 'Role' },
      { PolicyArn: POLICY, EntityFilter: 'Role', Marker: 'p2' },
    ]);
  });

  it('lists the instance profiles of a role; none when the role is gone', async () => {
    iam
      .on(ListInstanceProfilesForRoleCommand, { RoleName: 'KarpenterNodeRole-prod' })
      .resolves({ InstanceProfiles: [{ InstanceProfileName: 'Profile-prod' } as never] })
      .on(ListInstanceProfilesForRoleCommand, { RoleName: 'Deleted' })
      .rejects(noSuchEntity);
    expect(await reader.instanceProfilesForRole('KarpenterNodeRole-prod')).toEqual([
      'Profile-prod',
    ]);
    expect(await reader.instanceProfilesForRole('Deleted')).toEqual([]);
  });

  it('classifies access denied as a SourceUnavailableError naming the action', async () => {
    iam
      .on(ListEntitiesForPolicyCommand)
      .rejects(Object.assign(new Error('no'), { name: 'AccessDenied' }));
    await expect(reader.rolesAttachedToPolicy(POLICY)).rejects.toMatchObject({
      reason: 'access-denied',
      source: 'iam:ListEntitiesForPolicy',
    });
  });
});
