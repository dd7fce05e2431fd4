// Table-driven over every EC2 list descriptor: an entry alone yields the live reader (all pages,
// translated), its declared IAM action, snapshot recording, the world section, the replay and the
// bench's emulated answers (keyed facts: keyed-fact-descriptors.test.ts).
// `SAMPLES` is keyed by the table, so a new entry does not compile here without its sample.
import { describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../../lambda/adapters/aws/aws-facts-adapter.js';
import {
  DECLARED_ACTIONS,
  HANDLER_ACTIONS,
  SCANNING_HANDLERS,
} from '../../../lambda/adapters/aws/declared-actions.js';
import { createEc2Reader } from '../../../lambda/adapters/aws/ec2-reader.js';
import {
  AWS_FACT_ACTIONS,
  EC2_LIST_FACTS,
  EC2_LIST_KEYS,
  type Ec2ListKey,
} from '../../../lambda/adapters/aws/fact-descriptors.js';
import { createAwsRecorder } from '../../../lambda/adapters/world/recorder.js';
import { WorldSchema } from '../../../lambda/adapters/world/schema.js';
import type { FilterQuery, ImageQuery } from '../../../lambda/core/facts/queries.js';
import type { AwsFactsPort } from '../../../lambda/core/ports/aws-facts.js';
import { RECORDED_ACCOUNT, recordedWorld } from '../../support/recorded-world.js';

const ACCOUNT = RECORDED_ACCOUNT;
const TEAM = [{ Key: 'team', Value: 'a' }];
const byTeam = (team: string) => [{ name: 'tag:team', values: [team] }];

interface Sample {
  /** A query the two items match (by tag), and one they do not. */
  readonly query: ImageQuery | FilterQuery;
  readonly other: ImageQuery | FilterQuery;
  /** Two SDK items, answered on two pages. */
  readonly items: readonly [object, object];
  /** The SDK output of one page. */
  readonly output: (items: readonly object[], token: string | undefined) => object;
  /** The ids of the items as core facts. */
  readonly ids: readonly [string, string];
}

const SAMPLES: Record<Ec2ListKey, Sample> = {
  images: {
    query: { filters: byTeam('a'), includeDeprecated: true },
    other: { filters: byTeam('b'), includeDeprecated: true },
    items: [
      { ImageId: 'ami-0000000000000000a', State: 'available', OwnerId: ACCOUNT, Tags: TEAM },
      { ImageId: 'ami-0000000000000000b', State: 'available', OwnerId: ACCOUNT, Tags: TEAM },
    ],
    output: (items, token) => ({ Images: items, NextToken: token }),
    ids: ['ami-0000000000000000a', 'ami-0000000000000000b'],
  },
  subnets: {
    query: { filters: byTeam('a') },
    other: { filters: byTeam('b') },
    items: [
      { SubnetId: 'subnet-a', AvailabilityZone: 'us-east-1a', Tags: TEAM },
      { SubnetId: 'subnet-b', AvailabilityZone: 'us-east-1b', Tags: TEAM },
    ],
    output: (items, token) => ({ Subnets: items, NextToken: token }),
    ids: ['subnet-a', 'subnet-b'],
  },
  securityGroups: {
    query: { filters: byTeam('a') },
    other: { filters: byTeam('b') },
    items: [
      { GroupId: 'sg-a', GroupName: 'a', Tags: TEAM },
      { GroupId: 'sg-b', GroupName: 'b', Tags: TEAM },
    ],
    output: (items, token) => ({ SecurityGroups: items, NextToken: token }),
    ids: ['sg-a', 'sg-b'],
  },
  capacityReservations: {
    query: { filters: byTeam('a') },
    other: { filters: byTeam('b') },
    items: [
      { CapacityReservationId: 'cr-a', State: 'active', OwnerId: ACCOUNT, Tags: TEAM },
      { CapacityReservationId: 'cr-b', State: 'active', OwnerId: ACCOUNT, Tags: TEAM },
    ],
    output: (items, token) => ({ CapacityReservations: items, NextToken: token }),
    ids: ['cr-a', 'cr-b'],
  },
};

/** An EC2 sender answering the fact's command with one item per page; other commands fail. */
function fakeEc2(key: Ec2ListKey) {
  const fact = EC2_LIST_FACTS[key];
  const sample = SAMPLES[key];
  const inputs: Record<string, unknown>[] = [];
  const send = async (command: { input: Record<string, unknown> }) => {
    if (!fact.isCommand(command)) throw new Error(`unexpected ${command.constructor.name}`);
    inputs.push(command.input);
    return command.input.NextToken === undefined
      ? sample.output([sample.items[0]], 'page-2')
      : sample.output([sample.items[1]], undefined);
  };
  return { ec2: { send } as never, inputs };
}

const idsOf = (items: readonly unknown[]) => items.map((item) => (item as { id: string }).id);

describe.each(EC2_LIST_KEYS)('EC2 list fact %s', (key) => {
  const fact = EC2_LIST_FACTS[key];
  const sample = SAMPLES[key];
  const method = fact.method as (typeof EC2_LIST_FACTS)['subnets']['method'];

  it('reads every page through the reader its descriptor builds', async () => {
    // Arrange
    const { ec2, inputs } = fakeEc2(key);

    // Act
    const items = await createEc2Reader(ec2)[method](sample.query as FilterQuery);

    // Assess
    expect(idsOf(items)).toEqual(sample.ids);
    expect(inputs.map((input) => input.NextToken)).toEqual([undefined, 'page-2']);
    expect(inputs[0]?.Filters).toEqual([{ Name: 'tag:team', Values: ['a'] }]);
  });

  it('declares its IAM action for every scanning Lambda', () => {
    // Assess
    expect(DECLARED_ACTIONS.awsFacts).toContain(fact.action);
    for (const handler of SCANNING_HANDLERS) {
      expect(HANDLER_ACTIONS[handler].awsFacts).toContain(fact.action);
    }
  });

  it('records what the live scan read; the world file and the bench replay it', async () => {
    // Arrange
    const { ec2 } = fakeEc2(key);
    const recorder = createAwsRecorder({ ec2, ssm: {} as never, iam: {} as never });

    // Act
    const live = await createLiveAwsFacts(recorder.clients)[method](sample.query as FilterQuery);
    const { world, replay, bench } = recordedWorld(recorder);

    // Assess
    expect(world.ec2[key]).toEqual(sample.items);
    expect(await replay[method](sample.query as FilterQuery)).toEqual(live);
    expect(await replay[method](sample.other as FilterQuery)).toEqual([]);
    expect(await bench[method](sample.query as FilterQuery)).toEqual(live);
    expect(await bench[method](sample.other as FilterQuery)).toEqual([]);
  });

  it('maps a denied read to the unavailable source named by its action', async () => {
    // Arrange
    const denied = Object.assign(new Error('denied'), { name: 'UnauthorizedOperation' });
    const ec2 = { send: async () => Promise.reject(denied) } as never;

    // Act
    const read = createEc2Reader(ec2)[method](sample.query as FilterQuery);

    // Assess
    await expect(read).rejects.toMatchObject({ source: fact.action, reason: 'access-denied' });
  });
});

describe('the EC2 list table', () => {
  it('gives every world file an empty list per fact when the section is absent', () => {
    // Act
    const world = WorldSchema.parse({ version: 1, account: ACCOUNT, region: 'us-east-1' });

    // Assess
    expect(Object.keys(world.ec2).sort()).toEqual([...EC2_LIST_KEYS].sort());
    for (const key of EC2_LIST_KEYS) expect(world.ec2[key]).toEqual([]);
  });

  it('rejects a recorded item its schema refuses (an image without ImageId)', () => {
    // Act
    const parsed = WorldSchema.safeParse({
      version: 1,
      account: ACCOUNT,
      region: 'us-east-1',
      ec2: { images: [{ Name: 'no id' }] },
    });

    // Assess
    expect(parsed.success).toBe(false);
  });
});

describe('the IAM actions of every port method', () => {
  /** Senders that note `service:Operation` of each command and answer a role for GetRole. */
  function recordingClients() {
    const called: string[] = [];
    const sender = (service: string) => ({
      send: async (command: object) => {
        called.push(`${service}:${command.constructor.name.replace(/Command$/, '')}`);
        return {
          Role: { RoleName: 'node', Arn: `arn:aws:iam::${ACCOUNT}:role/node` },
          KeyMetadata: {
            KeyId: 'k-1',
            Arn: `arn:aws:kms:us-east-1:${ACCOUNT}:key/k-1`,
            KeyManager: 'CUSTOMER',
            KeyState: 'Enabled',
          },
          Policy: '{"Statement":[]}',
        };
      },
    });
    const clients = {
      ec2: sender('ec2'),
      ssm: sender('ssm'),
      iam: sender('iam'),
      kms: sender('kms'),
    } as never;
    return { clients, called };
  }

  const calls: { readonly [M in keyof AwsFactsPort]-?: (port: AwsFactsPort) => Promise<unknown> } =
    {
      describeImages: (port) => port.describeImages({ filters: [], includeDeprecated: false }),
      describeSubnets: (port) => port.describeSubnets({ filters: [] }),
      describeSecurityGroups: (port) => port.describeSecurityGroups({ filters: [] }),
      describeCapacityReservations: (port) => port.describeCapacityReservations({ filters: [] }),
      describeInstanceTypeOfferings: (port) => port.describeInstanceTypeOfferings(),
      describeInstanceTypes: (port) => port.describeInstanceTypes(),
      getParameter: (port) => port.getParameter('/aws/service/x'),
      getParameters: async (port) => port.getParameters?.(['/aws/service/x']),
      getInstanceProfile: (port) => port.getInstanceProfile('node'),
      getRole: (port) => port.getRole('node'),
      getEbsEncryptionDefaults: async (port) => port.getEbsEncryptionDefaults?.(),
      describeKmsKey: async (port) => port.describeKmsKey?.('alias/nodes'),
    };

  it.each(Object.keys(AWS_FACT_ACTIONS) as (keyof typeof AWS_FACT_ACTIONS)[])(
    '%s calls exactly the actions the table declares for it',
    async (method) => {
      // Arrange
      const { clients, called } = recordingClients();

      // Act
      await calls[method](createLiveAwsFacts(clients));

      // Assess
      expect([...new Set(called)].sort()).toEqual([...AWS_FACT_ACTIONS[method]].sort());
    }
  );

  it('declares the whole table for the scanning Lambdas', () => {
    // Assess
    expect([...(DECLARED_ACTIONS.awsFacts ?? [])].sort()).toEqual(
      [...new Set(Object.values(AWS_FACT_ACTIONS).flat())].sort()
    );
  });
});
