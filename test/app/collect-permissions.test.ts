import { describe, expect, it } from 'vitest';
import { createPermissionsEnricher } from '../../lambda/app/collect-permissions.js';
import { controllerCanLaunch } from '../../lambda/core/checks/controller-can-launch.js';
import { controllerCanPassNodeRole } from '../../lambda/core/checks/controller-can-pass-node-role.js';
import type { SimulationRequest, SimulationResult } from '../../lambda/core/facts/permissions.js';
import { ok, unavailable } from '../../lambda/core/facts/slice.js';
import { type Inventory, nodeClassKey } from '../../lambda/core/inventory.js';
import type {
  DryRunLaunch,
  PolicySimulatorPort,
  RolePolicyPort,
} from '../../lambda/core/ports/permissions.js';
import { parseNodePool } from '../../lambda/core/schema.js';
import { SourceUnavailableError } from '../../lambda/shared/errors.js';
import {
  aCluster,
  aClusterState,
  aNodePool,
  aPermissionsInventory,
  CONTROLLER_ROLE,
} from '../support/permission-builders.js';

/** A fake simulator: allows everything, records calls and concurrency, throws on demand. */
function fakeSimulator(
  failures: (request: SimulationRequest, attempt: number) => Error | undefined = () => undefined
) {
  const calls: SimulationRequest[] = [];
  const attempts = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const simulator: PolicySimulatorPort = {
    async simulate(request) {
      calls.push(request);
      const attempt = (attempts.get(request.key) ?? 0) + 1;
      attempts.set(request.key, attempt);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await Promise.resolve();
      inFlight--;
      const failure = failures(request, attempt);
      if (failure) throw failure;
      return request.actions.flatMap((action) =>
        request.resourceArns.map(
          (resource): SimulationResult => ({
            action,
            resource,
            decision: 'allowed',
            matchedStatements: [],
            missingContextValues: [],
          })
        )
      );
    },
  };
  return { simulator, calls, maxInFlight: () => maxInFlight };
}

const throttled = () =>
  new SourceUnavailableError('iam:SimulatePrincipalPolicy', 'throttled', 'Rate exceeded');

