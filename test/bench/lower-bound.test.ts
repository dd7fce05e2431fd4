import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fleetLowerBound, lowerBoundWallTimeMs } from '../../bench/lower-bound.js';

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
      // one alias selector (case folded), team-* (default owners), team-* owned by self, one id query
      'ec2:DescribeImages': 4,
      // both clusters' discovery tags: one filter, its values ORed in one call
      'ec2:DescribeSubnets': 1,
      'ec2:DescribeSecurityGroups': 1,
      // the alias' 5 published parameters: one GetParameters
      'ssm:GetParameters': 1,
      // Node-a, Node-b, Controller-a, Controller-b; attached policies only of roles that exist
      'iam:GetRole': 4,
      'iam:ListAttachedRolePolicies': 3,
      'iam:ListRolePolicies': 2,
      'iam:GetPolicy': 1,
      'iam:GetPolicyVersion': 1,
      'iam:SimulatePrincipalPolicy': 2,
    });
    expect(bound.simulationContexts).toBe(2);
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

  it('shares a controller role across clusters: one simulation per cluster it serves', () => {
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
    expect(bound.byOperation['iam:SimulatePrincipalPolicy']).toBe(2);
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
