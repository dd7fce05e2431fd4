import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContextEntry, SimulationRequest } from '../../../lambda/core/facts/permissions.js';
import { ok, unavailable } from '../../../lambda/core/facts/slice.js';
import { permissionScopeOf, simulationInputOf } from '../../../lambda/core/iam/nodeclass-inputs.js';
import {
  buildSimulations,
  describeActions,
  type NodeClassSimulationInput,
  simulationKey,
} from '../../../lambda/core/iam/request-context.js';
import type { Inventory } from '../../../lambda/core/inventory.js';
import { stableHash } from '../../../lambda/core/model.js';
import { parseKarpenterVersion } from '../../../lambda/core/version.js';
import {
  aCluster,
  aClusterState,
  aControllerRole,
  aPermissionsInventory,
  CONTROLLER_ROLE,
  GPU_NODE_ROLE,
  NODE_ROLE,
} from '../../support/permission-builders.js';

function inputFor(
  name: string,
  inventory: Inventory = aPermissionsInventory(),
  cluster = aCluster(),
  controller = aControllerRole()
): NodeClassSimulationInput {
  const entry = inventory.nodeClasses.find((candidate) => candidate.name === name);
  if (!entry?.parsed.ok) throw new Error(`no parsed NodeClass ${name}`);
  const scope = permissionScopeOf(cluster, controller);
  if (scope.status !== 'ok') throw new Error(scope.message);
  return simulationInputOf(inventory, entry, entry.parsed.value, scope.value, controller);
}

function byKind(requests: readonly SimulationRequest[], kind: string): SimulationRequest {
  const found = requests.find((request) => request.kind === kind);
  if (!found) throw new Error(`no ${kind} simulation`);
  return found;
}

