import type {
  SimulatePrincipalPolicyCommandInput,
  SimulatePrincipalPolicyCommandOutput,
} from '@aws-sdk/client-iam';
import { describe, expect, it, vi } from 'vitest';
import type { IamEngine } from '../../../lambda/adapters/iam-engine/load.js';
import {
  type PrincipalPolicyDocuments,
  simulatePrincipalPolicy,
} from '../../../lambda/adapters/iam-engine/simulate-principal-policy.js';
import { parseWorld } from '../../../lambda/adapters/world/load-world.js';
import {
  createWorldPolicySimulator,
  createWorldRolePolicyReader,
  worldHasPolicyDocuments,
} from '../../../lambda/adapters/world/permissions.js';
import { WorldSchema } from '../../../lambda/adapters/world/schema.js';
import type { SimulationRequest } from '../../../lambda/core/facts/permissions.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';

const ACCOUNT = '111122223333';
const CONTROLLER = `arn:aws:iam::${ACCOUNT}:role/KarpenterController`;
const OTHER = `arn:aws:iam::${ACCOUNT}:role/TableOnly`;
const MANAGED = `arn:aws:iam::${ACCOUNT}:policy/KarpenterControllerPolicy`;
const BOUNDARY = `arn:aws:iam::${ACCOUNT}:policy/Boundary`;
const NODE_A = `arn:aws:iam::${ACCOUNT}:role/NodeA`;
const NODE_B = `arn:aws:iam::${ACCOUNT}:role/NodeB`;

const policy = (...Statement: object[]) => ({ Version: '2012-10-17', Statement });

const INLINE = policy({ Effect: 'Deny', Action: 'iam:PassRole', Resource: NODE_B });
const ATTACHED = policy({ Effect: 'Allow', Action: ['iam:PassRole', 'ec2:*'], Resource: '*' });
const BOUNDARY_DOCUMENT = policy({ Effect: 'Allow', Action: '*', Resource: '*' });
const SCP = policy({ Effect: 'Allow', Action: '*', Resource: '*' });

/** The controller has documents (inline as an object, managed as URL-encoded text); TableOnly has none. */
function worldWith(overrides: { controller?: object; iam?: object } = {}) {
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
          ...overrides.controller,
        },
        { RoleName: 'TableOnly', Arn: OTHER },
      ],
      policies: [
        {
          Arn: MANAGED,
          PolicyName: 'KarpenterControllerPolicy',
          DefaultVersionId: 'v2',
          Document: encodeURIComponent(JSON.stringify(ATTACHED)),
        },
        { Arn: BOUNDARY, PolicyName: 'Boundary', Document: JSON.stringify(BOUNDARY_DOCUMENT) },
      ],
      // The table would allow everything: a denial can only come from the documents.
      permissions: [{ principal: '*', action: '*', resource: '*', decision: 'allowed' }],
      ...overrides.iam,
    },
    organizations: { scps: [{ Id: 'p-FullAWSAccess', Document: SCP }] },
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