describe('permissions enricher', () => {
  it('simulates identical requests once, within the concurrency bound, and stores results per NodeClass', async () => {
    // Prepare
    const fake = fakeSimulator();
    const enricher = createPermissionsEnricher({ simulator: fake.simulator, concurrency: 2 });

    // Act
    const inventory = await enricher.enrich(aPermissionsInventory());

    // Assess
    const keys = fake.calls.map((call) => call.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(fake.maxInFlight()).toBeLessThanOrEqual(2);
    expect(inventory.inputs.has('permissions')).toBe(true);
    const gpu = inventory.permissions.get(nodeClassKey('demo', 'gpu'));
    const shared = gpu?.simulations.find((outcome) => outcome.request.kind === 'describe-ec2');
    expect(shared?.results.status).toBe('ok');
    expect(
      inventory.permissions.get(nodeClassKey('demo', 'default'))?.controllerRole
    ).toMatchObject({ roleArn: CONTROLLER_ROLE });
  });

  it('records an unavailable slice without retrying: throttling is retried by the SDK client', async () => {
    const fake = fakeSimulator((request) =>
      request.actions.includes('iam:PassRole')
        ? throttled()
        : request.actions.includes('eks:DescribeCluster')
          ? new SourceUnavailableError(
              'iam:SimulatePrincipalPolicy',
              'access-denied',
              'not allowed to simulate'
            )
          : undefined
    );
    const enricher = createPermissionsEnricher({ simulator: fake.simulator });

    const inventory = await enricher.enrich(aPermissionsInventory());

    const simulations =
      inventory.permissions.get(nodeClassKey('demo', 'default'))?.simulations ?? [];
    expect(
      simulations.find((item) => item.request.kind === 'pass-node-role')?.results
    ).toMatchObject({ status: 'unavailable', reason: 'throttled' });
    expect(
      simulations.find((item) => item.request.kind === 'describe-cluster')?.results
    ).toMatchObject({ status: 'unavailable', reason: 'access-denied' });
    expect(fake.calls.filter((call) => call.actions.includes('eks:DescribeCluster'))).toHaveLength(
      1
    );
    expect(fake.calls.filter((call) => call.actions.includes('iam:PassRole'))).toHaveLength(1);
  });

  it('simulates the override role and nothing when the role is unknown', async () => {
    const fake = fakeSimulator();
    const unknownRole = aPermissionsInventory({ clusters: [aCluster({ state: aClusterState() })] });

    const withoutRole = await createPermissionsEnricher({ simulator: fake.simulator }).enrich(
      unknownRole
    );
    expect(fake.calls).toHaveLength(0);
    expect(
      withoutRole.permissions.get(nodeClassKey('demo', 'default'))?.controllerRole.status
    ).toBe('not-found');

    await createPermissionsEnricher({
      simulator: fake.simulator,
      controllerRoles: { demo: 'arn:aws:iam::111122223333:role/Override' },
    }).enrich(unknownRole);
    expect(
      fake.calls.every((call) => call.principalArn === 'arn:aws:iam::111122223333:role/Override')
    ).toBe(true);
  });

  it('runs the DryRun probe with the class image, subnet, groups and profile when enabled', async () => {
    const launches: DryRunLaunch[] = [];
    const enricher = createPermissionsEnricher({
      simulator: fakeSimulator().simulator,
      dryRun: {
        async probe(launch) {
          launches.push(launch);
          return [{ operation: 'RunInstances', outcome: 'allowed', message: 'ok' }];
        },
      },
    });

    const inventory = await enricher.enrich(aPermissionsInventory());

    expect(
      launches.map((launch) => [
        launch.nodeClassName,
        launch.imageId,
        launch.subnetId,
        launch.instanceProfile,
      ])
    ).toEqual([
      ['default', 'ami-0123456789abcdef0', 'subnet-aaa', 'demo_1234567890'],
      ['gpu', 'ami-0fedcba9876543210', 'subnet-ccc', 'GpuNodeProfile'],
    ]);
    expect(inventory.permissions.get(nodeClassKey('demo', 'gpu'))?.dryRun).toHaveLength(1);
  });

  it('simulates no launch with a made-up NodePool when the NodePools could not be read', async () => {
    // Prepare: HTTP 403 on the NodePool list.
    const fake = fakeSimulator();
    const state = {
      ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
      nodePools: unavailable<never>('access-denied', 'HTTP 403 on /apis/karpenter.sh/v1/nodepools'),
    };
    const enricher = createPermissionsEnricher({ simulator: fake.simulator });
    // Act
    const inventory = await enricher.enrich(
      aPermissionsInventory({ clusters: [aCluster({ state })], nodePools: [] })
    );
    // Assess
    expect(fake.calls.map((call) => call.group)).not.toContain('launch');
    expect(fake.calls.flatMap((call) => call.context.map((entry) => entry.key))).not.toContain(
      'aws:RequestTag/karpenter.sh/nodepool'
    );
    const now = new Date('2026-11-01T00:00:00Z');
    const launch = controllerCanLaunch.evaluate(inventory, { now });
    expect(launch.map((finding) => finding.status)).toEqual(['error', 'error']);
    expect(launch[0]?.message).toMatch(/NodePools could not be read.*access-denied.*HTTP 403/);
    expect(
      controllerCanPassNodeRole.evaluate(inventory, { now }).map((finding) => finding.status)
    ).toEqual(['pass', 'pass']);
  });

  it('simulates the empty NodePool tag when the NodePools were read and none uses the class', async () => {
    // Prepare
    const fake = fakeSimulator();
    const state = {
      ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }),
      nodePools: ok({ nodePoolCount: 0 }),
    };
    const enricher = createPermissionsEnricher({ simulator: fake.simulator });
    // Act
    const inventory = await enricher.enrich(
      aPermissionsInventory({ clusters: [aCluster({ state })], nodePools: [] })
    );
    // Assess
    const tags = fake.calls.flatMap((call) =>
      call.context.filter((entry) => entry.key === 'aws:RequestTag/karpenter.sh/nodepool')
    );
    expect(tags.length).toBeGreaterThan(0);
    expect(new Set(tags.flatMap((entry) => entry.values))).toEqual(new Set(['']));
    expect(
      controllerCanLaunch
        .evaluate(inventory, { now: new Date('2026-11-01T00:00:00Z') })
        .map((finding) => finding.status)
    ).toEqual(['pass', 'pass']);
  });
});

describe('permissions enricher: the controller role read once per scan', () => {
  it('hands the policy reader a controller role the AWS facts already read as a node role', async () => {
    // Prepare: the gpu class' instance profile holds the controller role itself
    const controller = {
      name: 'KarpenterController-demo',
      arn: CONTROLLER_ROLE,
      attachedPolicyArns: ['arn:aws:iam::111122223333:policy/Karpenter'],
    };
    const base = aPermissionsInventory();
    const gpuKey = nodeClassKey('demo', 'gpu');
    const gpu = base.awsFacts.get(gpuKey);
    const inventory = {
      ...base,
      awsFacts: new Map([
        [
          gpuKey,
          {
            ...gpu,
            nodeRole: ok({
              source: 'instance-profile' as const,
              name: controller.name,
              role: controller,
            }),
          } as NonNullable<typeof gpu>,
        ],
      ]),
    };
    const asked: { principal: string; known: unknown }[] = [];
    const policies: RolePolicyPort = {
      documents: async () => [],
      policySet: async (principal, known) => {
        asked.push({ principal, known });
        return { identity: [] };
      },
    };

    // Act
    await createPermissionsEnricher({ simulator: fakeSimulator().simulator, policies }).enrich(
      inventory
    );
    await createPermissionsEnricher({ simulator: fakeSimulator().simulator, policies }).enrich(
      base
    );

    // Assess: the first scan knew the role, the second (no such node role) reads it itself
    expect(asked).toEqual([
      { principal: CONTROLLER_ROLE, known: controller },
      { principal: CONTROLLER_ROLE, known: undefined },
    ]);
  });
});

