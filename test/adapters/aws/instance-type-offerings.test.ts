// The instance type offerings fact end to end: live reader (pagination, one query per region),
// memo, collector, world file, snapshot recording and replay, and the world SDK emulator.
import {
  DescribeInstanceTypeOfferingsCommand,
  type DescribeInstanceTypeOfferingsCommandInput,
  EC2Client,
  EC2ServiceException,
} from '@aws-sdk/client-ec2';
import { IAMClient } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createWorldSdk } from '../../../bench/world-sdk.js';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import { DECLARED_ACTIONS } from '../../../lambda/adapters/aws/declared-actions.js';
import { createEc2Reader } from '../../../lambda/adapters/aws/ec2-reader.js';
import { buildWorld } from '../../../lambda/adapters/world/build-world.js';
import { createAwsRecorder } from '../../../lambda/adapters/world/recorder.js';
import { WorldSchema } from '../../../lambda/adapters/world/schema.js';
import { createWorldAwsFacts } from '../../../lambda/adapters/world/world-facts.js';
import { createAwsFactsEnricher } from '../../../lambda/app/collect-aws-facts.js';
import { memoizeAwsFactsPort } from '../../../lambda/app/memoize-port.js';
import { nodeClassKey } from '../../../lambda/core/inventory.js';
import { parseNodePool } from '../../../lambda/core/schema.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';
import {
  anAwsInventory,
  aSubnet,
  InMemoryAwsFacts,
  SCAN_TIME,
} from '../../support/aws-builders.js';
import { aNodeClassObject } from '../../support/builders.js';
import { anInstanceType } from '../../support/instance-types.js';

const ec2Mock = mockClient(EC2Client);

function clients() {
  return {
    ec2: new EC2Client({ region: 'us-east-1' }),
    ssm: new SSMClient({ region: 'us-east-1' }),
    iam: new IAMClient({ region: 'us-east-1' }),
  };
}

/** Two pages: the second carries a Region-level row the reader must drop. */
function mockTwoPages() {
  ec2Mock
    .on(DescribeInstanceTypeOfferingsCommand)
    .callsFake(async (input: DescribeInstanceTypeOfferingsCommandInput) =>
      input.NextToken === undefined
        ? {
            InstanceTypeOfferings: [
              {
                InstanceType: 'm7i.large',
                LocationType: 'availability-zone',
                Location: 'us-east-1a',
              },
              {
                InstanceType: 'm7i.large',
                LocationType: 'availability-zone',
                Location: 'us-east-1b',
              },
            ],
            NextToken: 'page-2',
          }
        : {
            InstanceTypeOfferings: [
              {
                InstanceType: 'x2gd.large',
                LocationType: 'availability-zone',
                Location: 'us-east-1c',
              },
              { InstanceType: 'p5.48xlarge', LocationType: 'region', Location: 'us-east-1' },
            ],
          }
    );
}

const WORLD_BASE = { version: 1, account: '111122223333', region: 'us-east-1' };

beforeEach(() => {
  ec2Mock.reset();
});

