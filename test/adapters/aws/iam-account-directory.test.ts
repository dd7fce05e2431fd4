import {
  GetAccountAuthorizationDetailsCommand,
  GetInstanceProfileCommand,
  GetPolicyCommand,
  GetPolicyVersionCommand,
  GetRoleCommand,
  GetRolePolicyCommand,
  IAMClient,
  IAMServiceException,
  ListAttachedRolePoliciesCommand,
  ListRolePoliciesCommand,
} from '@aws-sdk/client-iam';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import {
  accountDirectorySender,
  createIamAccountDirectory,
  withAccountDirectory,
} from '../../../lambda/adapters/aws/iam-account-directory.js';
import { createIamRolePolicyReader } from '../../../lambda/adapters/aws/iam-simulator.js';

const iamMock = mockClient(IAMClient);
const ACCOUNT = '111122223333';
const NODE_ROLE = 'KarpenterNodeRole-demo';
const CONTROLLER_ROLE = 'KarpenterControllerRole-demo';
const CONTROLLER_POLICY = `arn:aws:iam::${ACCOUNT}:policy/KarpenterControllerPolicy-demo`;
const AWS_POLICY = 'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy';
const trust = JSON.stringify({
  Version: '2012-10-17',
  Statement: [
    { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
  ],
});
const inline = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'ec2:Describe*', Resource: '*' }],
});
const managed = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'iam:PassRole', Resource: '*' }],
});

const roleArn = (name: string) => `arn:aws:iam::${ACCOUNT}:role/${name}`;

/** Two pages: the node role with its profile, then the controller role and its policy. */
function mockTwoPages() {
  iamMock
    .on(GetAccountAuthorizationDetailsCommand, { Marker: undefined })
    .resolves({
      RoleDetailList: [
        {
          RoleName: NODE_ROLE,
          Arn: roleArn(NODE_ROLE),
          Path: '/',
          AssumeRolePolicyDocument: encodeURIComponent(trust),
          AttachedManagedPolicies: [
            { PolicyName: 'AmazonEKSWorkerNodePolicy', PolicyArn: AWS_POLICY },
          ],
          InstanceProfileList: [
            {
              InstanceProfileName: 'demo-nodes',
              Arn: `arn:aws:iam::${ACCOUNT}:instance-profile/demo-nodes`,
              Path: '/',
              InstanceProfileId: 'AIPA1',
              CreateDate: new Date(0),
              Roles: [
                {
                  RoleName: NODE_ROLE,
                  Arn: roleArn(NODE_ROLE),
                  Path: '/',
                  RoleId: 'AROA1',
                  CreateDate: new Date(0),
                },
              ],
            },
          ],
        },
      ],
      IsTruncated: true,
      Marker: 'page-2',
    })
    .on(GetAccountAuthorizationDetailsCommand, { Marker: 'page-2' })
    .resolves({
      RoleDetailList: [
        {
          RoleName: CONTROLLER_ROLE,
          Arn: roleArn(CONTROLLER_ROLE),
          Path: '/',
          RolePolicyList: [{ PolicyName: 'describe', PolicyDocument: encodeURIComponent(inline) }],
          AttachedManagedPolicies: [
            { PolicyName: 'KarpenterControllerPolicy-demo', PolicyArn: CONTROLLER_POLICY },
          ],
        },
      ],
      Policies: [
        {
          Arn: CONTROLLER_POLICY,
          PolicyName: 'KarpenterControllerPolicy-demo',
          DefaultVersionId: 'v2',
          PolicyVersionList: [
            { VersionId: 'v1', IsDefaultVersion: false, Document: encodeURIComponent('{}') },
            { VersionId: 'v2', IsDefaultVersion: true, Document: encodeURIComponent(managed) },
          ],
        },
      ],
      IsTruncated: false,
    });
}

function callsOf(command: Parameters<typeof iamMock.commandCalls>[0]) {
  return iamMock.commandCalls(command).length;
}