/** `aPermissionsInventory` plus NodePool `spot` (capacity-type In [spot, on-demand]) on class `default`. */
function withSpotNodePool(inventory: Inventory): Inventory {
  const pool = aNodePool('spot', 'default') as {
    spec: { template: { spec: { requirements: unknown[] } } };
  };
  pool.spec.template.spec.requirements = [
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['spot', 'on-demand'] },
  ];
  return {
    ...inventory,
    nodePools: [
      ...inventory.nodePools,
      { cluster: 'demo', name: 'spot', parsed: parseNodePool(pool) },
    ],
  };
}

/** A policy reader whose account has (or lacks) the roles named. */
function rolesReader(
  exists: (name: string) => boolean | Error
): RolePolicyPort & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async documents() {
      return [];
    },
    async roleExists(name) {
      asked.push(name);
      const answer = exists(name);
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
}

describe('permissions enricher: the Spot service-linked role', () => {
  const spotCalls = (calls: readonly SimulationRequest[]) =>
    calls.filter((call) => call.kind === 'create-spot-service-linked-role');

  it('reads nothing and simulates nothing when no NodePool allows Spot', async () => {
    const fake = fakeSimulator();
    const reader = rolesReader(() => false);

    const inventory = await createPermissionsEnricher({
      simulator: fake.simulator,
      policies: reader,
    }).enrich(aPermissionsInventory());

    expect(reader.asked).toEqual([]);
    expect(spotCalls(fake.calls)).toEqual([]);
    expect(
      inventory.permissions.get(nodeClassKey('demo', 'default'))?.spotServiceLinkedRole
    ).toBeUndefined();
  });

  it('records an existing role and simulates no creation', async () => {
    const fake = fakeSimulator();
    const reader = rolesReader((name) => name === 'AWSServiceRoleForEC2Spot');

    const inventory = await createPermissionsEnricher({
      simulator: fake.simulator,
      policies: reader,
    }).enrich(withSpotNodePool(aPermissionsInventory()));

    expect(reader.asked).toEqual(['AWSServiceRoleForEC2Spot']);
    expect(spotCalls(fake.calls)).toEqual([]);
    // Recorded on the class the Spot NodePool launches through only.
    expect(
      inventory.permissions.get(nodeClassKey('demo', 'gpu'))?.spotServiceLinkedRole
    ).toBeUndefined();
    for (const name of ['default'])
      expect(inventory.permissions.get(nodeClassKey('demo', name))?.spotServiceLinkedRole).toEqual(
        ok(true)
      );
  });

  it('simulates iam:CreateServiceLinkedRole once for the cluster when the role is absent', async () => {
    const fake = fakeSimulator();

    const inventory = await createPermissionsEnricher({
      simulator: fake.simulator,
      policies: rolesReader(() => false),
    }).enrich(withSpotNodePool(aPermissionsInventory()));

    const [call, ...more] = spotCalls(fake.calls);
    expect(more).toEqual([]);
    expect(call).toMatchObject({
      group: 'spot-service-linked-role',
      principalArn: CONTROLLER_ROLE,
      actions: ['iam:CreateServiceLinkedRole'],
      resourceArns: [
        'arn:aws:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot',
      ],
    });
    expect(call?.context).toEqual(
      expect.arrayContaining([
        { key: 'iam:AWSServiceName', type: 'string', values: ['spot.amazonaws.com'] },
        { key: 'aws:RequestedRegion', type: 'string', values: ['us-east-1'] },
      ])
    );
    const facts = inventory.permissions.get(nodeClassKey('demo', 'default'));
    expect(facts?.spotServiceLinkedRole).toEqual(ok(false));
    expect(
      facts?.simulations.some((item) => item.request.kind === 'create-spot-service-linked-role')
    ).toBe(true);
  });

  it('records why the role is unknown: a failed read, or no reader that can tell', async () => {
    const denied = new SourceUnavailableError('iam:GetRole', 'access-denied', 'not authorized');
    const failed = await createPermissionsEnricher({
      simulator: fakeSimulator().simulator,
      policies: rolesReader(() => denied),
    }).enrich(withSpotNodePool(aPermissionsInventory()));
    const unread = await createPermissionsEnricher({
      simulator: fakeSimulator().simulator,
    }).enrich(withSpotNodePool(aPermissionsInventory()));

    expect(
      failed.permissions.get(nodeClassKey('demo', 'default'))?.spotServiceLinkedRole
    ).toMatchObject({
      status: 'unavailable',
      reason: 'access-denied',
    });
    expect(
      unread.permissions.get(nodeClassKey('demo', 'default'))?.spotServiceLinkedRole
    ).toMatchObject({
      status: 'unavailable',
    });
  });
});
