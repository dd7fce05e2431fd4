import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fleetLowerBound, lowerBoundWallTimeMs } from '../../bench/lower-bound.js';
import { iamWallFloorSeconds, simulationFloor } from '../../bench/simulation-floor.js';

const BENCH = resolve(import.meta.dirname, '../../bench');

/** Relative import specifiers of a TypeScript file. */
function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(/(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]/g)].map(
    (match) => match[1] ?? ''
  );
}

function cluster(name: string, nodeClasses: readonly Record<string, unknown>[]) {
  return {
    name,
    version: '1.33',
    podIdentityAssociations: [
      {
        namespace: 'kube-system',
        serviceAccount: 'karpenter',
        roleArn: `arn:aws:iam::111122223333:role/Controller-${name}`,
      },
    ],
    kubernetes: {
      karpenterNamespace: 'kube-system',
      karpenterServiceAccount: 'karpenter',
      ec2NodeClasses: nodeClasses.map((spec, index) => ({
        metadata: { name: `nc-${index}` },
        spec,
      })),
    },
  };
}

function nodeClass(name: string, ami: Record<string, unknown>, role = `Node-${name}`) {
  return {
    amiSelectorTerms: [ami],
    role,
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': name } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': name } }],
  };
}

describe('fleet lower bound', () => {
  it('imports no scanner code: nothing from lambda/, directly or through bench files', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const specifier of importsOf(file)) {
        expect(specifier, `${file} imports ${specifier}`).not.toMatch(/lambda\//);
        if (specifier.startsWith('.'))
          visit(join(dirname(file), specifier.replace(/\.js$/, '.ts')));
      }
    };
    visit(join(BENCH, 'lower-bound.ts'));
    expect(seen.size).toBeGreaterThan(1);
  });

  it('counts distinct selectors, roles and (controller, value-relevant context) pairs', () => {
    const world = {
      region: 'us-east-1',
      iam: {
        roles: [
          { RoleName: 'Node-a', AttachedPolicies: [] },
          { RoleName: 'Controller-a', AttachedPolicies: [] },
          {
            RoleName: 'Controller-b',
            AttachedPolicies: [{ PolicyArn: 'arn:aws:iam::1:policy/k' }],
          },
        ],
        instanceProfiles: [],
      },
      eks: {
        clusters: [
          cluster('a', [
            nodeClass('a', { alias: 'al2023@v20251001' }),
            nodeClass('a', { alias: 'AL2023@v20251001' }),
            nodeClass('a', { name: 'team-*' }),
          ]),
          cluster('b', [
            nodeClass('b', { alias: 'al2023@v20251001' }),
            nodeClass('b', { name: 'team-*', owner: 'self' }),
            nodeClass('b', { id: 'ami-0b' }),
          ]),
        ],
      },
    };

    const bound = fleetLowerBound(world);

    expect(bound.byOperation).toEqual({
      // the alias's images (case folded) and ami-0b ORed in one image-id call; team-* with the
      // default owners and team-* owned by self are name filters of two owner sets
      'ec2:DescribeImages': 3,
      // both clusters' discovery tags: one filter, its values ORed in one call
      'ec2:DescribeSubnets': 1,
      'ec2:DescribeSecurityGroups': 1,
      // the alias' 5 published parameters: one GetParameters
      'ssm:GetParameters': 1,
      // Karpenter's default volumes are encrypted with the account's default key: its settings
      // once (the AWS managed key itself is never read)
      'ec2:GetEbsEncryptionByDefault': 1,
      'ec2:GetEbsDefaultKmsKeyId': 1,
      // Node-a, Node-b, Controller-a, Controller-b; attached policies only of roles that exist
      'iam:GetRole': 4,
      'iam:ListAttachedRolePolicies': 3,
      'iam:ListRolePolicies': 2,
      'iam:GetPolicy': 1,
      'iam:GetPolicyVersion': 1,
      // a: 7 contexts, one call each (nothing compared); b's attached policy is not in the world,
      // so every value counts: per class launch, 3 tag-on-create actions, launch template, 2
      // profile contexts (21), one PassRole and one discovery context
      'iam:SimulatePrincipalPolicy': 30,
    });
    expect(bound.simulationContexts).toBe(30);
  });

  it('reads each KMS key a volume names once, and the policy and grants of customer keys only', () => {
    const withKey = (kmsKeyID: string) => ({
      ...nodeClass('a', { id: 'ami-0a' }),
      blockDeviceMappings: [{ deviceName: '/dev/xvda', ebs: { encrypted: true, kmsKeyID } }],
    });
    const key = (id: string, manager: string, aliases: string[] = []) => ({
      KeyMetadata: { KeyId: id, Arn: `arn:aws:kms:us-east-1:1:key/${id}`, KeyManager: manager },
      Aliases: aliases,
    });
    const world = {
      region: 'us-east-1',
      iam: { roles: [], instanceProfiles: [] },
      kms: { keys: [key('k-1', 'CUSTOMER', ['alias/nodes']), key('k-2', 'AWS')] },
      eks: {
        clusters: [
          cluster('a', [
            withKey('alias/nodes'),
            withKey('alias/nodes'),
            withKey('arn:aws:kms:us-east-1:1:key/k-1'),
            withKey('k-2'),
            withKey('alias/aws/ebs'),
          ]),
        ],
      },
    };

    const bound = fleetLowerBound(world).byOperation;

    // alias/nodes and the ARN are one key named two ways: two DescribeKeys, one policy read.
    expect(bound['kms:DescribeKey']).toBe(3);
    expect(bound['kms:GetKeyPolicy']).toBe(1);
    expect(bound['kms:ListGrants']).toBe(1);
    // Every volume names its key: the account's default is never needed.
    expect(bound['ec2:GetEbsDefaultKmsKeyId']).toBeUndefined();
  });

  it('reads the region’s instance types and offerings once, by page, when a NodePool launches', () => {
    const type = (name: string, arch = 'x86_64', virtualization = 'hvm') => ({
      InstanceType: name,
      SupportedVirtualizationTypes: [virtualization],
      ProcessorInfo: { SupportedArchitectures: [arch] },
    });
    const types = [
      ...Array.from({ length: 150 }, (_, index) => type(`m${index}.large`)),
      ...Array.from({ length: 100 }, (_, index) => type(`c${index}g.large`, 'arm64')),
      // Karpenter's query leaves these out.
      type('old.i386', 'i386'),
      type('old.pv', 'x86_64', 'paravirtual'),
    ];
    const offerings = Array.from({ length: 2500 }, (_, index) => ({
      instanceType: `m${index % 150}.large`,
      zone: `us-east-1${'abcdef'[index % 6]}`,
    }));
    const pooled = cluster('a', [nodeClass('a', { id: 'ami-0a' })]);
    const withPool = {
      ...pooled,
      kubernetes: {
        ...pooled.kubernetes,
        nodePools: [
          { spec: { template: { spec: { nodeClassRef: { name: 'nc-0' }, requirements: [] } } } },
        ],
      },
    };
    const world = (clusters: unknown[]) => ({
      region: 'us-east-1',
      instanceTypes: { 'us-east-1': types, 'eu-west-1': types },
      instanceTypeOfferings: { 'us-east-1': offerings },
      iam: { roles: [], instanceProfiles: [] },
      eks: { clusters },
    });

    const launching = fleetLowerBound(world([withPool])).byOperation;
    const idle = fleetLowerBound(world([pooled])).byOperation;

    // 250 of Karpenter's types at 100 a page; 2,500 offerings at 1,000 a page.
    expect(launching['ec2:DescribeInstanceTypes']).toBe(3);
    expect(launching['ec2:DescribeInstanceTypeOfferings']).toBe(3);
    expect(idle).not.toHaveProperty('ec2:DescribeInstanceTypes');
    expect(idle).not.toHaveProperty('ec2:DescribeInstanceTypeOfferings');
  });

  it('merges literal values of one filter, up to 200 a call; wildcards and tag pairs stand alone', () => {
    const withTerms = (subnetSelectorTerms: unknown[], securityGroupSelectorTerms: unknown[]) => ({
      amiSelectorTerms: [{ id: 'ami-0a' }],
      role: 'Node',
      subnetSelectorTerms,
      securityGroupSelectorTerms,
    });
    const discovery = Array.from({ length: 201 }, (_, index) =>
      withTerms([{ tags: { team: `t-${index}` } }], [{ name: `sg-${index % 2}` }])
    );
    const bound = fleetLowerBound({
      region: 'us-east-1',
      iam: { roles: [] },
      eks: {
        clusters: [
          cluster('a', [
            ...discovery,
            withTerms([{ id: 'subnet-1' }, { id: 'subnet-*' }], [{ id: 'sg-1' }]),
            withTerms([{ tags: { team: 'x', zone: 'a' } }], [{ tags: { team: '*' } }]),
          ]),
        ],
      },
    });
    // 201 team values → 2 calls; one NodeClass' ids with a wildcard → 1; a two-tag term → 1
    expect(bound.byOperation['ec2:DescribeSubnets']).toBe(4);
    // group-name (2 values), group-id (1), tag-key (1)
    expect(bound.byOperation['ec2:DescribeSecurityGroups']).toBe(3);
  });

  it('shares a controller role across clusters: contexts without cluster-named keys merge', () => {
    const shared = (name: string) => ({
      ...cluster(name, [nodeClass(name, { alias: 'al2023@v20251001' })]),
      podIdentityAssociations: [
        {
          namespace: 'kube-system',
          serviceAccount: 'karpenter',
          roleArn: 'arn:aws:iam::111122223333:role/Shared',
        },
      ],
    });
    const bound = fleetLowerBound({
      region: 'us-east-1',
      iam: { roles: [{ RoleName: 'Shared' }] },
      eks: { clusters: [shared('a'), shared('b')] },
    });
    // 7 contexts per cluster; PassRole and discovery merge (12). The merged discovery context holds
    // 11 Describe actions, ListInstanceProfiles, DescribeCluster and GetParameter (14) on `*`, two
    // clusters and 5 parameters (8): 112 results, one page of 1,000 (two at IAM's default 100).
    expect(bound.simulationContexts).toBe(12);
    expect(bound.byOperation['iam:SimulatePrincipalPolicy']).toBe(12);
    expect(bound.byOperation['iam:ListRolePolicies']).toBe(1);
  });

  it('wall time: the slowest bucket drains past its burst at its refill rate, plus one latency', () => {
    const limits = {
      ec2: { capacity: 100, refillPerSecond: 20 },
      ssm: { capacity: 40, refillPerSecond: 40 },
      iam: { capacity: 20, refillPerSecond: 10 },
      iamSimulate: { capacity: 10, refillPerSecond: 5 },
    };
    expect(
      lowerBoundWallTimeMs(
        { 'ec2:DescribeImages': 120, 'iam:SimulatePrincipalPolicy': 20, 'iam:GetRole': 5 },
        limits,
        40
      )
    ).toBe(2040);
    expect(lowerBoundWallTimeMs({}, limits, 40)).toBe(0);
  });
});