describe('IAM account directory', () => {
  beforeEach(() => {
    iamMock.reset();
  });

  it('reads every page once and answers roles and instance profiles without per-entity reads', async () => {
    // Prepare
    mockTwoPages();
    const iam = new IAMClient({ region: 'us-east-1' });
    const directory = createIamAccountDirectory(iam);
    const facts = withAccountDirectory(
      createLiveAwsFacts({ ec2: iam as never, ssm: iam as never, iam }),
      directory
    );

    // Act
    const [nodeRole, profile] = await Promise.all([
      facts.getRole(NODE_ROLE),
      facts.getInstanceProfile('demo-nodes'),
    ]);

    // Assess
    expect(nodeRole).toEqual({
      name: NODE_ROLE,
      arn: roleArn(NODE_ROLE),
      path: '/',
      assumeRolePolicyDocument: trust,
      attachedPolicyArns: [AWS_POLICY],
    });
    expect(profile).toEqual({
      name: 'demo-nodes',
      arn: `arn:aws:iam::${ACCOUNT}:instance-profile/demo-nodes`,
      path: '/',
      roleNames: [NODE_ROLE],
    });
    expect(
      iamMock.commandCalls(GetAccountAuthorizationDetailsCommand).map((c) => c.args[0].input)
    ).toEqual([
      { Filter: ['Role', 'LocalManagedPolicy'], MaxItems: 1000 },
      { Filter: ['Role', 'LocalManagedPolicy'], MaxItems: 1000, Marker: 'page-2' },
    ]);
    expect(callsOf(GetRoleCommand) + callsOf(GetInstanceProfileCommand)).toBe(0);
    expect(callsOf(ListAttachedRolePoliciesCommand)).toBe(0);
  });

  it('gives the policy reader inline and customer managed documents, and sends AWS managed reads', async () => {
    // Prepare
    mockTwoPages();
    iamMock.on(GetPolicyCommand).resolves({ Policy: { Arn: AWS_POLICY, DefaultVersionId: 'v9' } });
    iamMock.on(GetPolicyVersionCommand).resolves({
      PolicyVersion: { VersionId: 'v9', Document: encodeURIComponent(managed) },
    });
    const iam = new IAMClient({ region: 'us-east-1' });
    const reader = createIamRolePolicyReader(
      accountDirectorySender(iam, createIamAccountDirectory(iam))
    );

    // Act
    const controller = await reader.policySet?.(roleArn(CONTROLLER_ROLE));
    const node = await reader.policySet?.(roleArn(NODE_ROLE));

    // Assess
    expect(controller).toEqual({
      identity: [inline, managed],
      identityNames: ['describe', 'KarpenterControllerPolicy-demo'],
    });
    expect(node?.identity).toEqual([managed]);
    // Only the AWS managed policy, which the directory does not hold, was read per entity.
    expect(iamMock.commandCalls(GetPolicyCommand).map((c) => c.args[0].input)).toEqual([
      { PolicyArn: AWS_POLICY },
    ]);
    expect(callsOf(GetRoleCommand) + callsOf(ListRolePoliciesCommand)).toBe(0);
    expect(callsOf(GetRolePolicyCommand) + callsOf(ListAttachedRolePoliciesCommand)).toBe(0);
  });

  it('sends the per-entity read for what the directory does not hold', async () => {
    // Prepare
    mockTwoPages();
    iamMock.on(GetRoleCommand, { RoleName: 'AWSServiceRoleForEC2Spot' }).rejects(
      new IAMServiceException({
        name: 'NoSuchEntity',
        $fault: 'client',
        $metadata: { httpStatusCode: 404 },
        message: 'not found',
      })
    );
    const iam = new IAMClient({ region: 'us-east-1' });
    const directory = createIamAccountDirectory(iam);
    const reader = createIamRolePolicyReader(accountDirectorySender(iam, directory));

    // Act
    const exists = await reader.roleExists?.('AWSServiceRoleForEC2Spot');
    const known = await reader.roleExists?.(CONTROLLER_ROLE);

    // Assess
    expect([exists, known]).toEqual([false, true]);
    expect(iamMock.commandCalls(GetRoleCommand).map((c) => c.args[0].input.RoleName)).toEqual([
      'AWSServiceRoleForEC2Spot',
    ]);
  });

  it('falls back to per-entity reads when the directory is refused', async () => {
    // Prepare
    iamMock.on(GetAccountAuthorizationDetailsCommand).rejects(
      new IAMServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'not authorized to perform: iam:GetAccountAuthorizationDetails',
      })
    );
    iamMock.on(GetRoleCommand).resolves({
      Role: {
        RoleName: NODE_ROLE,
        Arn: roleArn(NODE_ROLE),
        Path: '/',
        RoleId: 'AROA1',
        CreateDate: new Date(0),
      },
    });
    iamMock
      .on(ListAttachedRolePoliciesCommand)
      .resolves({ AttachedPolicies: [], IsTruncated: false });
    const iam = new IAMClient({ region: 'us-east-1' });
    const directory = createIamAccountDirectory(iam);
    const facts = withAccountDirectory(
      createLiveAwsFacts({ ec2: iam as never, ssm: iam as never, iam }),
      directory
    );

    // Act
    const first = await facts.getRole(NODE_ROLE);
    const second = await facts.getRole(NODE_ROLE);

    // Assess
    expect(first).toEqual({
      name: NODE_ROLE,
      arn: roleArn(NODE_ROLE),
      path: '/',
      attachedPolicyArns: [],
    });
    expect(second).toEqual(first);
    // Refused once, not asked again for each role.
    expect(callsOf(GetAccountAuthorizationDetailsCommand)).toBe(1);
    expect(callsOf(GetRoleCommand)).toBe(2);
  });

  it('reads the directory once more after a failure that is not a refusal, before falling back', async () => {
    // Prepare: the first read fails as a connection drop would, the second answers
    iamMock
      .on(GetAccountAuthorizationDetailsCommand)
      .rejectsOnce(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }))
      .resolves({
        RoleDetailList: [
          { RoleName: NODE_ROLE, Arn: roleArn(NODE_ROLE), Path: '/', AttachedManagedPolicies: [] },
        ],
        IsTruncated: false,
      });
    const directory = createIamAccountDirectory(new IAMClient({ region: 'us-east-1' }));

    // Act
    const loaded = await directory.load();

    // Assess
    expect(loaded?.role(NODE_ROLE)?.Arn).toBe(roleArn(NODE_ROLE));
    expect(callsOf(GetAccountAuthorizationDetailsCommand)).toBe(2);
  });

  it('falls back after a second failure, and does not read a third time', async () => {
    // Prepare
    iamMock
      .on(GetAccountAuthorizationDetailsCommand)
      .rejects(Object.assign(new Error('Rate exceeded'), { name: 'Throttling' }));
    const directory = createIamAccountDirectory(new IAMClient({ region: 'us-east-1' }));

    // Act
    const loaded = await directory.load();
    const again = await directory.load();

    // Assess
    expect([loaded, again]).toEqual([undefined, undefined]);
    expect(callsOf(GetAccountAuthorizationDetailsCommand)).toBe(2);
  });

  it('falls back, never answering from a partial directory, when its Marker goes round', async () => {
    // Prepare: markers m1, m2, m1, … with the node role on the first page only
    iamMock
      .on(GetAccountAuthorizationDetailsCommand)
      .callsFake(async (input: { Marker?: string }) => ({
        RoleDetailList:
          input.Marker === undefined
            ? [{ RoleName: NODE_ROLE, RoleId: 'AROA1', Arn: roleArn(NODE_ROLE), Path: '/' }]
            : [{ RoleName: `other-${input.Marker}`, RoleId: `AROA-${input.Marker}`, Path: '/' }],
        IsTruncated: true,
        Marker: input.Marker === 'm1' ? 'm2' : 'm1',
      }));
    const directory = createIamAccountDirectory(new IAMClient({ region: 'us-east-1' }));

    // Act
    const loaded = await directory.load();

    // Assess: two attempts of three pages each, then the per-entity reads answer
    expect(loaded).toBeUndefined();
    expect(callsOf(GetAccountAuthorizationDetailsCommand)).toBe(6);
  });
});