describe('live reader', () => {
  it('reads every page of availability-zone offerings with the largest page size', async () => {
    // Arrange
    mockTwoPages();

    // Act
    const offerings = await createLiveAwsFacts(clients()).describeInstanceTypeOfferings();

    // Assess
    expect(offerings).toEqual([
      { instanceType: 'm7i.large', zone: 'us-east-1a' },
      { instanceType: 'm7i.large', zone: 'us-east-1b' },
      { instanceType: 'x2gd.large', zone: 'us-east-1c' },
    ]);
    const inputs = ec2Mock
      .commandCalls(DescribeInstanceTypeOfferingsCommand)
      .map((call) => call.args[0].input);
    expect(inputs).toEqual([
      { LocationType: 'availability-zone', MaxResults: 1000 },
      { LocationType: 'availability-zone', MaxResults: 1000, NextToken: 'page-2' },
    ]);
  });

  it('issues the paginated query once per scan however many callers ask', async () => {
    // Arrange
    mockTwoPages();
    const port = memoizeAwsFactsPort(createLiveAwsFacts(clients()));

    // Act
    await Promise.all([port.describeInstanceTypeOfferings(), port.describeInstanceTypeOfferings()]);
    await port.describeInstanceTypeOfferings();

    // Assess: two pages of one query.
    expect(ec2Mock.commandCalls(DescribeInstanceTypeOfferingsCommand)).toHaveLength(2);
  });

  it('reports a denied call as an unavailable source naming the action', async () => {
    // Arrange
    ec2Mock.on(DescribeInstanceTypeOfferingsCommand).rejects(
      new EC2ServiceException({
        name: 'UnauthorizedOperation',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'not authorized',
      })
    );

    // Act
    const read = createLiveAwsFacts(clients()).describeInstanceTypeOfferings();

    // Assess
    await expect(read).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(read).rejects.toMatchObject({ reason: 'access-denied' });
  });

  it('is a declared action of the scanning functions', () => {
    expect(DECLARED_ACTIONS.awsFacts).toContain('ec2:DescribeInstanceTypeOfferings');
  });
});

describe('collector', () => {
  function nodePool(name: string, nodeClass: string, requirements: readonly unknown[]) {
    const raw = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name },
      spec: {
        template: {
          spec: {
            nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: nodeClass },
            requirements,
          },
        },
      },
    };
    return { cluster: 'demo', name, parsed: parseNodePool(raw) };
  }

  it('reads instance types and offerings once, only for classes a NodePool launches through', async () => {
    // Arrange
    const port = new InMemoryAwsFacts({
      subnets: [aSubnet()],
      instanceTypeOfferings: [{ instanceType: 'm7i.large', zone: 'us-east-1a' }],
      instanceTypes: [anInstanceType('m7i.large')],
    });
    const base = anAwsInventory(
      [
        aNodeClassObject({ name: 'default' }),
        aNodeClassObject({ name: 'other' }),
        aNodeClassObject({ name: 'third' }),
      ],
      {}
    );
    const family = [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }];
    const inventory = {
      ...base,
      awsFacts: new Map(),
      nodePools: [nodePool('a', 'default', family), nodePool('b', 'third', [])],
    };

    // Act
    const enriched = await createAwsFactsEnricher({ port, now: SCAN_TIME }).enrich(inventory);

    // Assess
    expect(port.callsTo('describeInstanceTypeOfferings')).toHaveLength(1);
    expect(port.callsTo('describeInstanceTypes')).toHaveLength(1);
    expect(enriched.awsFacts.get(nodeClassKey('demo', 'default'))?.instanceTypeOfferings).toEqual({
      status: 'ok',
      value: { offerings: [{ instanceType: 'm7i.large', zone: 'us-east-1a' }] },
    });
    expect(enriched.awsFacts.get(nodeClassKey('demo', 'third'))?.instanceTypes).toEqual({
      status: 'ok',
      value: { types: [anInstanceType('m7i.large')] },
    });
    expect(enriched.awsFacts.get(nodeClassKey('demo', 'other'))).not.toHaveProperty(
      'instanceTypeOfferings'
    );
    expect(enriched.awsFacts.get(nodeClassKey('demo', 'other'))).not.toHaveProperty(
      'instanceTypes'
    );
  });
});