// Small fleets whose simulation floor is worked out by hand in each test's comments.
const ACCOUNT = '111122223333';
const ALIAS_A = 'al2023@v20251001';
const ALIAS_B = 'al2023@v20251015';

/** The 5 SSM parameters of an AL2023 alias (x86_64 standard/nvidia/neuron, arm64 standard/nvidia). */
function aliasParameterNames(alias: string): string[] {
  const version = alias.split('@')[1];
  const variants = [
    ['x86_64', 'standard'],
    ['x86_64', 'nvidia'],
    ['x86_64', 'neuron'],
    ['arm64', 'standard'],
    ['arm64', 'nvidia'],
  ];
  return variants.map(
    ([arch, variant]) =>
      `/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/${arch}/${variant}/amazon-eks-node-al2023-${arch}-${variant}-1.33-${version}/image_id`
  );
}

interface FloorClass {
  readonly name: string;
  readonly ami: Record<string, unknown>;
  readonly nodePool?: string;
  readonly instanceProfile?: string;
  readonly spot?: boolean;
}

function floorWorld(
  classes: readonly FloorClass[],
  options: {
    readonly controller?: Record<string, unknown>;
    readonly policies?: unknown[];
    readonly karpenterVersion?: string;
    readonly irsa?: boolean;
  } = {}
) {
  const parameters = Object.fromEntries(
    [ALIAS_A, ALIAS_B].flatMap((alias, a) =>
      aliasParameterNames(alias).map((name, index) => [name, `ami-${a}${index}`])
    )
  );
  const discovery = [{ Key: 'karpenter.sh/discovery', Value: 'c' }];
  const controllerArn = `arn:aws:iam::${ACCOUNT}:role/Ctl`;
  return {
    account: ACCOUNT,
    region: 'us-east-1',
    ec2: {
      images: Object.values(parameters).map((id) => ({
        ImageId: id,
        OwnerId: '602401143452',
        ImageOwnerAlias: 'amazon',
      })),
      subnets: ['subnet-1', 'subnet-2'].map((id) => ({
        SubnetId: id,
        VpcId: 'vpc-1',
        Tags: discovery,
      })),
      securityGroups: [{ GroupId: 'sg-1', VpcId: 'vpc-1', Tags: discovery }],
    },
    ssm: { parameters },
    iam: {
      roles: [
        { RoleName: 'Ctl', AttachedPolicies: [], ...options.controller },
        { RoleName: 'Node', AttachedPolicies: [] },
      ],
      instanceProfiles: [
        {
          InstanceProfileName: 'c-nodes',
          Roles: [{ RoleName: 'Node', Arn: `arn:aws:iam::${ACCOUNT}:role/Node` }],
        },
      ],
      policies: options.policies ?? [],
    },
    eks: {
      clusters: [
        {
          name: 'c',
          arn: `arn:aws:eks:us-east-1:${ACCOUNT}:cluster/c`,
          podIdentityAssociations: options.irsa
            ? []
            : [{ namespace: 'kube-system', serviceAccount: 'karpenter', roleArn: controllerArn }],
          kubernetes: {
            karpenterVersion: options.karpenterVersion ?? '1.8.0',
            serviceAccounts: options.irsa
              ? [
                  {
                    namespace: 'kube-system',
                    name: 'karpenter',
                    annotations: { 'eks.amazonaws.com/role-arn': controllerArn },
                  },
                ]
              : [],
            ec2NodeClasses: classes.map((nodeClass) => ({
              metadata: { name: nodeClass.name },
              spec: {
                amiSelectorTerms: [nodeClass.ami],
                ...(nodeClass.instanceProfile
                  ? { instanceProfile: nodeClass.instanceProfile }
                  : { role: 'Node' }),
                subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
                securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c' } }],
              },
            })),
            nodePools: classes.flatMap((nodeClass) =>
              nodeClass.nodePool === undefined
                ? []
                : [
                    {
                      metadata: { name: nodeClass.nodePool },
                      spec: {
                        template: {
                          spec: {
                            nodeClassRef: { name: nodeClass.name },
                            requirements: nodeClass.spot
                              ? [
                                  {
                                    key: 'karpenter.sh/capacity-type',
                                    operator: 'In',
                                    values: ['spot'],
                                  },
                                ]
                              : [],
                          },
                        },
                      },
                    },
                  ]
            ),
          },
        },
      ],
    },
  };
}