const EC2 = 'arn:aws:ec2:us-east-1:111122223333';
const REQUEST_TAGS_DEFAULT = [
  { key: 'aws:RequestTag/eks:eks-cluster-name', type: 'string', values: ['demo'] },
  { key: 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass', type: 'string', values: ['default'] },
  { key: 'aws:RequestTag/karpenter.sh/nodepool', type: 'string', values: ['general'] },
  { key: 'aws:RequestTag/kubernetes.io/cluster/demo', type: 'string', values: ['owned'] },
  { key: 'aws:RequestTag/team', type: 'string', values: ['platform'] },
  { key: 'aws:RequestedRegion', type: 'string', values: ['us-east-1'] },
  {
    key: 'aws:TagKeys',
    type: 'stringList',
    values: [
      'eks:eks-cluster-name',
      'karpenter.k8s.aws/ec2nodeclass',
      'karpenter.sh/nodepool',
      'kubernetes.io/cluster/demo',
      'team',
    ],
  },
];

describe('buildSimulations', () => {
  it('builds one simulation per Karpenter request for a role-mode class', () => {
    // Act
    const plan = buildSimulations(inputFor('default'));

    // Assess
    expect(plan.gaps).toEqual([]);
    expect(plan.requests.map((request) => request.kind)).toEqual([
      // Each create call, then its CreateTags.
      'create-launch-template',
      'create-launch-template',
      'create-fleet',
      'create-fleet',
      'run-instances',
      'run-instances',
      'use-launch-template',
      'use-existing-resources',
      'pass-node-role',
      // Creating the profile (request tags), then the calls on the existing one (resource tags).
      'manage-instance-profile',
      'manage-instance-profile',
      'list-instance-profiles',
      'describe-ec2',
      'describe-cluster',
      'read-ssm-parameters',
    ]);
    expect(plan.requests.every((request) => request.principalArn === CONTROLLER_ROLE)).toBe(true);
  });

  it('sends the create calls with Karpenter request tags, and ec2:CreateAction only with their CreateTags', () => {
    const requests = buildSimulations(inputFor('default')).requests;
    const fleet = requests.filter((request) => request.kind === 'create-fleet');
    const resourceArns = [
      `${EC2}:fleet/*`,
      `${EC2}:instance/*`,
      `${EC2}:volume/*`,
      `${EC2}:network-interface/*`,
    ];

    // AWS sets ec2:CreateAction on the CreateTags of a tag-on-create, not on the create call.
    expect(fleet).toMatchObject([
      { actions: ['ec2:CreateFleet'], resourceArns, context: REQUEST_TAGS_DEFAULT },
      {
        actions: ['ec2:CreateTags'],
        resourceArns,
        context: [
          ...REQUEST_TAGS_DEFAULT,
          { key: 'ec2:CreateAction', type: 'string', values: ['CreateFleet'] },
        ],
      },
    ]);
    const template = requests.filter((request) => request.kind === 'create-launch-template');
    expect(template.map((request) => request.context.at(-1)?.key)).toEqual([
      'aws:TagKeys',
      'ec2:CreateAction',
    ]);
  });

  it('simulates the launch template apart from untagged resources, with its resource tags', () => {
    const requests = buildSimulations(inputFor('default')).requests;

    const template = byKind(requests, 'use-launch-template');
    const existing = byKind(requests, 'use-existing-resources');

    expect(template.resourceArns).toEqual([`${EC2}:launch-template/*`]);
    expect(template.context).toContainEqual({
      key: 'aws:ResourceTag/kubernetes.io/cluster/demo',
      type: 'string',
      values: ['owned'],
    });
    expect(existing.resourceArns).toEqual([
      'arn:aws:ec2:us-east-1::image/ami-0123456789abcdef0',
      'arn:aws:ec2:us-east-1::snapshot/*',
      `${EC2}:subnet/subnet-aaa`,
      `${EC2}:subnet/subnet-bbb`,
      `${EC2}:security-group/sg-111`,
    ]);
    expect(existing.context).toEqual(REQUEST_TAGS_DEFAULT);
    expect(existing.context.some((entry) => entry.key.startsWith('aws:ResourceTag/'))).toBe(false);
  });

  it('passes the node role to ec2.amazonaws.com', () => {
    const request = byKind(buildSimulations(inputFor('default')).requests, 'pass-node-role');

    expect(request).toMatchObject({
      actions: ['iam:PassRole'],
      resourceArns: [NODE_ROLE],
      context: [
        { key: 'aws:RequestedRegion', type: 'string', values: ['us-east-1'] },
        { key: 'iam:PassedToService', type: 'string', values: ['ec2.amazonaws.com'] },
      ],
    });
  });

  it("simulates instance-profile management on Karpenter's profile path, with the tags each call carries", () => {
    const [create, existing, ...rest] = buildSimulations(inputFor('default')).requests.filter(
      (request) => request.kind === 'manage-instance-profile'
    );

    expect(rest).toEqual([]);
    for (const request of [create, existing]) {
      expect(request?.resourceArns).toEqual([
        'arn:aws:iam::111122223333:instance-profile/karpenter/us-east-1/demo/uid-default/demo_1234567890',
      ]);
    }
    // The new profile has no tags yet: its tags are the request's.
    expect(create?.actions).toEqual(['iam:CreateInstanceProfile']);
    expect(create?.resourceTagsKnown).toBe(true);
    expect(create?.context.map((entry) => entry.key)).toEqual([
      'aws:RequestTag/eks:eks-cluster-name',
      'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass',
      'aws:RequestTag/kubernetes.io/cluster/demo',
      'aws:RequestTag/team',
      'aws:RequestTag/topology.kubernetes.io/region',
      'aws:RequestedRegion',
      'aws:TagKeys',
    ]);
    // The existing profile carries Karpenter's tags; these calls send none.
    expect(existing?.actions).toEqual([
      'iam:GetInstanceProfile',
      'iam:AddRoleToInstanceProfile',
      'iam:RemoveRoleFromInstanceProfile',
      'iam:DeleteInstanceProfile',
    ]);
    expect(existing?.context.map((entry) => entry.key)).toEqual([
      'aws:RequestedRegion',
      'aws:ResourceTag/eks:eks-cluster-name',
      'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass',
      'aws:ResourceTag/kubernetes.io/cluster/demo',
      'aws:ResourceTag/team',
      'aws:ResourceTag/topology.kubernetes.io/region',
    ]);
  });

  it("uses the profile's role, the capacity reservation and the custom parameter in instanceProfile mode", () => {
    const requests = buildSimulations(inputFor('gpu')).requests;

    expect(requests.map((request) => request.kind)).not.toContain('manage-instance-profile');
    expect(byKind(requests, 'pass-node-role').resourceArns).toEqual([GPU_NODE_ROLE]);
    expect(byKind(requests, 'use-existing-resources').resourceArns).toContain(
      `${EC2}:capacity-reservation/cr-0abc`
    );
    expect(byKind(requests, 'read-ssm-parameters').resourceArns).toEqual([
      'arn:aws:ssm:us-east-1:111122223333:parameter/team/gpu/ami',
    ]);
    // No NodePool uses `gpu`: Karpenter's validation sends an empty nodepool tag.
    expect(byKind(requests, 'create-fleet').context).toContainEqual({
      key: 'aws:RequestTag/karpenter.sh/nodepool',
      type: 'string',
      values: [''],
    });
  });

  it('uses the .cn service principal and partition in China regions', () => {
    const cluster = aCluster({ region: 'cn-north-1', partition: 'aws-cn' });
    const controller = aControllerRole({ roleArn: 'arn:aws-cn:iam::111122223333:role/Karpenter' });

    const request = byKind(
      buildSimulations(inputFor('default', aPermissionsInventory(), cluster, controller)).requests,
      'pass-node-role'
    );

    expect(request.resourceArns).toEqual([
      'arn:aws-cn:iam::111122223333:role/KarpenterNodeRole-demo',
    ]);
    expect(request.context).toContainEqual({
      key: 'iam:PassedToService',
      type: 'string',
      values: ['ec2.amazonaws.com.cn'],
    });
  });

  it('adds Pod Identity session tags as aws:PrincipalTag to every simulation', () => {
    const controller = aControllerRole({
      source: 'pod-identity',
      sessionTags: { 'eks-cluster-name': 'demo', 'kubernetes-namespace': 'kube-system' },
    });

    const requests = buildSimulations(
      inputFor('gpu', aPermissionsInventory(), aCluster(), controller)
    ).requests;

    for (const request of requests) {
      expect(request.context).toContainEqual({
        key: 'aws:PrincipalTag/eks-cluster-name',
        type: 'string',
        values: ['demo'],
      });
    }
  });

  it('records a gap, and skips existing resources, when the class resolved nothing', () => {
    const input = {
      ...inputFor('default'),
      launch: unavailable<never>('throttled', 'DescribeImages throttled'),
    };

    const plan = buildSimulations(input);

    expect(plan.gaps).toEqual([expect.objectContaining({ group: 'launch', reason: 'throttled' })]);
    expect(plan.requests.map((request) => request.kind)).not.toContain('use-existing-resources');
  });

  it('simulates no launch, and records a gap naming the NodePools, when they could not be read', () => {
    // Prepare
    const input = {
      ...inputFor('default'),
      nodePools: unavailable<never>('access-denied', 'HTTP 403 on /apis/karpenter.sh/v1/nodepools'),
    };
    // Act
    const plan = buildSimulations(input);
    // Assess
    expect(plan.gaps).toEqual([
      {
        group: 'launch',
        reason: 'access-denied',
        message: expect.stringContaining('NodePools could not be read'),
      },
    ]);
    expect(plan.requests.map((request) => request.group)).not.toContain('launch');
    expect(
      plan.requests.flatMap((request) => request.context.map((entry) => entry.key))
    ).not.toContain('aws:RequestTag/karpenter.sh/nodepool');
    expect(new Set(plan.requests.map((request) => request.group))).toEqual(
      new Set(['pass-node-role', 'manage-instance-profile', 'discover'])
    );
  });

  it('takes the NodePools from the inventory, and their read failure from the cluster state', () => {
    // Prepare
    const forbidden = unavailable<never>('access-denied', 'HTTP 403');
    const cluster = aCluster({
      state: { ...aClusterState({ irsaRoleArn: CONTROLLER_ROLE }), nodePools: forbidden },
    });
    // Act
    const read = inputFor('default').nodePools;
    const unread = inputFor('default', aPermissionsInventory({ clusters: [cluster] })).nodePools;
    // Assess
    expect(read).toEqual({ status: 'ok', value: ['general'] });
    expect(unread).toMatchObject({
      status: 'unavailable',
      reason: 'access-denied',
      message: 'the NodePools of cluster "demo" could not be read (access-denied): HTTP 403',
    });
  });

  it('gives identical simulations of different classes the same key', () => {
    const inventory = aPermissionsInventory();
    const discovery = (name: string) =>
      byKind(buildSimulations(inputFor(name, inventory)).requests, 'describe-ec2');

    expect(discovery('default').key).toBe(discovery('gpu').key);
    expect(
      simulationKey({ principalArn: 'p', actions: ['b', 'a'], resourceArns: ['*'], context: [] })
    ).toBe(
      simulationKey({ principalArn: 'p', actions: ['a', 'b'], resourceArns: ['*'], context: [] })
    );
  });

  it('keeps the key it always had: the hash of the sorted request as JSON', () => {
    // The key was stableHash of this JSON text; it is now hashed without building the text.
    const written = (
      request: Pick<SimulationRequest, 'principalArn' | 'actions' | 'resourceArns' | 'context'>
    ) =>
      stableHash(
        JSON.stringify([
          request.principalArn,
          [...request.actions].sort(),
          [...request.resourceArns].sort(),
          [...request.context]
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
            .map((entry) => [entry.key, entry.type, entry.values]),
        ])
      );
    // Quotes, backslashes, controls, lone and paired surrogates: every escape JSON writes.
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    const entry: fc.Arbitrary<ContextEntry> = fc.record({
      key: fc.oneof(text, fc.constantFrom('aws:TagKeys', 'aws:RequestTag/a', 'ec2:Vpc')),
      type: fc.constantFrom('string' as const, 'stringList' as const, 'boolean' as const),
      values: fc.array(text, { maxLength: 3 }),
    });
    fc.assert(
      fc.property(
        fc.record({
          principalArn: text,
          actions: fc.array(text, { maxLength: 4 }),
          resourceArns: fc.array(text, { maxLength: 4 }),
          context: fc.array(entry, { maxLength: 5 }),
        }),
        (request) => {
          expect(simulationKey(request)).toBe(written(request));
        }
      ),
      { numRuns: 200 }
    );
    expect(
      simulationKey({
        principalArn: 'arn:aws:iam::111122223333:role/ctrl',
        actions: ['ec2:RunInstances'],
        resourceArns: ['*'],
        context: [{ key: 'k', type: 'string', values: ['a"b\\c\n\u2028ノ🚀'] }],
      })
    ).toBe(
      stableHash(
        JSON.stringify([
          'arn:aws:iam::111122223333:role/ctrl',
          ['ec2:RunInstances'],
          ['*'],
          [['k', 'string', ['a"b\\c\n\u2028ノ🚀']]],
        ])
      )
    );
  });

  it('requires Describe actions added in later releases only on those releases', () => {
    expect(describeActions(parseKarpenterVersion('1.10.0'))).not.toContain(
      'ec2:DescribePlacementGroups'
    );
    expect(describeActions(parseKarpenterVersion('1.12.0'))).toEqual(
      expect.arrayContaining(['ec2:DescribePlacementGroups', 'ec2:DescribeInstanceStatus'])
    );
    // Unknown version: the worst case, every action of the newest release.
    expect(describeActions(undefined)).toContain('ec2:DescribeInstanceStatus');
  });

  it('does not require ec2:DescribeCapacityReservations before v1.3.0, which added it (#7726)', () => {
    expect(describeActions(parseKarpenterVersion('1.2.2'))).not.toContain(
      'ec2:DescribeCapacityReservations'
    );
    expect(describeActions(parseKarpenterVersion('1.3.0'))).toContain(
      'ec2:DescribeCapacityReservations'
    );
  });

  describe('follows the Karpenter release of the cluster', () => {
    const atVersion = (version: string | undefined) => {
      const parsed = version === undefined ? undefined : parseKarpenterVersion(version);
      const { karpenterVersion: _, ...base } = aCluster();
      return buildSimulations(
        inputFor('default', aPermissionsInventory(), {
          ...base,
          ...(parsed === undefined ? {} : { karpenterVersion: parsed }),
        })
      ).requests;
    };
    const kinds = (requests: readonly SimulationRequest[]) => requests.map((r) => r.kind);

    it('asks for iam:ListInstanceProfiles only from v1.7.0, which first calls it', () => {
      expect(kinds(atVersion('1.6.8'))).not.toContain('list-instance-profiles');
      expect(kinds(atVersion('1.7.0'))).toContain('list-instance-profiles');
      expect(kinds(atVersion(undefined))).toContain('list-instance-profiles');
    });

    it('asks for iam:TagInstanceProfile only on v1.0, the last release that calls it', () => {
      const actions = (version: string | undefined) =>
        atVersion(version)
          .filter((request) => request.kind === 'manage-instance-profile')
          .flatMap((request) => request.actions);
      expect(actions('1.0.14')).toContain('iam:TagInstanceProfile');
      expect(actions('1.1.0')).not.toContain('iam:TagInstanceProfile');
      // Unknown: the newest release, which no longer calls it.
      expect(actions(undefined)).not.toContain('iam:TagInstanceProfile');
    });

    it("names the profile under Karpenter's IAM path from v1.7.0, at the root before", () => {
      const profile = (version: string) =>
        byKind(atVersion(version), 'manage-instance-profile').resourceArns;
      expect(profile('1.6.8')).toEqual([
        'arn:aws:iam::111122223333:instance-profile/demo_1234567890',
      ]);
      expect(profile('1.7.0')).toEqual([
        'arn:aws:iam::111122223333:instance-profile/karpenter/us-east-1/demo/uid-default/demo_1234567890',
      ]);
    });
  });

  describe('supplies keys AWS sets from existing resources when the policies use them', () => {
    const launch = ok({
      imageIds: ['ami-1'],
      subnetIds: ['subnet-a', 'subnet-b', 'subnet-c'],
      securityGroupIds: ['sg-1'],
      capacityReservationIds: [],
      known: new Map([
        ['ami-1', { tags: {} }],
        ['subnet-a', { tags: { Env: 'prod' }, vpcId: 'vpc-1', availabilityZone: 'us-east-1a' }],
        ['subnet-b', { tags: { Env: 'prod' }, vpcId: 'vpc-1', availabilityZone: 'us-east-1a' }],
        ['subnet-c', { tags: { Env: 'dev', Name: 'c' }, vpcId: 'vpc-1' }],
        ['sg-1', { tags: { Name: 'nodes' }, vpcId: 'vpc-1' }],
      ]),
    });
    const existing = (policyKeys?: string[]) =>
      buildSimulations({
        ...inputFor('default'),
        launch,
        ...(policyKeys === undefined
          ? {}
          : { policyKeys: new Map(policyKeys.map((key) => [key.toLowerCase(), key])) }),
      })
        .requests.filter((request) => request.kind === 'use-existing-resources')
        .map((request) => ({
          arns: request.resourceArns.map((arn) => arn.split(':').at(-1)),
          extra: request.context
            .filter((entry) => !entry.key.startsWith('aws:RequestTag/'))
            .filter((entry) => !['aws:TagKeys', 'aws:RequestedRegion'].includes(entry.key))
            .map((entry) => `${entry.key}=${entry.values.join(',')}`),
          known: request.resourceTagsKnown === true,
        }));

    it('keeps one simulation, not flagged, when the policies were not read', () => {
      expect(existing()).toEqual([
        {
          arns: [
            'image/ami-1',
            'snapshot/*',
            'subnet/subnet-a',
            'subnet/subnet-b',
            'subnet/subnet-c',
            'security-group/sg-1',
          ],
          extra: [],
          known: false,
        },
      ]);
    });

    it('groups resources by the values of the keys the policies use; unread resources stay apart', () => {
      expect(existing(['ec2:ResourceTag/env', 'ec2:Vpc', 'aws:SourceIp'])).toEqual([
        { arns: ['image/ami-1'], extra: [], known: true },
        { arns: ['snapshot/*'], extra: [], known: false },
        {
          arns: ['subnet/subnet-a', 'subnet/subnet-b'],
          // Tag keys in condition keys are matched whatever their case, as IAM does.
          extra: [
            'ec2:ResourceTag/env=prod',
            'ec2:Vpc=arn:aws:ec2:us-east-1:111122223333:vpc/vpc-1',
          ],
          known: true,
        },
        {
          arns: ['subnet/subnet-c'],
          extra: [
            'ec2:ResourceTag/env=dev',
            'ec2:Vpc=arn:aws:ec2:us-east-1:111122223333:vpc/vpc-1',
          ],
          known: true,
        },
        {
          arns: ['security-group/sg-1'],
          extra: ['ec2:Vpc=arn:aws:ec2:us-east-1:111122223333:vpc/vpc-1'],
          known: true,
        },
      ]);
    });

    it("does not take another account's image as known: its owner's tags are not shown", () => {
      const shared = ok({
        imageIds: ['ami-amazon'],
        subnetIds: [],
        securityGroupIds: [],
        capacityReservationIds: [],
        known: new Map([['ami-amazon', { tags: {}, ownerId: '602401143452' }]]),
      });
      const requests = buildSimulations({
        ...inputFor('default'),
        launch: shared,
        policyKeys: new Map([['aws:resourcetag/env', 'aws:ResourceTag/env']]),
      }).requests.filter((request) => request.kind === 'use-existing-resources');

      expect(requests.map((request) => [request.resourceArns, request.resourceTagsKnown])).toEqual([
        [
          ['arn:aws:ec2:us-east-1::image/ami-amazon', 'arn:aws:ec2:us-east-1::snapshot/*'],
          undefined,
        ],
      ]);
    });

    it('adds ec2:Region to every EC2 request when the policies use it', () => {
      const requests = buildSimulations({
        ...inputFor('default'),
        policyKeys: new Map([['ec2:region', 'ec2:Region']]),
      }).requests;
      const ec2 = requests.filter((request) => request.actions.some((a) => a.startsWith('ec2:')));
      expect(ec2.length).toBeGreaterThan(0);
      for (const request of ec2)
        expect(request.context).toContainEqual({
          key: 'ec2:Region',
          type: 'string',
          values: ['us-east-1'],
        });
    });
  });
});
