import {
  DescribeCapacityReservationsCommand,
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import {
  GetInstanceProfileCommand,
  GetRoleCommand,
  IAMClient,
  ListAttachedRolePoliciesCommand,
  NoSuchEntityException,
} from '@aws-sdk/client-iam';
import {
  GetParameterCommand,
  ParameterNotFound,
  SSMClient,
  SSMServiceException,
} from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { DECLARED_ACTIONS } from '../../../lambda/adapters/aws/declared-actions.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';

const ec2Mock = mockClient(EC2Client);
const ssmMock = mockClient(SSMClient);
const iamMock = mockClient(IAMClient);

function adapter() {
  return createLiveAwsFacts({
    ec2: new EC2Client({ region: 'us-east-1' }),
    ssm: new SSMClient({ region: 'us-east-1' }),
    iam: new IAMClient({ region: 'us-east-1' }),
  });
}

function ec2Error(name: string, status: number): EC2ServiceException {
  return new EC2ServiceException({
    name,
    $fault: 'client',
    $metadata: { httpStatusCode: status },
    message: `${name} for test`,
  });
}

const nameQuery = {
  filters: [
    { name: 'name', values: ['eks-node-al2023-*'] },
    { name: 'state', values: ['available'] },
  ],
  owners: ['self', 'amazon'],
  includeDeprecated: true,
};

beforeEach(() => {
  ec2Mock.reset();
  ssmMock.reset();
  iamMock.reset();
});

describe('live AWS facts: DescribeImages', () => {
  it('sends the query exactly (filters, owners, IncludeDeprecated, MaxResults) and follows NextToken', async () => {
    // Prepare
    ec2Mock
      .on(DescribeImagesCommand)
      .resolvesOnce({
        Images: [
          {
            ImageId: 'ami-0aaa',
            Name: 'eks-node-al2023-x86_64-v1',
            OwnerId: '111122223333',
            State: 'available',
            Architecture: 'x86_64',
            CreationDate: '2026-10-01T00:00:00.000Z',
            RootDeviceName: '/dev/xvda',
            BlockDeviceMappings: [
              { DeviceName: '/dev/xvdb', Ebs: { VolumeSize: 500 } },
              { DeviceName: '/dev/xvda', Ebs: { VolumeSize: 20, SnapshotId: 'snap-1' } },
            ],
            ImageAllowed: false,
            Tags: [{ Key: 'team', Value: 'platform' }],
          },
        ],
        NextToken: 'page-2',
      })
      .resolvesOnce({ Images: [{ ImageId: 'ami-0bbb', State: 'pending' }] });

    // Act
    const images = await adapter().describeImages(nameQuery);

    // Assess
    const inputs = ec2Mock.commandCalls(DescribeImagesCommand).map((call) => call.args[0].input);
    expect(inputs).toEqual([
      {
        Filters: [
          { Name: 'name', Values: ['eks-node-al2023-*'] },
          { Name: 'state', Values: ['available'] },
        ],
        Owners: ['self', 'amazon'],
        IncludeDeprecated: true,
        MaxResults: 1000,
      },
      {
        Filters: [
          { Name: 'name', Values: ['eks-node-al2023-*'] },
          { Name: 'state', Values: ['available'] },
        ],
        Owners: ['self', 'amazon'],
        IncludeDeprecated: true,
        MaxResults: 1000,
        NextToken: 'page-2',
      },
    ]);
    expect(images).toEqual([
      {
        id: 'ami-0aaa',
        name: 'eks-node-al2023-x86_64-v1',
        ownerId: '111122223333',
        state: 'available',
        architecture: 'x86_64',
        creationDate: '2026-10-01T00:00:00.000Z',
        imageAllowed: false,
        rootDeviceName: '/dev/xvda',
        rootVolumeSizeGiB: 20,
        tags: { team: 'platform' },
      },
      { id: 'ami-0bbb', state: 'pending', tags: {} },
    ]);
  });

  it('sends no Owners for a tag-only query', async () => {
    // Prepare
    ec2Mock.on(DescribeImagesCommand).resolves({ Images: [] });

    // Act
    await adapter().describeImages({
      filters: [{ name: 'tag-key', values: ['golden'] }],
      includeDeprecated: true,
    });

    // Assess
    const [call] = ec2Mock.commandCalls(DescribeImagesCommand);
    expect(call?.args[0].input).toEqual({
      Filters: [{ Name: 'tag-key', Values: ['golden'] }],
      IncludeDeprecated: true,
      MaxResults: 1000,
    });
  });

  it.each([
    ['RequestLimitExceeded', 503, 'throttled'],
    ['UnauthorizedOperation', 403, 'access-denied'],
    ['InternalError', 500, 'unreachable'],
  ] as const)('turns %s into SourceUnavailableError(%s → %s)', async (name, status, reason) => {
    // Prepare
    ec2Mock.on(DescribeImagesCommand).rejects(ec2Error(name, status));

    // Act
    const result = adapter().describeImages(nameQuery);

    // Assess
    await expect(result).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(result).rejects.toMatchObject({ source: 'ec2:DescribeImages', reason });
  });
});

describe('live AWS facts: subnets, security groups, capacity reservations', () => {
  it('pages DescribeSubnets with MaxResults 500 and no VPC filter', async () => {
    // Prepare
    ec2Mock
      .on(DescribeSubnetsCommand)
      .resolvesOnce({
        Subnets: [
          {
            SubnetId: 'subnet-1',
            VpcId: 'vpc-1',
            AvailabilityZone: 'us-east-1a',
            AvailabilityZoneId: 'use1-az1',
            AvailableIpAddressCount: 0,
            Tags: [{ Key: 'karpenter.sh/discovery', Value: 'prod' }],
          },
        ],
        NextToken: 't2',
      })
      .resolvesOnce({ Subnets: [{ SubnetId: 'subnet-2', VpcId: 'vpc-1' }] });
    const query = { filters: [{ name: 'tag:karpenter.sh/discovery', values: ['prod'] }] };

    // Act
    const subnets = await adapter().describeSubnets(query);

    // Assess
    expect(ec2Mock.commandCalls(DescribeSubnetsCommand).map((c) => c.args[0].input)).toEqual([
      { Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['prod'] }], MaxResults: 500 },
      {
        Filters: [{ Name: 'tag:karpenter.sh/discovery', Values: ['prod'] }],
        MaxResults: 500,
        NextToken: 't2',
      },
    ]);
    expect(subnets.map((subnet) => [subnet.id, subnet.availableIpAddressCount])).toEqual([
      ['subnet-1', 0],
      ['subnet-2', undefined],
    ]);
  });

  it('sends DescribeSecurityGroups with MaxResults 500', async () => {
    // Prepare
    ec2Mock.on(DescribeSecurityGroupsCommand).resolves({
      SecurityGroups: [{ GroupId: 'sg-1', GroupName: 'nodes', VpcId: 'vpc-2' }],
    });

    // Act
    const groups = await adapter().describeSecurityGroups({
      filters: [{ name: 'group-name', values: ['nodes'] }],
    });

    // Assess
    expect(ec2Mock.commandCalls(DescribeSecurityGroupsCommand)[0]?.args[0].input).toEqual({
      Filters: [{ Name: 'group-name', Values: ['nodes'] }],
      MaxResults: 500,
    });
    expect(groups).toEqual([{ id: 'sg-1', name: 'nodes', vpcId: 'vpc-2', tags: {} }]);
  });

  it('sends CapacityReservationIds without MaxResults for id terms', async () => {
    // Prepare
    ec2Mock.on(DescribeCapacityReservationsCommand).resolves({
      CapacityReservations: [
        {
          CapacityReservationId: 'cr-1',
          State: 'active',
          EndDate: new Date('2026-11-20T00:00:00.000Z'),
        },
      ],
    });

    // Act
    const reservations = await adapter().describeCapacityReservations({
      filters: [{ name: 'state', values: ['active'] }],
      ids: ['cr-1'],
    });

    // Assess
    expect(ec2Mock.commandCalls(DescribeCapacityReservationsCommand)[0]?.args[0].input).toEqual({
      Filters: [{ Name: 'state', Values: ['active'] }],
      CapacityReservationIds: ['cr-1'],
    });
    expect(reservations).toEqual([
      { id: 'cr-1', state: 'active', endDate: '2026-11-20T00:00:00.000Z', tags: {} },
    ]);
  });

  it('sends MaxResults 1000 for filter-only capacity reservation terms', async () => {
    // Prepare
    ec2Mock.on(DescribeCapacityReservationsCommand).resolves({ CapacityReservations: [] });

    // Act
    await adapter().describeCapacityReservations({
      filters: [
        { name: 'owner-id', values: ['111122223333'] },
        { name: 'state', values: ['active'] },
      ],
    });

    // Assess
    expect(ec2Mock.commandCalls(DescribeCapacityReservationsCommand)[0]?.args[0].input).toEqual({
      Filters: [
        { Name: 'owner-id', Values: ['111122223333'] },
        { Name: 'state', Values: ['active'] },
      ],
      MaxResults: 1000,
    });
  });
});

