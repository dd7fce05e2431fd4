import {
  CreateFleetCommand,
  DescribeLaunchTemplatesCommand,
  EC2Client,
  EC2ServiceException,
  RunInstancesCommand,
} from '@aws-sdk/client-ec2';
import {
  AssumeRoleCommand,
  DecodeAuthorizationMessageCommand,
  STSClient,
  STSServiceException,
} from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import {
  assumeDryRunRole,
  createDryRunProbe,
  TokenBucket,
} from '../../../lambda/adapters/aws/dry-run.js';
import type { DryRunLaunch } from '../../../lambda/core/ports/permissions.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';
import { fakeClock } from '../../support/fake-clock.js';

const ec2Mock = mockClient(EC2Client);
const stsMock = mockClient(STSClient);

function ec2Error(name: string, status: number, message = name): EC2ServiceException {
  return new EC2ServiceException({
    name,
    $fault: 'client',
    $metadata: { httpStatusCode: status },
    message,
  });
}

const DRY_RUN_OK = () =>
  ec2Error('DryRunOperation', 412, 'Request would have succeeded, but DryRun flag is set.');

const LAUNCH: DryRunLaunch = {
  nodeClassName: 'default',
  imageId: 'ami-1',
  architecture: 'arm64',
  subnetId: 'subnet-1',
  securityGroupIds: ['sg-1'],
  instanceProfile: 'KarpenterNodeProfile',
  tags: { 'karpenter.sh/nodepool': '' },
};

function probe(observer = { sourceError: vi.fn(), warn: vi.fn() }) {
  const clock = fakeClock();
  return {
    observer,
    clock,
    port: createDryRunProbe({
      ec2: new EC2Client({}),
      sts: new STSClient({}),
      limiter: new TokenBucket({ now: clock.now, sleep: clock.sleep }),
      observer,
    }),
  };
}

beforeEach(() => {
  ec2Mock.reset();
  stsMock.reset();
});