describe('world policy simulator over policy documents', () => {
  it('evaluates a role with documents by the engine, naming the denying policy', async () => {
    // Prepare
    const simulator = createWorldPolicySimulator(worldWith(), { engine: simulatePrincipalPolicy });

    // Act
    const results = await simulator.simulate(passRole(CONTROLLER));

    // Assess
    expect(results).toEqual([
      {
        action: 'iam:PassRole',
        resource: NODE_A,
        decision: 'allowed',
        allowedByOrganizations: true,
        allowedByPermissionsBoundary: true,
        matchedStatements: [
          { sourcePolicyId: 'KarpenterControllerPolicy', sourcePolicyType: 'user-managed' },
        ],
        missingContextValues: [],
      },
      {
        action: 'iam:PassRole',
        resource: NODE_B,
        decision: 'explicitDeny',
        allowedByOrganizations: true,
        allowedByPermissionsBoundary: true,
        matchedStatements: [{ sourcePolicyId: 'NoNodeB', sourcePolicyType: 'role' }],
        missingContextValues: [],
      },
    ]);
  });

  it("gives the engine the role's documents in IAM's order and the request as IAM's input", async () => {
    // Prepare
    const seen: {
      policies?: PrincipalPolicyDocuments;
      input?: SimulatePrincipalPolicyCommandInput;
    } = {};
    const engine: IamEngine = async (policies, input) => {
      seen.policies = policies;
      seen.input = input;
      return { EvaluationResults: [], $metadata: {} } as SimulatePrincipalPolicyCommandOutput;
    };

    // Act
    await createWorldPolicySimulator(worldWith(), { engine }).simulate(passRole(CONTROLLER));

    // Assess
    expect(seen.policies).toEqual({
      identity: [
        { name: 'NoNodeB', type: 'inline', document: JSON.stringify(INLINE) },
        {
          name: 'KarpenterControllerPolicy',
          arn: MANAGED,
          type: 'managed',
          document: JSON.stringify(ATTACHED),
        },
      ],
      boundary: { arn: BOUNDARY, document: JSON.stringify(BOUNDARY_DOCUMENT) },
      scps: [{ id: 'p-FullAWSAccess', document: JSON.stringify(SCP) }],
    });
    expect(seen.input).toEqual({
      PolicySourceArn: CONTROLLER,
      ActionNames: ['iam:PassRole'],
      ResourceArns: [NODE_A, NODE_B],
      ContextEntries: [
        {
          ContextKeyName: 'iam:PassedToService',
          ContextKeyValues: ['ec2.amazonaws.com'],
          ContextKeyType: 'string',
        },
      ],
    });
  });

  it('answers a role without documents from the table, never calling the engine', async () => {
    // Prepare
    const engine = vi.fn<IamEngine>();

    // Act
    const results = await createWorldPolicySimulator(worldWith(), { engine }).simulate(
      passRole(OTHER)
    );

    // Assess
    expect(results.map((result) => result.decision)).toEqual(['allowed', 'allowed']);
    expect(engine).not.toHaveBeenCalled();
  });

  it('fails a role with documents as not installed when no engine is given, naming the package', async () => {
    // Act
    const simulation = createWorldPolicySimulator(worldWith()).simulate(passRole(CONTROLLER));

    // Assess
    await expect(simulation).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(simulation).rejects.toMatchObject({
      reason: 'not-installed',
      message: expect.stringContaining('@cloud-copilot/iam-simulate'),
    });
  });

  it('fails as not found when an attached policy of a role with documents has none', async () => {
    // Prepare
    const world = worldWith({ iam: { policies: [] } });

    // Act
    const simulation = createWorldPolicySimulator(world, {
      engine: simulatePrincipalPolicy,
    }).simulate(passRole(CONTROLLER));

    // Assess
    await expect(simulation).rejects.toMatchObject({
      reason: 'not-found',
      message: expect.stringContaining(MANAGED),
    });
  });

  it('counts a role with only an attached document as one with documents', () => {
    // Prepare
    const onlyAttached = worldWith({
      controller: { RolePolicyList: undefined, PermissionsBoundary: undefined },
    });
    const none = worldWith({
      controller: { RolePolicyList: [], PermissionsBoundary: undefined },
      iam: { policies: [] },
    });

    // Act
    const withAttached = worldHasPolicyDocuments(onlyAttached);
    const without = worldHasPolicyDocuments(none);

    // Assess
    expect(withAttached).toBe(true);
    expect(without).toBe(false);
  });
});

describe('world role policy reader', () => {
  it('reads inline then attached documents, the boundary apart', async () => {
    // Act
    const set = await createWorldRolePolicyReader(worldWith()).policySet?.(CONTROLLER);

    // Assess
    expect(set).toEqual({
      identity: [JSON.stringify(INLINE), JSON.stringify(ATTACHED)],
      identityNames: ['NoNodeB', 'KarpenterControllerPolicy'],
      boundary: JSON.stringify(BOUNDARY_DOCUMENT),
      boundaryName: 'Boundary',
    });
  });

  it('cannot read a role the world gives no documents for', async () => {
    // Act
    const reading = createWorldRolePolicyReader(worldWith()).documents(OTHER);

    // Assess
    await expect(reading).rejects.toBeInstanceOf(SourceUnavailableError);
  });
});

describe('world schema: policy documents', () => {
  const parse = (iam: object, organizations?: object) =>
    parseWorld(
      JSON.stringify({
        version: 1,
        account: ACCOUNT,
        region: 'us-east-1',
        iam,
        ...(organizations ? { organizations } : {}),
      }),
      'world.json'
    );

  it('keeps an object, JSON text or URL-encoded document as the same JSON text', () => {
    // Act
    const world = parse({
      roles: [
        {
          RoleName: 'R',
          RolePolicyList: [
            { PolicyName: 'object', PolicyDocument: ATTACHED },
            { PolicyName: 'text', PolicyDocument: JSON.stringify(ATTACHED) },
            { PolicyName: 'encoded', PolicyDocument: encodeURIComponent(JSON.stringify(ATTACHED)) },
          ],
        },
      ],
    });

    // Assess
    const documents = world.iam.roles[0]?.RolePolicyList?.map((entry) => entry.PolicyDocument);
    expect(new Set(documents)).toEqual(new Set([JSON.stringify(ATTACHED)]));
  });

  it('names where a malformed document is', () => {
    // Act
    const badEffect = () =>
      parse({
        roles: [
          {
            RoleName: 'R',
            RolePolicyList: [
              {
                PolicyName: 'p',
                PolicyDocument: policy({ Effect: 'Allow' }, { Effect: 'Permit' }),
              },
            ],
          },
        ],
      });
    const notJson = () =>
      parse({ policies: [{ Arn: MANAGED, PolicyName: 'p', Document: '{"Statement": [' }] });
    const badCondition = () =>
      parse(
        {},
        {
          scps: [
            { Id: 'p-1', Document: policy({ Effect: 'Deny', Condition: { StringEquals: 'x' } }) },
          ],
        }
      );

    // Assess
    expect(badEffect).toThrow('iam.roles[0].RolePolicyList[0].PolicyDocument.Statement[1].Effect');
    expect(notJson).toThrow('iam.policies[0].Document: not a policy document');
    expect(badCondition).toThrow(
      'organizations.scps[0].Document.Statement[0].Condition.StringEquals'
    );
  });
});