describe('live AWS facts: SSM', () => {
  it('returns the value of an existing parameter', async () => {
    // Prepare
    ssmMock
      .on(GetParameterCommand, { Name: '/aws/service/x/image_id' })
      .resolves({ Parameter: { Name: '/aws/service/x/image_id', Value: 'ami-0123' } });

    // Act
    const value = await adapter().getParameter('/aws/service/x/image_id');

    // Assess
    expect(value).toBe('ami-0123');
    expect(ssmMock.commandCalls(GetParameterCommand)[0]?.args[0].input).toEqual({
      Name: '/aws/service/x/image_id',
      WithDecryption: false,
    });
  });

  it('returns undefined for ParameterNotFound (Karpenter skips the term)', async () => {
    // Prepare
    ssmMock
      .on(GetParameterCommand)
      .rejects(new ParameterNotFound({ message: 'not found', $metadata: { httpStatusCode: 400 } }));

    // Act
    const value = await adapter().getParameter('/missing');

    // Assess
    expect(value).toBeUndefined();
  });

  it('turns AccessDeniedException into an access-denied source error', async () => {
    // Prepare
    ssmMock.on(GetParameterCommand).rejects(
      new SSMServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: { httpStatusCode: 400 },
        message: 'no',
      })
    );

    // Act
    const result = adapter().getParameter('/private/ami');

    // Assess
    await expect(result).rejects.toMatchObject({
      source: 'ssm:GetParameter',
      reason: 'access-denied',
    });
  });
});