describe('dry-run probe', () => {
  it('treats HTTP 412 DryRunOperation as success and counts no error', async () => {
    // Prepare
    ec2Mock.on(RunInstancesCommand).rejects(DRY_RUN_OK());
    ec2Mock.on(CreateFleetCommand).rejects(DRY_RUN_OK());
    ec2Mock
      .on(DescribeLaunchTemplatesCommand)
      .resolves({ LaunchTemplates: [{ LaunchTemplateName: 'karpenter.k8s.aws/123' }] });
    const { port, observer } = probe();

    // Act
    const outcomes = await port.probe(LAUNCH);

    // Assess
    expect(outcomes.map((outcome) => [outcome.operation, outcome.outcome])).toEqual([
      ['RunInstances', 'allowed'],
      ['CreateFleet', 'allowed'],
    ]);
    expect(observer.sourceError).not.toHaveBeenCalled();
    expect(observer.warn).not.toHaveBeenCalled();
  });

  it("sends Karpenter's launch shape with the class' image, subnet, groups and profile", async () => {
    ec2Mock.on(RunInstancesCommand).rejects(DRY_RUN_OK());
    ec2Mock.on(CreateFleetCommand).rejects(DRY_RUN_OK());
    ec2Mock
      .on(DescribeLaunchTemplatesCommand)
      .resolves({ LaunchTemplates: [{ LaunchTemplateName: 'karpenter.k8s.aws/123' }] });

    await probe().port.probe(LAUNCH);

    const tags = [{ Key: 'karpenter.sh/nodepool', Value: '' }];
    expect(ec2Mock.commandCalls(RunInstancesCommand)[0]?.args[0].input).toEqual({
      DryRun: true,
      MinCount: 1,
      MaxCount: 1,
      ImageId: 'ami-1',
      InstanceType: 'm6g.large',
      IamInstanceProfile: { Name: 'KarpenterNodeProfile' },
      NetworkInterfaces: [{ DeviceIndex: 0, SubnetId: 'subnet-1', Groups: ['sg-1'] }],
      TagSpecifications: ['instance', 'volume', 'network-interface'].map((type) => ({
        ResourceType: type,
        Tags: tags,
      })),
    });
    expect(ec2Mock.commandCalls(DescribeLaunchTemplatesCommand)[0]?.args[0].input.Filters).toEqual([
      { Name: 'tag:karpenter.k8s.aws/ec2nodeclass', Values: ['default'] },
    ]);
    expect(ec2Mock.commandCalls(CreateFleetCommand)[0]?.args[0].input).toMatchObject({
      DryRun: true,
      Type: 'instant',
      LaunchTemplateConfigs: [
        {
          LaunchTemplateSpecification: {
            LaunchTemplateName: 'karpenter.k8s.aws/123',
            Version: '$Latest',
          },
          Overrides: [
            {
              InstanceType: 'm6g.large',
              SubnetId: 'subnet-1',
              ImageId: 'ami-1',
              IamInstanceProfile: { Name: 'KarpenterNodeProfile' },
            },
          ],
        },
      ],
    });
  });

  it('fails UnauthorizedOperation with the message decoded through STS', async () => {
    ec2Mock
      .on(RunInstancesCommand)
      .rejects(
        ec2Error(
          'UnauthorizedOperation',
          403,
          'You are not authorized. Encoded authorization failure message: AbC123'
        )
      );
    ec2Mock.on(DescribeLaunchTemplatesCommand).resolves({ LaunchTemplates: [] });
    stsMock
      .on(DecodeAuthorizationMessageCommand)
      .resolves({ DecodedMessage: '{"allowed":false,"explicitDeny":true}' });
    const { port, observer } = probe();

    const [runInstances, createFleet] = await port.probe(LAUNCH);

    expect(runInstances).toMatchObject({
      outcome: 'unauthorized',
      code: 'UnauthorizedOperation',
      decodedMessage: '{"allowed":false,"explicitDeny":true}',
    });
    expect(stsMock.commandCalls(DecodeAuthorizationMessageCommand)[0]?.args[0].input).toEqual({
      EncodedMessage: 'AbC123',
    });
    expect(observer.sourceError).toHaveBeenCalledWith('ec2:RunInstances', 'UnauthorizedOperation');
    expect(createFleet).toMatchObject({ outcome: 'skipped' });
  });

  it('keeps the raw message when decoding is not permitted', async () => {
    ec2Mock
      .on(RunInstancesCommand)
      .rejects(ec2Error('UnauthorizedOperation', 403, 'Encoded authorization failure message: X'));
    ec2Mock.on(DescribeLaunchTemplatesCommand).resolves({});
    stsMock.on(DecodeAuthorizationMessageCommand).rejects(
      new STSServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'denied',
      })
    );

    const [runInstances] = await probe().port.probe(LAUNCH);

    expect(runInstances).toMatchObject({
      outcome: 'unauthorized',
      message: 'Encoded authorization failure message: X',
    });
    expect(runInstances?.decodedMessage).toBeUndefined();
  });

  it('reports any other EC2 code raw', async () => {
    ec2Mock
      .on(RunInstancesCommand)
      .rejects(
        ec2Error('InvalidBlockDeviceMapping', 400, 'Volume of size 20GB is smaller than snapshot')
      );
    ec2Mock
      .on(DescribeLaunchTemplatesCommand)
      .resolves({ LaunchTemplates: [{ LaunchTemplateName: 'lt' }] });
    ec2Mock.on(CreateFleetCommand).rejects(ec2Error('UnsupportedOperation', 400));

    const outcomes = await probe().port.probe(LAUNCH);

    expect(outcomes.map((outcome) => [outcome.outcome, outcome.code])).toEqual([
      ['rejected', 'InvalidBlockDeviceMapping'],
      ['rejected', 'UnsupportedOperation'],
    ]);
  });

  it('holds 1 call/s with a burst of 2 under 50 NodeClasses at once', async () => {
    // Prepare: record the fake time of every EC2 launch call.
    const { port, clock } = probe();
    const times: number[] = [];
    const record = () => {
      times.push(clock.now());
      return Promise.reject(DRY_RUN_OK());
    };
    ec2Mock.on(RunInstancesCommand).callsFake(record);
    ec2Mock.on(CreateFleetCommand).callsFake(record);
    ec2Mock
      .on(DescribeLaunchTemplatesCommand)
      .resolves({ LaunchTemplates: [{ LaunchTemplateName: 'lt' }] });

    // Act
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        port.probe({ ...LAUNCH, nodeClassName: `class-${index}` })
      )
    );

    // Assess: in any window of W seconds, at most 2 + W calls.
    expect(results.flat().every((outcome) => outcome.outcome === 'allowed')).toBe(true);
    expect(times).toHaveLength(100);
    const sorted = [...times].sort((a, b) => a - b);
    for (let first = 0; first < sorted.length; first++) {
      for (let last = first; last < sorted.length; last++) {
        const windowSeconds = ((sorted[last] ?? 0) - (sorted[first] ?? 0)) / 1000;
        expect(last - first + 1).toBeLessThanOrEqual(2 + windowSeconds);
      }
    }
    expect(sorted.at(-1)).toBe(98_000);
  });
});

describe('assumeDryRunRole', () => {
  it('assumes the configured role', async () => {
    stsMock.on(AssumeRoleCommand).resolves({
      Credentials: {
        AccessKeyId: 'AKIA',
        SecretAccessKey: 'secret',
        SessionToken: 'token',
        Expiration: new Date(0),
      },
    });

    const credentials = await assumeDryRunRole(
      new STSClient({}),
      'arn:aws:iam::111122223333:role/DryRun'
    );

    expect(credentials).toMatchObject({ accessKeyId: 'AKIA', sessionToken: 'token' });
    expect(stsMock.commandCalls(AssumeRoleCommand)[0]?.args[0].input).toMatchObject({
      RoleArn: 'arn:aws:iam::111122223333:role/DryRun',
      RoleSessionName: 'nodeclass-scanner-dry-run',
    });
  });

  it('reports a denied AssumeRole as access-denied', async () => {
    stsMock.on(AssumeRoleCommand).rejects(
      new STSServiceException({
        name: 'AccessDenied',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'no',
      })
    );

    const error = await assumeDryRunRole(new STSClient({}), 'arn:aws:iam::1:role/x').catch(
      (caught: unknown) => caught
    );

    expect(error).toBeInstanceOf(SourceUnavailableError);
    expect((error as SourceUnavailableError).reason).toBe('access-denied');
  });
});
