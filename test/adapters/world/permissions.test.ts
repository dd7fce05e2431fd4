import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createRecordingSimulator,
  createWorldPolicySimulator,
  permissionRowOf,
  wildcardMatches,
} from '../../../lambda/adapters/world/permissions.js';
import { WorldSchema } from '../../../lambda/adapters/world/schema.js';
import { runScan } from '../../../lambda/app/run-scan.js';
import { buildWorldPlan } from '../../../lambda/cli/plan-world.js';
import type { SimulationRequest } from '../../../lambda/core/facts/permissions.js';

const CONTROLLER = 'arn:aws:iam::111122223333:role/KarpenterController';

function world(permissions: unknown[], permissionsDefault?: string) {
  return WorldSchema.parse({
    version: 1,
    account: '111122223333',
    region: 'us-east-1',
    iam: { permissions, ...(permissionsDefault ? { permissionsDefault } : {}) },
  });
}

const REQUEST: SimulationRequest = {
  key: 'k',
  kind: 'pass-node-role',
  group: 'pass-node-role',
  principalArn: CONTROLLER,
  actions: ['iam:PassRole'],
  resourceArns: ['arn:aws:iam::111122223333:role/NodeA', 'arn:aws:iam::111122223333:role/NodeB'],
  context: [],
};

describe('world policy simulator', () => {
  it('decides each action and resource by the first matching row, else the default', async () => {
    // Prepare
    const simulator = createWorldPolicySimulator(
      world([
        {
          principal: 'KarpenterController',
          action: 'iam:passrole',
          resource: '*:role/NodeB',
          decision: 'implicitDeny',
        },
        { principal: '*', action: 'iam:*', resource: '*', decision: 'allowed' },
      ])
    );

    // Act
    const results = await simulator.simulate(REQUEST);

    // Assess
    expect(results.map((result) => [result.resource.split('/').at(-1), result.decision])).toEqual([
      ['NodeA', 'allowed'],
      ['NodeB', 'implicitDeny'],
    ]);
  });

  it('maps deniedBy to the SCP, boundary or a matched policy, and keeps missing context keys', async () => {
    const row = (deniedBy: string) => ({
      principal: CONTROLLER,
      action: 'iam:PassRole',
      decision: 'explicitDeny',
      deniedBy,
    });

    const [scp] = await createWorldPolicySimulator(world([row('scp')])).simulate(REQUEST);
    const [boundary] = await createWorldPolicySimulator(
      world([row('permissions-boundary')])
    ).simulate(REQUEST);
    const [policy] = await createWorldPolicySimulator(world([row('DenyPassRole')])).simulate(
      REQUEST
    );
    const [missing] = await createWorldPolicySimulator(
      world([
        {
          principal: '*',
          action: '*',
          decision: 'allowed',
          missingContextValues: ['aws:PrincipalTag/x'],
        },
      ])
    ).simulate(REQUEST);

    expect(scp?.allowedByOrganizations).toBe(false);
    expect(boundary?.allowedByPermissionsBoundary).toBe(false);
    expect(policy?.matchedStatements).toEqual([
      { sourcePolicyId: 'DenyPassRole', sourcePolicyType: 'world-file' },
    ]);
    expect(missing?.missingContextValues).toEqual(['aws:PrincipalTag/x']);
  });

  it('answers with permissionsDefault when no row matches the principal', async () => {
    const simulator = createWorldPolicySimulator(
      world([{ principal: 'OtherRole', action: '*', decision: 'allowed' }], 'implicitDeny')
    );

    const results = await simulator.simulate(REQUEST);

    expect(results.every((result) => result.decision === 'implicitDeny')).toBe(true);
  });

  it('matches IAM-style wildcards literally otherwise', () => {
    expect(
      wildcardMatches('arn:aws:ec2:*:subnet/*', 'arn:aws:ec2:us-east-1:1:subnet/subnet-1')
    ).toBe(true);
    expect(wildcardMatches('role/a.b', 'role/aXb')).toBe(false);
    expect(wildcardMatches('role/?', 'role/x')).toBe(true);
  });
});

describe('examples/world.json', () => {
  it('fails controller-can-pass-node-role for exactly the one affected NodeClass, with a statement', async () => {
    // Prepare
    const plan = await buildWorldPlan({
      world: join(import.meta.dirname, '../../../examples/world.json'),
      paths: [],
      clusters: [],
      environment: 'production',
      readStdin: async () => '',
      now: new Date('2026-11-01T00:00:00Z'),
    });

    // Act
    const report = await runScan(plan, {
      now: new Date('2026-11-01T00:00:00Z'),
      only: ['controller-can-pass-node-role'],
    });

    // Assess
    const failures = report.findings.filter((finding) => finding.status === 'fail');
    expect(
      failures.map((finding) => `${finding.resource.cluster}/${finding.resource.name}`)
    ).toEqual(['prod-use1/analytics']);
    const statement = JSON.parse(
      failures[0]?.remediation.slice(failures[0].remediation.indexOf('{')) ?? ''
    );
    expect(statement.Statement[0]).toMatchObject({
      Sid: 'AllowPassingInstanceRole',
      Action: ['iam:PassRole'],
      Resource: ['arn:aws:iam::111122223333:role/KarpenterNodeRole-analytics'],
    });
  });
});

describe('recording simulations for snapshot', () => {
  it('turns each result into a row that replays the same verdict, denier included', async () => {
    // Prepare
    const world = WorldSchema.parse({
      version: 1,
      account: '111122223333',
      region: 'us-east-1',
      iam: {
        permissions: [
          {
            principal: '*',
            action: 'iam:PassRole',
            resource: '*',
            decision: 'explicitDeny',
            deniedBy: 'scp',
          },
          {
            principal: '*',
            action: 'ec2:RunInstances',
            resource: '*',
            decision: 'implicitDeny',
            deniedBy: 'permissions-boundary',
          },
        ],
        permissionsDefault: 'allowed',
      },
    });
    const recording = createRecordingSimulator(createWorldPolicySimulator(world));
    const request = {
      principalArn: 'arn:aws:iam::111122223333:role/Controller',
      actions: ['iam:PassRole', 'ec2:RunInstances', 'ec2:CreateFleet'],
      resourceArns: ['arn:aws:iam::111122223333:role/Node'],
      context: [],
    } as unknown as SimulationRequest;

    // Act
    const live = await recording.simulator.simulate(request);
    await recording.simulator.simulate(request);
    const replayWorld = WorldSchema.parse({
      version: 1,
      account: '111122223333',
      region: 'us-east-1',
      iam: { permissions: recording.rows(), permissionsDefault: 'implicitDeny' },
    });
    const replay = await createWorldPolicySimulator(replayWorld).simulate(request);

    // Assess
    expect(recording.rows()).toHaveLength(3);
    expect(recording.rows()[0]).toMatchObject({ decision: 'explicitDeny', deniedBy: 'scp' });
    expect(replay).toEqual(live);
    expect(permissionRowOf(request.principalArn, live[2] as never)).not.toHaveProperty('deniedBy');
  });
});
