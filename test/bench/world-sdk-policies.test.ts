// The world SDK's IAM client over a world with policy documents: the live policy reader and
// simulator run unchanged on top, and a recorder around it (what `snapshot` does) keeps the
// documents so the recorded world replays through the engine to the same verdicts.
import { GetRolePolicyCommand, type GetRolePolicyCommandOutput } from '@aws-sdk/client-iam';
import { describe, expect, it } from 'vitest';
import { createWorldSdk, type Interceptor, sdkError } from '../../bench/world-sdk.js';
import {
  createIamRolePolicyReader,
  createIamSimulator,
} from '../../lambda/adapters/aws/iam-simulator.js';
import { simulatePrincipalPolicy } from '../../lambda/adapters/iam-engine/simulate-principal-policy.js';
import { createWorldPolicySimulator } from '../../lambda/adapters/world/permissions.js';
import { createAwsRecorder } from '../../lambda/adapters/world/recorder.js';
import { type World, WorldSchema } from '../../lambda/adapters/world/schema.js';
import type { SimulationRequest } from '../../lambda/core/facts/permissions.js';

const NOW = new Date('2026-11-01T12:00:00Z');
const ACCOUNT = '111122223333';
const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterController`;
const TABLE_ROLE = `arn:aws:iam::${ACCOUNT}:role/TableOnly`;
const MANAGED = `arn:aws:iam::${ACCOUNT}:policy/KarpenterControllerPolicy`;
const BOUNDARY = `arn:aws:iam::${ACCOUNT}:policy/Boundary`;
const NODE_A = `arn:aws:iam::${ACCOUNT}:role/NodeA`;
const NODE_B = `arn:aws:iam::${ACCOUNT}:role/NodeB`;

const INLINE = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Sid: 'NoNodeB', Effect: 'Deny', Action: 'iam:PassRole', Resource: NODE_B }],
});
const ATTACHED = JSON.stringify({
  Version: '2012-10-17',
  Statement: [
    {
      Effect: 'Allow',
      Action: 'iam:PassRole',
      Resource: '*',
      Condition: { StringEquals: { 'iam:PassedToService': 'ec2.amazonaws.com' } },
    },
  ],
});
const BOUNDARY_DOCUMENT = JSON.stringify({
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'iam:*', Resource: '*' }],
});

function world(): World {
  return WorldSchema.parse({
    version: 1,
    account: ACCOUNT,
    region: 'us-east-1',
    iam: {
      roles: [
        {
          RoleName: 'KarpenterController',
          Arn: CONTROLLER,
          AttachedPolicies: [{ PolicyName: 'KarpenterControllerPolicy', PolicyArn: MANAGED }],
          PermissionsBoundary: { PermissionsBoundaryArn: BOUNDARY },
          RolePolicyList: [{ PolicyName: 'NoNodeB', PolicyDocument: INLINE }],
        },
        { RoleName: 'TableOnly', Arn: TABLE_ROLE },
      ],
      policies: [
        {
          Arn: MANAGED,
          PolicyName: 'KarpenterControllerPolicy',
          DefaultVersionId: 'v3',
          Document: ATTACHED,
        },
        { Arn: BOUNDARY, PolicyName: 'Boundary', Document: BOUNDARY_DOCUMENT },
      ],
      permissions: [
        { principal: 'TableOnly', action: '*', resource: NODE_B, decision: 'implicitDeny' },
      ],
    },
  });
}

const passRole = (principalArn: string): SimulationRequest => ({
  key: 'k',
  kind: 'pass-node-role',
  group: 'pass-node-role',
  principalArn,
  actions: ['iam:PassRole'],
  resourceArns: [NODE_A, NODE_B],
  context: [{ key: 'iam:PassedToService', type: 'string', values: ['ec2.amazonaws.com'] }],
});

const decisions = (results: readonly { resource: string; decision: string }[]) =>
  results.map((result) => [result.resource, result.decision]);

describe('world SDK IAM over policy documents', () => {
  it("serves the role's documents URL-encoded, as IAM does, to the live policy reader", async () => {
    // Prepare
    const sdk = createWorldSdk(world(), { now: NOW });

    // Act
    const raw = (await sdk.iam.send(
      new GetRolePolicyCommand({ RoleName: 'KarpenterController', PolicyName: 'NoNodeB' })
    )) as GetRolePolicyCommandOutput;
    const set = await createIamRolePolicyReader(sdk.iam).policySet?.(CONTROLLER);

    // Assess
    expect(raw.PolicyDocument).toBe(encodeURIComponent(INLINE));
    expect(set).toEqual({
      identity: [INLINE, ATTACHED],
      identityNames: ['NoNodeB', 'KarpenterControllerPolicy'],
      boundary: BOUNDARY_DOCUMENT,
      boundaryName: 'Boundary',
    });
  });

  it('simulates a role with documents by the engine and any other by the table', async () => {
    // Prepare
    const simulator = createIamSimulator(createWorldSdk(world(), { now: NOW }).iam);

    // Act
    const controller = await simulator.simulate(passRole(CONTROLLER));
    const table = await simulator.simulate(passRole(TABLE_ROLE));

    // Assess
    expect(decisions(controller)).toEqual([
      [NODE_A, 'allowed'],
      [NODE_B, 'explicitDeny'],
    ]);
    expect(controller[1]?.matchedStatements).toEqual([
      { sourcePolicyId: 'NoNodeB', sourcePolicyType: 'role' },
    ]);
    expect(decisions(table)).toEqual([
      [NODE_A, 'allowed'],
      [NODE_B, 'implicitDeny'],
    ]);
  });
});

describe('recording policy documents (snapshot)', () => {
  async function record(intercept?: Interceptor): Promise<World> {
    const sdk = createWorldSdk(world(), { now: NOW, ...(intercept ? { intercept } : {}) });
    const recorder = createAwsRecorder(sdk);
    await createIamRolePolicyReader(recorder.clients.iam)
      .policySet?.(CONTROLLER)
      .catch(() => undefined);
    const recorded = recorder.recorded();
    return WorldSchema.parse({
      version: 1,
      account: ACCOUNT,
      region: 'us-east-1',
      iam: { ...recorded.keyed.iam, permissionsDefault: 'implicitDeny' },
    });
  }

  it('records what the reader read, so the recorded world replays through the engine', async () => {
    // Prepare
    const live = await createIamSimulator(createWorldSdk(world(), { now: NOW }).iam).simulate(
      passRole(CONTROLLER)
    );

    // Act
    const recorded = await record();
    const replay = await createWorldPolicySimulator(recorded, {
      engine: simulatePrincipalPolicy,
    }).simulate(passRole(CONTROLLER));

    // Assess
    const role = recorded.iam.roles.find((entry) => entry.RoleName === 'KarpenterController');
    expect(role?.RolePolicyList).toEqual([{ PolicyName: 'NoNodeB', PolicyDocument: INLINE }]);
    expect(recorded.iam.policies).toEqual([
      {
        Arn: BOUNDARY,
        PolicyName: 'Boundary',
        DefaultVersionId: 'v1',
        Document: BOUNDARY_DOCUMENT,
      },
      {
        Arn: MANAGED,
        PolicyName: 'KarpenterControllerPolicy',
        DefaultVersionId: 'v3',
        Document: ATTACHED,
      },
    ]);
    expect(replay).toEqual(live);
  });

  it('records no documents for a role whose documents were not all read', async () => {
    // Prepare: the boundary's version cannot be read
    const intercept: Interceptor = (_service, operation, input, answer) =>
      operation === 'GetPolicyVersion' && (input as { PolicyArn?: string }).PolicyArn === BOUNDARY
        ? Promise.reject(sdkError('AccessDenied', 403))
        : answer();

    // Act
    const recorded = await record(intercept);

    // Assess
    const role = recorded.iam.roles.find((entry) => entry.RoleName === 'KarpenterController');
    expect(role).toBeDefined();
    expect(role?.RolePolicyList).toBeUndefined();
    expect(recorded.iam.policies).toBeUndefined();
  });
});
