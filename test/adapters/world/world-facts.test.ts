import {
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
  type Image as Ec2Image,
  type SecurityGroup as Ec2SecurityGroup,
  type Subnet as Ec2Subnet,
} from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { parameterNamesOf } from '../../../lambda/adapters/aws/keyed-fact-descriptors.js';
import { type World, WorldSchema } from '../../../lambda/adapters/world/schema.js';
import { createWorldAwsFacts } from '../../../lambda/adapters/world/world-facts.js';
import type { ImageQuery } from '../../../lambda/core/ports/aws-facts.js';

const ACCOUNT = '111122223333';
const NOW = new Date('2026-11-22T12:00:00Z');

const IMAGES = [
  {
    ImageId: 'ami-0000000000000a001',
    Name: 'platform-al2023-x86_64-2026.11.15',
    OwnerId: ACCOUNT,
    State: 'available',
    Architecture: 'x86_64',
    CreationDate: '2026-11-15T06:00:00.000Z',
    RootDeviceName: '/dev/xvda',
    BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: { VolumeSize: 30 } }],
    Tags: [{ Key: 'team', Value: 'platform' }],
  },
  {
    ImageId: 'ami-0000000000000a002',
    Name: 'platform-al2023-x86_64-2026.11.22',
    OwnerId: ACCOUNT,
    State: 'pending',
    Architecture: 'x86_64',
    CreationDate: '2026-11-22T01:00:00.000Z',
    Tags: [{ Key: 'team', Value: 'platform' }],
  },
  {
    ImageId: 'ami-0000000000000a003',
    Name: 'platform-al2023-x86_64-2026.10.01',
    OwnerId: '999988887777',
    State: 'available',
    Architecture: 'x86_64',
    CreationDate: '2026-10-01T00:00:00.000Z',
    Tags: [{ Key: 'team', Value: 'platform' }],
  },
  {
    ImageId: 'ami-0000000000000a004',
    Name: 'amazon-eks-node-al2023-x86_64-standard-1.32-v20251103',
    OwnerId: '602401143452',
    ImageOwnerAlias: 'amazon',
    State: 'available',
    Architecture: 'x86_64',
    CreationDate: '2025-11-04T00:00:00.000Z',
    DeprecationTime: '2026-01-01T00:00:00.000Z',
  },
  {
    ImageId: 'ami-0000000000000a005',
    Name: 'platform-al2023-x86_64-2026.09.01',
    OwnerId: ACCOUNT,
    State: 'disabled',
    Architecture: 'x86_64',
    CreationDate: '2026-09-01T00:00:00.000Z',
  },
];

const SUBNETS = [
  {
    SubnetId: 'subnet-01',
    VpcId: 'vpc-a',
    AvailableIpAddressCount: 100,
    Tags: [{ Key: 'karpenter.sh/discovery', Value: 'prod' }],
  },
  {
    SubnetId: 'subnet-02',
    VpcId: 'vpc-a',
    AvailableIpAddressCount: 0,
    Tags: [{ Key: 'karpenter.sh/discovery', Value: 'prod-edge' }],
  },
  { SubnetId: 'subnet-03', VpcId: 'vpc-b', Tags: [{ Key: 'Name', Value: 'other' }] },
];

const GROUPS = [
  { GroupId: 'sg-01', GroupName: 'nodes', VpcId: 'vpc-a' },
  { GroupId: 'sg-02', GroupName: 'nodes', VpcId: 'vpc-b' },
  { GroupId: 'sg-03', GroupName: 'nodes-extra', VpcId: 'vpc-a' },
];

function aWorld(overrides: Record<string, unknown> = {}): World {
  return WorldSchema.parse({
    version: 1,
    account: ACCOUNT,
    region: 'us-east-1',
    ec2: { images: IMAGES, subnets: SUBNETS, securityGroups: GROUPS, capacityReservations: [] },
    ...overrides,
  });
}

const ids = (items: readonly { id: string }[]): string[] => items.map((item) => item.id).sort();