describe('world file', () => {
  it("answers the world region's offerings, and undefined when none are recorded for it", async () => {
    // Arrange
    const recorded = WorldSchema.parse({
      ...WORLD_BASE,
      instanceTypeOfferings: {
        'us-east-1': [{ instanceType: 'm7i.large', zone: 'us-east-1a' }],
        'eu-west-1': [{ instanceType: 'c7g.large', zone: 'eu-west-1a' }],
      },
    });
    const otherRegionOnly = WorldSchema.parse({
      ...WORLD_BASE,
      instanceTypeOfferings: { 'eu-west-1': [{ instanceType: 'c7g.large', zone: 'eu-west-1a' }] },
    });

    // Act
    const offerings = await createWorldAwsFacts({
      world: recorded,
      now: SCAN_TIME,
    }).describeInstanceTypeOfferings();
    const none = await createWorldAwsFacts({
      world: WorldSchema.parse(WORLD_BASE),
      now: SCAN_TIME,
    }).describeInstanceTypeOfferings();
    const elsewhere = await createWorldAwsFacts({
      world: otherRegionOnly,
      now: SCAN_TIME,
    }).describeInstanceTypeOfferings();

    // Assess
    expect(offerings).toEqual([{ instanceType: 'm7i.large', zone: 'us-east-1a' }]);
    expect(none).toBeUndefined();
    expect(elsewhere).toBeUndefined();
  });

  it('rejects an offering without a zone', () => {
    const result = WorldSchema.safeParse({
      ...WORLD_BASE,
      instanceTypeOfferings: { 'us-east-1': [{ instanceType: 'm7i.large' }] },
    });
    expect(result.success).toBe(false);
  });

  it('is answered by the world SDK emulator page by page', async () => {
    // Arrange
    const world = WorldSchema.parse({
      ...WORLD_BASE,
      instanceTypeOfferings: {
        'us-east-1': [
          { instanceType: 'm7i.large', zone: 'us-east-1a' },
          { instanceType: 'm7i.large', zone: 'us-east-1b' },
          { instanceType: 'x2gd.large', zone: 'us-east-1c' },
        ],
      },
    });
    const sdk = createWorldSdk(world, { now: SCAN_TIME });
    const pages: unknown[] = [];
    const ec2 = {
      send: async (command: unknown) => {
        const output = await sdk.ec2.send(command as DescribeInstanceTypeOfferingsCommand);
        pages.push(output);
        return output;
      },
    } as unknown as Pick<EC2Client, 'send'>;

    // Act: through the live reader, with a page size below the list.
    const direct = await sdk.ec2.send(
      new DescribeInstanceTypeOfferingsCommand({ LocationType: 'availability-zone', MaxResults: 2 })
    );
    const offerings = await createEc2Reader(ec2).describeInstanceTypeOfferings();

    // Assess
    expect(direct).toMatchObject({ NextToken: '2' });
    expect(direct.InstanceTypeOfferings).toHaveLength(2);
    expect(offerings).toEqual(world.instanceTypeOfferings?.['us-east-1']);
    expect(pages).toHaveLength(1);
  });
});

describe('snapshot', () => {
  it('records the offerings the scan read under its region and replays them', async () => {
    // Arrange
    mockTwoPages();
    const recorder = createAwsRecorder(clients());

    // Act
    await createLiveAwsFacts(recorder.clients).describeInstanceTypeOfferings();
    const world = buildWorld({
      account: '111122223333',
      region: 'us-east-1',
      partition: 'aws',
      recordedAt: SCAN_TIME,
      recorded: recorder.recorded(),
      loaded: { clusters: [], nodeClasses: [], nodePools: [] },
    });
    const replayed = await createWorldAwsFacts({
      world: WorldSchema.parse(JSON.parse(JSON.stringify(world))),
      now: SCAN_TIME,
    }).describeInstanceTypeOfferings();

    // Assess
    expect(world.instanceTypeOfferings).toEqual({
      'us-east-1': [
        { instanceType: 'm7i.large', zone: 'us-east-1a' },
        { instanceType: 'm7i.large', zone: 'us-east-1b' },
        { instanceType: 'x2gd.large', zone: 'us-east-1c' },
      ],
    });
    expect(replayed).toEqual(world.instanceTypeOfferings?.['us-east-1']);
  });

  it('writes no section when the scan never asked', () => {
    // Act
    const world = buildWorld({
      account: '111122223333',
      region: 'us-east-1',
      partition: 'aws',
      recordedAt: SCAN_TIME,
      recorded: createAwsRecorder(clients()).recorded(),
      loaded: { clusters: [], nodeClasses: [], nodePools: [] },
    });

    // Assess
    expect(world).not.toHaveProperty('instanceTypeOfferings');
  });
});