describe('live AWS facts: IAM', () => {
  const trust = {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { Service: 'ec2.amazonaws.com' }, Action: 'sts:AssumeRole' },
    ],
  };

  it('reads a role with its URL-decoded trust policy and all attached-policy pages', async () => {
    // Prepare
    iamMock.on(GetRoleCommand, { RoleName: 'KarpenterNodeRole-prod' }).resolves({
      Role: {
        RoleName: 'KarpenterNodeRole-prod',
        Arn: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-prod',
        Path: '/',
        RoleId: 'AROAEXAMPLE',
        CreateDate: new Date('2025-01-01T00:00:00Z'),
        AssumeRolePolicyDocument: encodeURIComponent(JSON.stringify(trust)),
      },
    });
    iamMock
      .on(ListAttachedRolePoliciesCommand)
      .resolvesOnce({
        AttachedPolicies: [{ PolicyArn: 'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy' }],
        IsTruncated: true,
        Marker: 'm2',
      })
      .resolvesOnce({
        AttachedPolicies: [{ PolicyArn: 'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy' }],
        IsTruncated: false,
      });

    // Act
    const role = await adapter().getRole('KarpenterNodeRole-prod');

    // Assess
    expect(role).toEqual({
      name: 'KarpenterNodeRole-prod',
      arn: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-prod',
      path: '/',
      assumeRolePolicyDocument: JSON.stringify(trust),
      attachedPolicyArns: [
        'arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy',
        'arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy',
      ],
    });
    expect(
      iamMock.commandCalls(ListAttachedRolePoliciesCommand).map((c) => c.args[0].input)
    ).toEqual([
      { RoleName: 'KarpenterNodeRole-prod' },
      { RoleName: 'KarpenterNodeRole-prod', Marker: 'm2' },
    ]);
  });

  it('returns undefined for a missing role or instance profile', async () => {
    // Prepare
    const missing = new NoSuchEntityException({
      message: 'nope',
      $metadata: { httpStatusCode: 404 },
    });
    iamMock.on(GetRoleCommand).rejects(missing);
    iamMock.on(GetInstanceProfileCommand).rejects(missing);

    // Act
    const role = await adapter().getRole('gone');
    const profile = await adapter().getInstanceProfile('gone');

    // Assess
    expect(role).toBeUndefined();
    expect(profile).toBeUndefined();
    expect(iamMock.commandCalls(ListAttachedRolePoliciesCommand)).toHaveLength(0);
  });

  it('maps an instance profile to its role names', async () => {
    // Prepare
    iamMock.on(GetInstanceProfileCommand, { InstanceProfileName: 'nodes' }).resolves({
      InstanceProfile: {
        InstanceProfileName: 'nodes',
        InstanceProfileId: 'AIPAEXAMPLE',
        Arn: 'arn:aws:iam::111122223333:instance-profile/nodes',
        Path: '/',
        CreateDate: new Date('2025-01-01T00:00:00Z'),
        Roles: [
          {
            RoleName: 'KarpenterNodeRole-prod',
            RoleId: 'AROAEXAMPLE',
            Arn: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-prod',
            Path: '/',
            CreateDate: new Date('2025-01-01T00:00:00Z'),
          },
        ],
      },
    });

    // Act
    const profile = await adapter().getInstanceProfile('nodes');

    // Assess
    expect(profile).toEqual({
      name: 'nodes',
      arn: 'arn:aws:iam::111122223333:instance-profile/nodes',
      path: '/',
      roleNames: ['KarpenterNodeRole-prod'],
    });
  });
});

describe('declared actions', () => {
  it('declares every API the AWS facts adapter calls', () => {
    expect(DECLARED_ACTIONS.awsFacts).toEqual([
      'ec2:DescribeImages',
      'ec2:DescribeSubnets',
      'ec2:DescribeSecurityGroups',
      'ec2:DescribeCapacityReservations',
      'ec2:DescribeInstanceTypeOfferings',
      'ec2:DescribeInstanceTypes',
      'ssm:GetParameter',
      'ssm:GetParameters',
      'iam:GetInstanceProfile',
      'iam:GetRole',
      'iam:ListAttachedRolePolicies',
      'kms:DescribeKey',
      'kms:GetKeyPolicy',
      'kms:ListGrants',
      'ec2:GetEbsEncryptionByDefault',
      'ec2:GetEbsDefaultKmsKeyId',
    ]);
  });
});