describe('world AWS facts: DescribeImages semantics', () => {
  const port = createWorldAwsFacts({ world: aWorld(), now: NOW });

  it('applies Owners self/amazon, the name wildcard and the state filter', async () => {
    // Act
    const images = await port.describeImages({
      filters: [
        { name: 'name', values: ['platform-al2023-x86_64-*'] },
        { name: 'state', values: ['available'] },
      ],
      owners: ['self', 'amazon'],
      includeDeprecated: true,
    });

    // Assess: the pending, the foreign-owned and the disabled images are not listed.
    expect(ids(images)).toEqual(['ami-0000000000000a001']);
  });

  it('lists the pending image when the state filter is absent (Karpenter < v1.2.2)', async () => {
    // Act
    const images = await port.describeImages({
      filters: [{ name: 'name', values: ['platform-al2023-x86_64-*'] }],
      owners: ['self'],
      includeDeprecated: true,
    });

    // Assess
    expect(ids(images)).toEqual(['ami-0000000000000a001', 'ami-0000000000000a002']);
  });

  it('sends no owner restriction for tag-only queries (any account that shares)', async () => {
    // Act
    const images = await port.describeImages({
      filters: [{ name: 'tag:team', values: ['platform'] }],
      includeDeprecated: true,
    });

    // Assess
    expect(ids(images)).toEqual([
      'ami-0000000000000a001',
      'ami-0000000000000a002',
      'ami-0000000000000a003',
    ]);
  });

  it('hides deprecated images of other owners only without IncludeDeprecated', async () => {
    // Prepare
    const query: ImageQuery = {
      filters: [{ name: 'image-id', values: ['ami-0000000000000a004'] }],
      includeDeprecated: false,
    };

    // Act
    const hidden = await port.describeImages(query);
    const shown = await port.describeImages({ ...query, includeDeprecated: true });

    // Assess
    expect(hidden).toEqual([]);
    expect(ids(shown)).toEqual(['ami-0000000000000a004']);
  });

  it('maps the root volume size from the root device mapping', async () => {
    // Act
    const [image] = await port.describeImages({
      filters: [{ name: 'image-id', values: ['ami-0000000000000a001'] }],
      includeDeprecated: true,
    });

    // Assess
    expect(image?.rootVolumeSizeGiB).toBe(30);
  });

  it('reports a filter it cannot evaluate as an invalid-response source error', async () => {
    // Act
    const result = port.describeImages({
      filters: [{ name: 'block-device-mapping.volume-type', values: ['gp3'] }],
      includeDeprecated: true,
    });

    // Assess
    await expect(result).rejects.toMatchObject({
      name: 'SourceUnavailableError',
      reason: 'invalid-response',
    });
  });
});

describe('world AWS facts: subnets and security groups', () => {
  const port = createWorldAwsFacts({ world: aWorld(), now: NOW });

  it('matches tag filters exactly and tag-key filters by key', async () => {
    // Act
    const exact = await port.describeSubnets({
      filters: [{ name: 'tag:karpenter.sh/discovery', values: ['prod'] }],
    });
    const byKey = await port.describeSubnets({
      filters: [{ name: 'tag-key', values: ['karpenter.sh/discovery'] }],
    });

    // Assess
    expect(ids(exact)).toEqual(['subnet-01']);
    expect(ids(byKey)).toEqual(['subnet-01', 'subnet-02']);
  });

  it('matches group-name in every VPC (Karpenter sends no VPC filter)', async () => {
    // Act
    const groups = await port.describeSecurityGroups({
      filters: [{ name: 'group-name', values: ['nodes'] }],
    });

    // Assess
    expect(groups.map((group) => [group.id, group.vpcId])).toEqual([
      ['sg-01', 'vpc-a'],
      ['sg-02', 'vpc-b'],
    ]);
  });
});

