import { DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createHandler } from '../../lambda/handlers/ami-event.js';
import { aNodeClassObject } from '../support/builders.js';
import { type FakeTable, fakeDynamoDb } from '../support/fake-dynamodb.js';
import {
  capturingSns,
  earlierFindingItem,
  exampleEvent,
  objectsPlan,
  SERVICE_ENV,
} from '../support/handler-fixtures.js';
import { lambdaContext } from './lambda-context.js';

const IMAGE_ID = 'ami-0123456789abcdef0';
const CHECK = 'instance-profile-is-name';
const HOSTILE_PROFILE =
  'arn:aws:iam::111122223333:instance-profile/<!channel> @here \u0000 <@U024BE7LH>';

const ec2 = mockClient(EC2Client);
let table: FakeTable;
let sns: ReturnType<typeof capturingSns>;

function indexItem(
  cluster: string,
  name: string,
  terms: Record<string, unknown>[],
  region?: string
) {
  return {
    pk: 'NODECLASS',
    sk: `${cluster}#${name}`,
    type: 'nodeclass',
    cluster,
    ...(region === undefined ? {} : { region }),
    name,
    amiSelectorTerms: terms,
    resolvedAmiIds: [],
  };
}

/** The image of the us-west-2 example event (forwarded to the home region, eu-west-1). */
const WEST_IMAGE_ID = 'ami-0a1b2c3d4e5f60718';

const world = new Map([
  [
    'dr',
    [
      aNodeClassObject({
        name: 'team-a',
        spec: {
          amiSelectorTerms: [{ id: WEST_IMAGE_ID }],
          role: undefined,
          instanceProfile: HOSTILE_PROFILE,
        },
      }),
    ],
  ],
  [
    'prod',
    [
      aNodeClassObject({
        name: 'team-a',
        spec: {
          amiSelectorTerms: [{ id: IMAGE_ID }],
          role: undefined,
          instanceProfile: HOSTILE_PROFILE,
        },
      }),
      aNodeClassObject({
        name: 'team-b',
        spec: {
          amiSelectorTerms: [{ id: 'ami-0fffffffffffffff0' }],
          role: undefined,
          instanceProfile: HOSTILE_PROFILE,
        },
      }),
    ],
  ],
]);

const handler = () =>
  createHandler({
    env: SERVICE_ENV,
    planFor: objectsPlan(world),
    clock: () => new Date('2026-11-01T10:00:05Z'),
  });

function allStrings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(allStrings);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => [k, ...allStrings(v)]);
  return [];
}

beforeEach(() => {
  ec2.reset();
  ec2.on(DescribeImagesCommand).resolves({ Images: [] });
  table = fakeDynamoDb();
  sns = capturingSns();
  for (const item of [
    indexItem('prod', 'team-a', [{ id: IMAGE_ID }]),
    indexItem('prod', 'team-b', [{ id: 'ami-0fffffffffffffff0' }]),
  ]) {
    table.items.set(`${item.pk}|${item.sk}`, item);
  } // prod was scanned before: its changes go out one message each.
  const earlier = earlierFindingItem('prod');
  table.items.set(`${earlier.pk}|${earlier.sk}`, earlier);
});

