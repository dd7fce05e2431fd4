// DescribeInstanceTypes, the region-wide fact Karpenter's instance types are built from: read as
// Karpenter reads it (HVM, x86_64 or arm64, 100 a page), shared by a scan, recorded by snapshot in
// the SDK's own shape, replayed by the world adapter and answered by the bench's emulated EC2.
import {
  DescribeInstanceTypesCommand,
  type DescribeInstanceTypesCommandInput,
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
import { memoizeAwsFactsPort } from '../../../lambda/app/memoize-port.js';
import { SourceUnavailableError } from '../../../lambda/shared/errors.js';
import { SCAN_TIME } from '../../support/aws-builders.js';
import { anInstanceType, INSTANCE_TYPE_RECORDS } from '../../support/instance-types.js';

const ec2Mock = mockClient(EC2Client);

function clients() {
  return {
    ec2: new EC2Client({ region: 'us-east-1' }),
    ssm: new SSMClient({ region: 'us-east-1' }),
    iam: new IAMClient({ region: 'us-east-1' }),
  };
}

const KARPENTER_FILTERS = [
  { Name: 'supported-virtualization-type', Values: ['hvm'] },
  { Name: 'processor-info.supported-architecture', Values: ['x86_64', 'arm64'] },
];

const record = (name: string) => {
  const found = INSTANCE_TYPE_RECORDS.find((item) => item.InstanceType === name);
  if (found === undefined) throw new Error(name);
  return found;
};

/** Two pages of the catalog's records. */
function mockTwoPages() {
  ec2Mock
    .on(DescribeInstanceTypesCommand)
    .callsFake(async (input: DescribeInstanceTypesCommandInput) =>
      input.NextToken === undefined
        ? { InstanceTypes: [record('m7i.large'), record('m7g.large')], NextToken: 'page-2' }
        : { InstanceTypes: [record('p4d.24xlarge')] }
    );
}

const WORLD_BASE = { version: 1, account: '111122223333', region: 'us-east-1' };

beforeEach(() => {
  ec2Mock.reset();
});

describe('live reader', () => {
  it("reads every page with Karpenter's filters and page size, translated to core types", async () => {
    // Arrange
    mockTwoPages();

    // Act
    const types = await createLiveAwsFacts(clients()).describeInstanceTypes();

    // Assess
    expect(types).toEqual([
      anInstanceType('m7i.large'),
      anInstanceType('m7g.large'),
      anInstanceType('p4d.24xlarge'),
    ]);
    const inputs = ec2Mock
      .commandCalls(DescribeInstanceTypesCommand)
      .map((call) => call.args[0].input);
    expect(inputs).toEqual([
      { Filters: KARPENTER_FILTERS, MaxResults: 100 },
      { Filters: KARPENTER_FILTERS, MaxResults: 100, NextToken: 'page-2' },
    ]);
  });

  it('keeps what Karpenter derives its labels, capacity and pods from', async () => {
    // Arrange
    mockTwoPages();

    // Act
    const [, , p4d] = (await createLiveAwsFacts(clients()).describeInstanceTypes()) ?? [];

    // Assess
    expect(p4d).toMatchObject({
      instanceType: 'p4d.24xlarge',
      architectures: ['x86_64'],
      vcpus: 96,
      memoryMiB: 1179648,
      hypervisor: 'nitro',
      usageClasses: ['on-demand', 'spot'],
      gpus: [{ name: 'A100', manufacturer: 'NVIDIA', count: 8, memoryMiB: 40960 }],
      network: {
        defaultNetworkCardIndex: 0,
        maximumNetworkInterfaces: 60,
        ipv4AddressesPerInterface: 50,
        efaMaximumInterfaces: 4,
      },
      instanceStorage: { totalSizeGB: 8000, nvmeSupport: 'required' },
    });
    expect(p4d?.network.networkCards).toHaveLength(4);
  });

  it('issues the paginated query once per scan however many callers ask', async () => {
    // Arrange
    mockTwoPages();
    const port = memoizeAwsFactsPort(createLiveAwsFacts(clients()));

    // Act
    await Promise.all([port.describeInstanceTypes(), port.describeInstanceTypes()]);
    await port.describeInstanceTypes();

    // Assess: two pages of one query.
    expect(ec2Mock.commandCalls(DescribeInstanceTypesCommand)).toHaveLength(2);
  });

  it('reports a denied call as an unavailable source naming the action', async () => {
    // Arrange
    ec2Mock.on(DescribeInstanceTypesCommand).rejects(
      new EC2ServiceException({
        name: 'UnauthorizedOperation',
        $fault: 'client',
        $metadata: { httpStatusCode: 403 },
        message: 'not authorized',
      })
    );

    // Act
    const read = createLiveAwsFacts(clients()).describeInstanceTypes();

    // Assess
    await expect(read).rejects.toBeInstanceOf(SourceUnavailableError);
    await expect(read).rejects.toMatchObject({
      reason: 'access-denied',
      source: 'ec2:DescribeInstanceTypes',
    });
  });

  it('is a declared action of the scanning functions', () => {
    expect(DECLARED_ACTIONS.awsFacts).toContain('ec2:DescribeInstanceTypes');
  });
});

describe('world file', () => {
  it("answers the world region's types as Karpenter's query selects them, and undefined without any", async () => {
    // Arrange: an i386-only and a paravirtual type, which Karpenter's filters leave out.
    const world = WorldSchema.parse({
      ...WORLD_BASE,
      instanceTypes: {
        'us-east-1': [
          record('m7i.large'),
          {
            ...record('t3.medium'),
            InstanceType: 'old.i386',
            ProcessorInfo: { SupportedArchitectures: ['i386'] },
          },
          {
            ...record('t3.medium'),
            InstanceType: 'old.pv',
            SupportedVirtualizationTypes: ['paravirtual'],
          },
        ],
      },
    });

    // Act
    const types = await createWorldAwsFacts({ world, now: SCAN_TIME }).describeInstanceTypes();
    const none = await createWorldAwsFacts({
      world: WorldSchema.parse(WORLD_BASE),
      now: SCAN_TIME,
    }).describeInstanceTypes();

    // Assess
    expect(types).toEqual([anInstanceType('m7i.large')]);
    expect(none).toBeUndefined();
  });

  it('rejects a type without a name and keeps unknown fields as recorded', () => {
    expect(
      WorldSchema.safeParse({ ...WORLD_BASE, instanceTypes: { 'us-east-1': [{ VCpuInfo: {} }] } })
        .success
    ).toBe(false);
    const parsed = WorldSchema.parse({
      ...WORLD_BASE,
      instanceTypes: { 'us-east-1': [{ InstanceType: 'x.large', NewField: 1 }] },
    });
    expect(parsed.instanceTypes?.['us-east-1']?.[0]).toMatchObject({ NewField: 1 });
  });

  it('is answered by the world SDK emulator page by page, with its filters', async () => {
    // Arrange
    const world = WorldSchema.parse({
      ...WORLD_BASE,
      instanceTypes: { 'us-east-1': INSTANCE_TYPE_RECORDS },
    });
    const sdk = createWorldSdk(world, { now: SCAN_TIME });
    let pages = 0;
    const ec2 = {
      send: async (command: unknown) => {
        pages++;
        return sdk.ec2.send(command as DescribeInstanceTypesCommand);
      },
    } as unknown as Pick<EC2Client, 'send'>;

    // Act
    const direct = await sdk.ec2.send(new DescribeInstanceTypesCommand({ MaxResults: 5 }));
    const arm = await sdk.ec2.send(
      new DescribeInstanceTypesCommand({
        Filters: [{ Name: 'processor-info.supported-architecture', Values: ['arm64'] }],
      })
    );
    const types = await createEc2Reader(ec2).describeInstanceTypes();

    // Assess
    expect(direct).toMatchObject({ NextToken: '5' });
    expect(direct.InstanceTypes).toHaveLength(5);
    expect(arm.InstanceTypes?.map((type) => type.InstanceType)).toEqual(['c7g.large', 'm7g.large']);
    expect(types).toHaveLength(INSTANCE_TYPE_RECORDS.length);
    // 11 types at Karpenter's 100 a page.
    expect(pages).toBe(1);
  });
});

describe('snapshot', () => {
  it('records the types the scan read in the SDK shape under its region and replays them', async () => {
    // Arrange
    mockTwoPages();
    const recorder = createAwsRecorder(clients());

    // Act
    const live = await createLiveAwsFacts(recorder.clients).describeInstanceTypes();
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
    }).describeInstanceTypes();

    // Assess
    expect(world.instanceTypes?.['us-east-1']?.map((type) => type.InstanceType)).toEqual([
      'm7g.large',
      'm7i.large',
      'p4d.24xlarge',
    ]);
    expect(world.instanceTypes?.['us-east-1']?.[0]).toEqual(record('m7g.large'));
    expect(replayed).toEqual(
      [...(live ?? [])].sort((a, b) => a.instanceType.localeCompare(b.instanceType))
    );
    expect(world).not.toHaveProperty('instanceTypeOfferings');
  });
});