describe('world AWS facts: capacity reservations, SSM and IAM', () => {
  const world = aWorld({
    ec2: {
      capacityReservations: [
        { CapacityReservationId: 'cr-1', State: 'active', OwnerId: ACCOUNT },
        { CapacityReservationId: 'cr-2', State: 'expired', OwnerId: ACCOUNT },
      ],
    },
    ssm: { parameters: { '/platform/ami': 'ami-0000000000000a001', 'plain-name': 'ami-2' } },
    iam: {
      instanceProfiles: [
        {
          InstanceProfileName: 'nodes',
          Arn: `arn:aws:iam::${ACCOUNT}:instance-profile/nodes`,
          Roles: [{ RoleName: 'NodeRole', Arn: `arn:aws:iam::${ACCOUNT}:role/NodeRole` }],
        },
      ],
      roles: [
        {
          RoleName: 'OtherRole',
          Arn: `arn:aws:iam::${ACCOUNT}:role/OtherRole`,
          AssumeRolePolicyDocument: '%7B%22Version%22%3A%222012-10-17%22%7D',
          AttachedPolicies: [{ PolicyArn: 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy' }],
        },
      ],
    },
  });
  const port = createWorldAwsFacts({ world, now: NOW });

  it('restricts to CapacityReservationIds and applies the state filter', async () => {
    // Act
    const byId = await port.describeCapacityReservations({
      filters: [{ name: 'state', values: ['active'] }],
      ids: ['cr-2'],
    });
    const byOwner = await port.describeCapacityReservations({
      filters: [
        { name: 'state', values: ['active'] },
        { name: 'owner-id', values: [ACCOUNT] },
      ],
    });

    // Assess
    expect(byId).toEqual([]);
    expect(ids(byOwner)).toEqual(['cr-1']);
  });

  it('answers GetParameter by name or ARN, undefined when missing', async () => {
    // Act & Assess
    expect(await port.getParameter('/platform/ami')).toBe('ami-0000000000000a001');
    expect(await port.getParameter(`arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/platform/ami`)).toBe(
      'ami-0000000000000a001'
    );
    expect(await port.getParameter(`arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/plain-name`)).toBe(
      'ami-2'
    );
    expect(await port.getParameter('/missing')).toBeUndefined();
  });

  it('answers GetRole for roles recorded only inside an instance profile, and decodes trust', async () => {
    // Act
    const profile = await port.getInstanceProfile('nodes');
    const fromProfile = await port.getRole('NodeRole');
    const other = await port.getRole('OtherRole');

    // Assess
    expect(profile?.roleNames).toEqual(['NodeRole']);
    expect(fromProfile?.attachedPolicyArns).toEqual([]);
    expect(other?.assumeRolePolicyDocument).toBe('{"Version":"2012-10-17"}');
    expect(other?.attachedPolicyArns).toEqual(['arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy']);
    expect(await port.getRole('Missing')).toBeUndefined();
    expect(await port.getInstanceProfile('missing')).toBeUndefined();
  });

  it('maps parameter ARNs to names', () => {
    expect(parameterNamesOf('arn:aws:ssm:us-east-1:1:parameter/a/b')).toEqual(['/a/b']);
    expect(parameterNamesOf('arn:aws-cn:ssm:cn-north-1:1:parameter/a')).toEqual(['/a', 'a']);
    expect(parameterNamesOf('/aws/service/x')).toEqual(['/aws/service/x']);
  });
});

describe('world and live adapters agree on the same data', () => {
  const ec2Mock = mockClient(EC2Client);
  beforeEach(() => ec2Mock.reset());

  it.each([
    {
      label: 'name term with default owners',
      query: {
        filters: [
          { name: 'name', values: ['platform-al2023-*'] },
          { name: 'state', values: ['available'] },
        ],
        owners: ['self', 'amazon'],
        includeDeprecated: true,
      },
      // What EC2 returns for this query on this account.
      ec2Returns: ['ami-0000000000000a001'],
    },
    {
      label: 'id batch',
      query: {
        filters: [
          { name: 'image-id', values: ['ami-0000000000000a003', 'ami-0000000000000a004'] },
          { name: 'state', values: ['available'] },
        ],
        includeDeprecated: true,
      },
      ec2Returns: ['ami-0000000000000a003', 'ami-0000000000000a004'],
    },
  ])('DescribeImages: $label', async ({ query, ec2Returns }) => {
    // Prepare
    ec2Mock.on(DescribeImagesCommand).resolves({
      Images: IMAGES.filter((image) => ec2Returns.includes(image.ImageId)) as Ec2Image[],
    });
    const live = createLiveAwsFacts({
      ec2: new EC2Client({}),
      ssm: new SSMClient({}),
      iam: new IAMClient({}),
    });
    const offline = createWorldAwsFacts({ world: aWorld(), now: NOW });

    // Act
    const [fromLive, fromWorld] = await Promise.all([
      live.describeImages(query),
      offline.describeImages(query),
    ]);

    // Assess
    expect(fromWorld).toEqual(fromLive);
  });

  it('DescribeSubnets and DescribeSecurityGroups map identically', async () => {
    // Prepare
    ec2Mock.on(DescribeSubnetsCommand).resolves({ Subnets: SUBNETS.slice(0, 1) as Ec2Subnet[] });
    ec2Mock.on(DescribeSecurityGroupsCommand).resolves({
      SecurityGroups: GROUPS.slice(0, 2) as Ec2SecurityGroup[],
    });
    const live = createLiveAwsFacts({
      ec2: new EC2Client({}),
      ssm: new SSMClient({}),
      iam: new IAMClient({}),
    });
    const offline = createWorldAwsFacts({ world: aWorld(), now: NOW });
    const subnetQuery = { filters: [{ name: 'tag:karpenter.sh/discovery', values: ['prod'] }] };
    const groupQuery = { filters: [{ name: 'group-name', values: ['nodes'] }] };

    // Act & Assess
    expect(await offline.describeSubnets(subnetQuery)).toEqual(
      await live.describeSubnets(subnetQuery)
    );
    expect(await offline.describeSecurityGroups(groupQuery)).toEqual(
      await live.describeSecurityGroups(groupQuery)
    );
  });
});