describe('ami-event handler', () => {
  it('looks up the image, rescans the matching NodeClass only, publishes and stores the finding', async () => {
    // Act
    const outcome = await handler()(
      exampleEvent('ami-state-change-deregistered.json'),
      lambdaContext()
    );
    // Assess
    expect(outcome).toMatchObject({
      status: 'scanned',
      nodeClasses: [{ cluster: 'prod', name: 'team-a' }],
    });
    expect(ec2.commandCalls(DescribeImagesCommand)[0]?.args[0].input).toMatchObject({
      Filters: [{ Name: 'image-id', Values: [IMAGE_ID] }],
      IncludeDeprecated: true,
    });
    const findings = sns.published().filter((m) => m.attributes.checkId === CHECK);
    expect(findings.map((m) => m.attributes)).toEqual([
      {
        change: 'new',
        severity: 'critical',
        checkId: CHECK,
        cluster: 'prod',
        status: 'fail',
        account: '111122223333',
        region: 'eu-west-1',
      },
    ]);
    expect(JSON.parse(findings[0]?.bodies.default ?? '{}').finding.resource.name).toBe('team-a');
    const written = table.findings().filter((item) => item.id !== 'earlier');
    expect(written.every((item) => item.resourceName === 'team-a')).toBe(true);
  });

  it('neutralises a hostile value in the JSON, email and Chatbot formats', async () => {
    await handler()(exampleEvent('ami-state-change-deregistered.json'), lambdaContext());
    const message = sns.published().find((m) => m.attributes.checkId === CHECK);
    const strings = [
      ...allStrings(JSON.parse(message?.bodies.default ?? '{}')),
      message?.bodies.email ?? '',
      ...allStrings(JSON.parse(message?.bodies.https ?? '{}')),
      message?.subject ?? '',
    ];
    expect(strings.join('\n')).toContain('‹!channel› ＠here');
    for (const text of strings) {
      expect(text).not.toContain('<!channel>');
      expect(text).not.toContain('<@U');
      expect(text).not.toMatch(/(^|[^＠])@here/);
      expect(text).not.toContain('\u0000');
    }
  });

  it('sends no duplicate when the same event is delivered twice', async () => {
    const event = exampleEvent('ami-state-change-deregistered.json');
    await handler()(event, lambdaContext());
    const first = sns.published().length;
    await handler()(event, lambdaContext());
    expect(first).toBeGreaterThan(0);
    expect(sns.published().length).toBe(first);
  });

  it('drops an event with odd fields without calling AWS', async () => {
    const event = exampleEvent('ami-state-change-available.json');
    const outcome = await handler()(
      { ...event, detail: { State: 'available', ImageId: 42 } },
      lambdaContext()
    );
    expect(outcome).toEqual({ status: 'ignored', reason: 'malformed-event' });
    expect(ec2.calls()).toHaveLength(0);
  });

  describe('an event forwarded from another region the scanner scans', () => {
    const forwarded = () => exampleEvent('ami-state-change-deregistered-us-west-2.json');

    beforeEach(() => {
      for (const item of [
        // A cluster in us-west-2 (`dr@us-west-2`), pinning the event's image.
        indexItem('dr', 'team-a', [{ id: WEST_IMAGE_ID }], 'us-west-2'),
        // Home-region NodeClasses naming the same id, stored with and without their region: an
        // image id names an image of one region, so neither is about the us-west-2 image.
        indexItem('prod', 'team-c', [{ id: WEST_IMAGE_ID }]),
        indexItem('staging', 'team-d', [{ id: WEST_IMAGE_ID }], 'eu-west-1'),
      ]) {
        table.items.set(`${item.pk}|${item.sk}`, item);
      }
      // dr was scanned before: its changes go out one message each.
      const earlier = earlierFindingItem('dr');
      table.items.set(`${earlier.pk}|${earlier.sk}`, earlier);
    });

    it('looks the image up in the event region and rescans only that region’s clusters', async () => {
      // Act
      const outcome = await handler()(forwarded(), lambdaContext());

      // Assess
      expect(outcome).toEqual({
        status: 'scanned',
        nodeClasses: [{ cluster: 'dr', name: 'team-a', region: 'us-west-2' }],
        result: expect.anything(),
      });
      const lookups = ec2.commandCalls(DescribeImagesCommand);
      expect(lookups).toHaveLength(1);
      expect(lookups[0]?.args[0].input).toMatchObject({
        Filters: [{ Name: 'image-id', Values: [WEST_IMAGE_ID] }],
      });
      expect(await lookups[0]?.thisValue.config.region()).toBe('us-west-2');
      const findings = sns.published().filter((m) => m.attributes.checkId === CHECK);
      expect(findings.map((m) => [m.attributes.cluster, m.attributes.region])).toEqual([
        ['dr', 'us-west-2'],
      ]);
    });

    it('does nothing, and asks no region, when no stored cluster is in the event region', async () => {
      // Prepare
      const elsewhere = forwarded() as { region: string; resources: string[] };
      elsewhere.region = 'ap-southeast-2';
      elsewhere.resources = [`arn:aws:ec2:ap-southeast-2::image/${WEST_IMAGE_ID}`];

      // Act
      const outcome = await handler()(elsewhere, lambdaContext());

      // Assess
      expect(outcome).toEqual({ status: 'no-match' });
      expect(ec2.calls()).toHaveLength(0);
      expect(sns.published()).toEqual([]);
    });

    it('still looks up a home-region image with the home region client', async () => {
      // Act
      await handler()(exampleEvent('ami-state-change-deregistered.json'), lambdaContext());

      // Assess
      const lookups = ec2.commandCalls(DescribeImagesCommand);
      expect(await lookups[0]?.thisValue.config.region()).toBe('eu-west-1');
    });
  });
});