const twoClasses = (secondAlias = ALIAS_A): FloorClass[] => [
  { name: 'nc-a', ami: { alias: ALIAS_A }, nodePool: 'np-a' },
  { name: 'nc-b', ami: { alias: secondAlias }, nodePool: 'np-b' },
];

describe('simulation floor', () => {
  it('merges NodeClasses whose contexts differ only in values no policy compares', () => {
    const floor = simulationFloor(floorWorld(twoClasses()));
    // Contexts: launch; CreateTags with ec2:CreateAction; use of the launch template (resource
    // tags); PassRole; CreateInstanceProfile (request tags); the other profile calls (resource
    // tags); discovery (region only). Pairs: launch 8 on created resources + RunInstances and
    // CreateFleet on 5 images, snapshot/*, 2 subnets, 1 group (18) = 26; CreateTags 5; template 2;
    // PassRole 1; profile 1 + 4; discovery 9 Describe (v1.8) + ListInstanceProfiles on `*`,
    // DescribeCluster, GetParameter on 5 names = 16 (12 actions × 7 resources = 84 ≤ 100).
    expect(floor).toMatchObject({ contexts: 7, pairs: 55, byPairs: 7, calls: 7 });
    expect(floor.byContext.map((context) => [context.pairs, context.calls])).toEqual([
      [26, 1],
      [5, 1],
      [2, 1],
      [1, 1],
      [1, 1],
      [4, 1],
      [16, 1],
    ]);
  });

  it('counts a second call where one context fits a page but not one actions × resources call (100 a page)', () => {
    const floor = simulationFloor(floorWorld(twoClasses(ALIAS_B)), 100);
    // Launch gains 5 images (36 pairs); discovery names 10 parameters: 21 pairs, one page, but
    // 12 actions × 12 resources = 144 in one call. 36 + 5 + 2 + 1 + 1 + 4 + 21 = 70.
    expect(floor).toMatchObject({ contexts: 7, pairs: 70, byPairs: 7, calls: 8 });
    expect(floor.byContext.at(-1)).toMatchObject({
      actions: 12,
      resources: 12,
      pairs: 21,
      calls: 2,
    });
  });

  it('splits on values the controller policies compare, not on presence-only tests', () => {
    const statement = (Condition: Record<string, unknown>) => ({
      PolicyName: 'p',
      PolicyDocument: encodeURIComponent(
        JSON.stringify({ Statement: [{ Effect: 'Allow', Action: '*', Resource: '*', Condition }] })
      ),
    });
    const presenceOnly = simulationFloor(
      floorWorld(twoClasses(), {
        controller: {
          RolePolicyList: [
            statement({
              Null: { 'aws:RequestTag/karpenter.k8s.aws/ec2nodeclass': 'false' },
              StringLike: { 'aws:RequestTag/karpenter.sh/nodepool': '*' },
            }),
          ],
        },
      })
    );
    expect(presenceOnly).toMatchObject({ contexts: 7, calls: 7 });

    const compared = simulationFloor(
      floorWorld(twoClasses(), {
        controller: {
          RolePolicyList: [
            statement({ StringEquals: { 'aws:RequestTag/karpenter.sh/nodepool': 'np-a' } }),
          ],
        },
      })
    );
    // Launch, CreateTags and launch-template contexts split per NodePool (+3); the profile
    // contexts carry no nodepool tag. Pairs: 55 + 26 + 5 + 2.
    expect(compared).toMatchObject({ contexts: 10, pairs: 88, byPairs: 10, calls: 10 });
  });

  it('compares every value when a controller policy cannot be read', () => {
    const floor = simulationFloor(
      floorWorld(twoClasses(), {
        controller: { AttachedPolicies: [{ PolicyArn: `arn:aws:iam::${ACCOUNT}:policy/missing` }] },
      })
    );
    // Per class: launch, 3 CreateTags (one per ec2:CreateAction), template, 2 profile contexts
    // (14); the classes share the node role (PassRole) and discovery.
    expect(floor).toMatchObject({ contexts: 16, calls: 16 });
  });

  it('needs ⌈pairs / page⌉ calls for a context over one page', () => {
    const ids = Array.from({ length: 60 }, (_, index) => `ami-x${index}`);
    const world = floorWorld([{ name: 'nc', ami: {}, nodePool: 'np' }]);
    const spec = world.eks.clusters[0]?.kubernetes.ec2NodeClasses[0]?.spec;
    if (spec === undefined) throw new Error('no class');
    spec.amiSelectorTerms = ids.map((id) => ({ id }));
    const large = simulationFloor(world, 100);
    // Launch: 8 + 2 × (60 images + snapshot/* + 2 subnets + 1 group) = 136 pairs → 2 calls of 100.
    // Discovery without parameters: 9 + 1 on `*`, DescribeCluster = 11 pairs.
    expect(large.byContext[0]).toMatchObject({ label: 'launch', pairs: 136, calls: 2 });
    expect(large).toMatchObject({ contexts: 7, byPairs: 8, calls: 8 });
    // IAM's largest page (1,000, what the scanner asks for) holds them in one.
    expect(simulationFloor(world).byContext[0]).toMatchObject({ pairs: 136, calls: 1 });
  });

  it('follows the release and the mode: no profile calls for instanceProfile, none listed before v1.7', () => {
    const profileMode = simulationFloor(
      floorWorld(
        [{ name: 'nc', ami: { alias: ALIAS_A }, nodePool: 'np', instanceProfile: 'c-nodes' }],
        {
          irsa: true,
        }
      )
    );
    // Launch, CreateTags, template, PassRole (the profile's role), discovery: 9 + DescribeCluster
    // + 5 parameters = 15 pairs (no ListInstanceProfiles without role mode).
    expect(profileMode).toMatchObject({ contexts: 5, calls: 5 });
    expect(profileMode.byContext.at(-1)).toMatchObject({ pairs: 15 });

    const v10 = simulationFloor(
      floorWorld([{ name: 'nc', ami: { alias: ALIAS_A }, nodePool: 'np' }], {
        karpenterVersion: '1.0.5',
      })
    );
    // v1.0: TagInstanceProfile (request and resource tags) is one more context; discovery has 8
    // Describe actions (no capacity reservations before v1.3) and no ListInstanceProfiles.
    expect(v10).toMatchObject({ contexts: 8, calls: 8 });
    expect(v10.byContext.at(-1)).toMatchObject({ pairs: 14 });
  });

  it('adds the Spot service-linked role when a NodePool allows Spot and the role is missing', () => {
    const floor = simulationFloor(
      floorWorld([{ name: 'nc', ami: { alias: ALIAS_A }, nodePool: 'np', spot: true }])
    );
    expect(floor).toMatchObject({ contexts: 8, calls: 8 });
    expect(floor.byContext.at(-1)).toMatchObject({ label: 'spot-service-linked-role', pairs: 1 });
  });

  it('IAM wall-time floor: the calls past the burst at the refill rate', () => {
    expect(iamWallFloorSeconds(320, { capacity: 10, refillPerSecond: 5 })).toBe(62);
    expect(iamWallFloorSeconds(8, { capacity: 10, refillPerSecond: 5 })).toBe(0);
  });
});
