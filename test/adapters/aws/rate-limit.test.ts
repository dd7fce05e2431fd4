import { DescribeImagesCommand, DescribeSubnetsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { ApiRateLimiter, rateLimited } from '../../../lambda/adapters/aws/rate-limit.js';
import { fakeClock } from '../../support/fake-clock.js';

const ec2 = mockClient(EC2Client);

beforeEach(() => {
  ec2.reset();
  ec2.on(DescribeImagesCommand).resolves({ Images: [] });
  ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [] });
});

describe('rateLimited', () => {
  it('spaces calls of one operation to its rate after the burst', async () => {
    // Prepare
    const clock = fakeClock();
    const limiter = new ApiRateLimiter({
      limits: { ec2: { ratePerSecond: 10, burst: 20, per: 'operation' } },
      now: clock.now,
      sleep: clock.sleep,
    });
    const sentAt: number[] = [];
    const recording = {
      send: (command: DescribeImagesCommand) => {
        sentAt.push(clock.now());
        return new EC2Client({}).send(command);
      },
    };
    const client = rateLimited(recording, 'ec2', limiter);

    // Act
    await Promise.all(Array.from({ length: 50 }, () => client.send(new DescribeImagesCommand({}))));

    // Assess: 20 at once, then the remaining 30 at 10 per second.
    expect(ec2.commandCalls(DescribeImagesCommand)).toHaveLength(50);
    expect(sentAt.filter((time) => time === 0)).toHaveLength(20);
    expect(Math.max(...sentAt)).toBe(3000);
    for (let second = 1; second <= 3; second++) {
      const window = sentAt.filter((time) => time > (second - 1) * 1000 && time <= second * 1000);
      expect(window.length).toBeLessThanOrEqual(10);
    }
  });

  it('keeps one bucket per operation, so a busy operation never delays another', async () => {
    // Prepare
    const clock = fakeClock();
    const limiter = new ApiRateLimiter({
      limits: { ec2: { ratePerSecond: 1, burst: 1, per: 'operation' } },
      now: clock.now,
      sleep: clock.sleep,
    });
    // A bare sender (the SDK client's own send is mocked here, so its middleware would not run).
    const sdk = new EC2Client({});
    const client = rateLimited(
      {
        send: (command: DescribeImagesCommand | DescribeSubnetsCommand) =>
          sdk.send(command as DescribeImagesCommand),
      },
      'ec2',
      limiter
    );

    // Act
    await client.send(new DescribeImagesCommand({}));
    await client.send(new DescribeSubnetsCommand({}));

    // Assess
    expect(clock.now()).toBe(0);
  });

  it('does not limit services without a configured rate', async () => {
    const clock = fakeClock();
    const limiter = new ApiRateLimiter({ limits: {}, now: clock.now, sleep: clock.sleep });
    const client = rateLimited(new EC2Client({}), 'ec2', limiter);
    await Promise.all(
      Array.from({ length: 100 }, () => client.send(new DescribeImagesCommand({})))
    );
    expect(clock.now()).toBe(0);
  });

  it('shares one bucket across a service limited per service (IAM)', async () => {
    // Prepare
    const clock = fakeClock();
    const limiter = new ApiRateLimiter({
      limits: { ec2: { ratePerSecond: 1, burst: 1, per: 'service' } },
      now: clock.now,
      sleep: clock.sleep,
    });
    // A bare sender (the SDK client's own send is mocked here, so its middleware would not run).
    const sdk = new EC2Client({});
    const client = rateLimited(
      {
        send: (command: DescribeImagesCommand | DescribeSubnetsCommand) =>
          sdk.send(command as DescribeImagesCommand),
      },
      'ec2',
      limiter
    );

    // Act
    await client.send(new DescribeImagesCommand({}));
    await client.send(new DescribeSubnetsCommand({}));

    // Assess
    expect(clock.now()).toBe(1000);
  });

  it('paces a service with a shared limit by that limit only (the Lambdas: IAM by the account budget)', async () => {
    // Prepare: a local bucket that would hold the second call, and a shared limit counting takes
    const clock = fakeClock();
    const taken: string[] = [];
    const limiter = new ApiRateLimiter({
      limits: { ec2: { ratePerSecond: 1, burst: 1, per: 'service' } },
      shared: {
        ec2: {
          take: async () => {
            taken.push('ec2');
          },
        },
      },
      now: clock.now,
      sleep: clock.sleep,
    });
    const client = rateLimited(
      { send: (command: DescribeImagesCommand) => new EC2Client({}).send(command) },
      'ec2',
      limiter
    );

    // Act
    await client.send(new DescribeImagesCommand({}));
    await client.send(new DescribeImagesCommand({}));

    // Assess
    expect(taken).toEqual(['ec2', 'ec2']);
    expect(clock.now()).toBe(0);
  });
});
