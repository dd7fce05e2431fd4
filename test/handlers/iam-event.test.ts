import {
  IAMClient,
  ListEntitiesForPolicyCommand,
  ListInstanceProfilesForRoleCommand,
} from '@aws-sdk/client-iam';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambda/handlers/iam-event.js';
import { aNodeClassObject } from '../support/builders.js';
import { type FakeTable, fakeDynamoDb } from '../support/fake-dynamodb.js';
import {
  capturingSns,
  earlierFindingItem,
  exampleEvent,
  objectsPlan,
  SERVICE_ENV,
} from '../support/handler-fixtures.js';
import { lambdaContext } from './lambda-context.js';

const CHECK = 'instance-profile-is-name';
const iam = mockClient(IAMClient);
let table: FakeTable;
let sns: ReturnType<typeof capturingSns>;

const world = new Map([
  [
    'prod',
    [
      aNodeClassObject({
        name: 'profile-mode',
        spec: {
          role: undefined,
          instanceProfile:
            'arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod',
        },
      }),
      aNodeClassObject({
        name: 'unrelated',
        spec: {
          role: undefined,
          instanceProfile: 'arn:aws:iam::111122223333:instance-profile/Other',
        },
      }),
    ],
  ],
]);

beforeEach(() => {
  iam.reset();
  iam.on(ListEntitiesForPolicyCommand).resolves({ PolicyRoles: [], IsTruncated: false });
  iam.on(ListInstanceProfilesForRoleCommand, { RoleName: 'KarpenterNodeRole-prod' }).resolves({
    InstanceProfiles: [{ InstanceProfileName: 'KarpenterNodeInstanceProfile-prod' } as never],
  });
  table = fakeDynamoDb();
  sns = capturingSns();
  for (const [name, profile] of [
    [
      'profile-mode',
      'arn:aws:iam::111122223333:instance-profile/KarpenterNodeInstanceProfile-prod',
    ],
    ['unrelated', 'arn:aws:iam::111122223333:instance-profile/Other'],
  ] as const) {
    table.items.set(`NODECLASS|prod#${name}`, {
      pk: 'NODECLASS',
      sk: `prod#${name}`,
      cluster: 'prod',
      name,
      amiSelectorTerms: [],
      resolvedAmiIds: [],
      instanceProfile: profile,
    });
  } // prod was scanned before: its changes go out one message each.
  const earlier = earlierFindingItem('prod');
  table.items.set(`${earlier.pk}|${earlier.sk}`, earlier);
});

describe('iam-event handler', () => {
  it('maps AttachRolePolicy to the role, its instance profile and the NodeClass using it', async () => {
    // Act
    const outcome = await createHandler({ env: SERVICE_ENV, planFor: objectsPlan(world) })(
      exampleEvent('iam-attach-role-policy.json'),
      lambdaContext()
    );
    // Assess
    expect(outcome).toMatchObject({
      status: 'scanned',
      nodeClasses: [{ cluster: 'prod', name: 'profile-mode' }],
    });
    expect(iam.commandCalls(ListEntitiesForPolicyCommand)[0]?.args[0].input).toEqual({
      PolicyArn: 'arn:aws:iam::111122223333:policy/karpenter-node-extra',
      EntityFilter: 'Role',
    });
    expect(iam.commandCalls(ListInstanceProfilesForRoleCommand)[0]?.args[0].input).toEqual({
      RoleName: 'KarpenterNodeRole-prod',
    });
    const findings = sns.published().filter((m) => m.attributes.checkId === CHECK);
    expect(
      findings.map((m) => [m.attributes.change, JSON.parse(m.bodies.default).finding.resource.name])
    ).toEqual([['new', 'profile-mode']]);
    expect(table.findings().map((item) => item.resourceName)).not.toContain('unrelated');
  });

  it('drops a failed IAM call (errorCode) without lookups or messages', async () => {
    const event = exampleEvent<{ detail: Record<string, unknown> }>('iam-put-role-policy.json');
    const outcome = await createHandler({ env: SERVICE_ENV, planFor: objectsPlan(world) })(
      { ...event, detail: { ...event.detail, errorCode: 'AccessDenied' } },
      lambdaContext()
    );
    expect(outcome).toEqual({ status: 'ignored', reason: 'iam-call-failed' });
    expect(iam.calls()).toHaveLength(0);
    expect(sns.published()).toEqual([]);
  });
});
