import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DescribeImagesCommand,
  DescribeSecurityGroupsCommand,
  DescribeSubnetsCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { GetRoleCommand, IAMClient, ListAttachedRolePoliciesCommand } from '@aws-sdk/client-iam';
import { SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import { createAwsFactsEnricher } from '../../lambda/app/collect-aws-facts.js';
import { handleAmiEvent } from '../../lambda/app/handle-ami-event.js';
import type { ScanPlan } from '../../lambda/app/run-scan.js';
import { scanAndPublish } from '../../lambda/app/scan-and-publish.js';
import { imageMatchesTerm } from '../../lambda/core/ami/queries.js';
import { indexEntriesOf } from '../../lambda/core/event-index.js';
import { aNodeClassEntry, aNodeClassObject, anInventory } from '../support/builders.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../support/service-fakes.js';

const ec2 = mockClient(EC2Client);
const iam = mockClient(IAMClient);
const ssm = mockClient(SSMClient);
const IMAGE_ID = 'ami-0123456789abcdef0';
const NOW = new Date('2026-11-01T10:00:00Z');
const event = (state: string) =>
  JSON.parse(
    readFileSync(
      join(import.meta.dirname, `../../examples/events/ami-state-change-${state}.json`),
      'utf8'
    )
  ) as unknown;

/** 200 NodeClasses in 4 clusters, each selecting its own AMI family by name. */
const CLUSTERS = ['c0', 'c1', 'c2', 'c3'];
const objectsOf = (cluster: string) =>
  Array.from({ length: 50 }, (_, i) =>
    aNodeClassObject({
      name: `nc-${i}`,
      spec: { amiSelectorTerms: [{ name: `${cluster}-team${i}-*`, owner: 'self' }] },
    })
  );

function livePlan(cluster: string): ScanPlan {
  return {
    objects: {
      load: async () => ({
        clusters: [{ name: cluster, partition: 'aws', region: 'eu-west-1' }],
        nodeClasses: objectsOf(cluster).map((raw) => aNodeClassEntry(raw, cluster)),
        nodePools: [],
        inputs: [],
        inputErrors: [],
      }),
    },
    enrichers: [
      createAwsFactsEnricher({
        port: createLiveAwsFacts({
          ec2: new EC2Client({}),
          ssm: new SSMClient({}),
          iam: new IAMClient({}),
        }),
        now: NOW,
      }),
    ],
  };
}

/** Every AWS call the mocked clients received (aws-sdk-client-mock replaces `send`, so the SDK counter middleware does not run). */
const awsCalls = () => ec2.calls().length + iam.calls().length + ssm.calls().length;

let store: InMemoryFindingStore;
let publisher: RecordingPublisher;
let metrics: RecordingMetrics;
/** The region of each image lookup the handler asked for. */
let lookupRegions: string[];

function deps() {
  return {
    imagesIn: (region: string) => {
      lookupRegions.push(region);
      return createLiveAwsFacts({
        ec2: new EC2Client({ region }),
        ssm: new SSMClient({}),
        iam: new IAMClient({}),
      });
    },
    homeRegion: 'eu-west-1',
    matches: imageMatchesTerm,
    store,
    metrics,
    logger: silentLogger,
    scan: (request: Parameters<typeof scanAndPublish>[1]) =>
      scanAndPublish(
        {
          planFor: ({ cluster }) => livePlan(cluster),
          store,
          publisher,
          metrics,
          logger: silentLogger,
          clock: () => NOW,
          // The home region, as the event deps name it.
          settings: { reminderIntervalMs: 86_400_000, digest: 'on-change', region: 'eu-west-1' },
          apiCallCount: awsCalls,
        },
        request
      ),
  };
}

beforeEach(async () => {
  ec2.reset();
  iam.reset();
  ssm.reset();
  ec2.on(DescribeImagesCommand).resolves({ Images: [] });
  ec2.on(DescribeImagesCommand, { Filters: [{ Name: 'image-id', Values: [IMAGE_ID] }] }).resolves({
    Images: [
      {
        ImageId: IMAGE_ID,
        Name: 'c2-team7-2026-11-01',
        OwnerId: '111122223333',
        State: 'available',
        Tags: [],
      },
    ],
  });
  ec2.on(DescribeSubnetsCommand).resolves({ Subnets: [] });
  ec2.on(DescribeSecurityGroupsCommand).resolves({ SecurityGroups: [] });
  iam.on(GetRoleCommand).resolves({
    Role: {
      RoleName: 'KarpenterNodeRole-demo',
      Arn: 'arn:aws:iam::111122223333:role/KarpenterNodeRole-demo',
      Path: '/',
      RoleId: 'AROA',
      CreateDate: NOW,
    },
  });
  iam.on(ListAttachedRolePoliciesCommand).resolves({ AttachedPolicies: [] });
  store = new InMemoryFindingStore();
  publisher = new RecordingPublisher();
  metrics = new RecordingMetrics();
  lookupRegions = [];
  for (const cluster of CLUSTERS) {
    await store.replaceClusterIndex(
      { account: '', region: 'eu-west-1', name: cluster },
      indexEntriesOf(anInventory(objectsOf(cluster), { cluster: { name: cluster } }))
    );
  }
});

describe('handleAmiEvent', () => {
  it('re-evaluates only the 1 of 200 stored NodeClasses the image matches, measured in AWS calls', async () => {
    // Prepare: the AWS calls of scanning that one NodeClass on its own, for comparison
    await livePlan('c2').enrichers?.[0]?.enrich(
      anInventory([objectsOf('c2')[7]], {
        cluster: { name: 'c2', region: 'eu-west-1' },
        inputs: ['spec'],
      })
    );
    const oneNodeClass = awsCalls();
    ec2.resetHistory();
    iam.resetHistory();
    // Act
    const outcome = await handleAmiEvent(deps(), event('available'));
    // Assess
    expect(outcome).toMatchObject({
      status: 'scanned',
      nodeClasses: [{ cluster: 'c2', name: 'nc-7' }],
    });
    expect(store.index.size).toBe(200);
    expect(metrics.records).toContainEqual({
      name: 'NodeClassesScanned',
      value: 1,
      dimensions: { Cluster: 'c2' },
    });
    expect(lookupRegions).toEqual(['eu-west-1']);
    // One DescribeImages for the event's image, then exactly what one NodeClass costs.
    expect(awsCalls()).toBe(1 + oneNodeClass);
    const describeImages = ec2.commandCalls(DescribeImagesCommand).map((c) => c.args[0].input);
    expect(describeImages[0]).toMatchObject({
      Filters: [{ Name: 'image-id', Values: [IMAGE_ID] }],
      IncludeDeprecated: true,
    });
    const names = describeImages
      .slice(1)
      .flatMap((input) => input.Filters?.filter((f) => f.Name === 'name') ?? []);
    expect(new Set(names.flatMap((filter) => filter.Values))).toEqual(new Set(['c2-team7-*']));
    expect(metrics.total('AwsApiCalls')).toBe(oneNodeClass);
  });

  it('matches by id and resolved AMIs when a deregistered image is no longer listed', async () => {
    ec2
      .on(DescribeImagesCommand, { Filters: [{ Name: 'image-id', Values: [IMAGE_ID] }] })
      .resolves({ Images: [] });
    await store.putIndexEntries([
      { cluster: 'c1', name: 'pinned', amiSelectorTerms: [{ id: IMAGE_ID }], resolvedAmiIds: [] },
      // Same id, but a cluster in another region: an AMI event there is about another image.
      {
        cluster: 'far',
        region: 'us-east-2',
        name: 'pinned',
        amiSelectorTerms: [{ id: IMAGE_ID }],
        resolvedAmiIds: [],
      },
    ]);
    const outcome = await handleAmiEvent(
      { ...deps(), scan: async () => ({ outcomes: [], failedClusters: [] }) },
      event('deregistered')
    );
    expect(outcome).toMatchObject({
      status: 'scanned',
      nodeClasses: [{ cluster: 'c1', name: 'pinned' }],
    });
    expect(outcome.status === 'scanned' ? outcome.nodeClasses : []).toHaveLength(1);
  });

  it('takes an event forwarded from another region to that region only: its lookup, its clusters', async () => {
    // Prepare: the same id pinned in the home region (stored with and without its region) and in
    // us-west-2, where the event comes from.
    const westImage = 'ami-0a1b2c3d4e5f60718';
    await store.putIndexEntries([
      { cluster: 'c1', name: 'pinned', amiSelectorTerms: [{ id: westImage }], resolvedAmiIds: [] },
      {
        cluster: 'c2',
        region: 'eu-west-1',
        name: 'pinned',
        amiSelectorTerms: [{ id: westImage }],
        resolvedAmiIds: [],
      },
      {
        cluster: 'dr',
        region: 'us-west-2',
        name: 'pinned',
        amiSelectorTerms: [{ id: westImage }],
        resolvedAmiIds: [],
      },
    ]);
    const scans: Parameters<typeof scanAndPublish>[1][] = [];

    // Act
    const outcome = await handleAmiEvent(
      {
        ...deps(),
        scan: async (request) => {
          scans.push(request);
          return { outcomes: [], failedClusters: [] };
        },
      },
      event('deregistered-us-west-2')
    );

    // Assess
    expect(lookupRegions).toEqual(['us-west-2']);
    expect(outcome).toMatchObject({
      status: 'scanned',
      nodeClasses: [{ cluster: 'dr', name: 'pinned', region: 'us-west-2' }],
    });
    expect(scans.map((request) => request.clusters)).toEqual([
      [{ cluster: 'dr', region: 'us-west-2' }],
    ]);
  });

  it('asks no region and rescans nothing for an event from a region with no stored cluster', async () => {
    // Prepare
    const elsewhere = event('deregistered-us-west-2') as { region: string };
    elsewhere.region = 'ap-southeast-2';

    // Act
    const outcome = await handleAmiEvent(deps(), elsewhere);

    // Assess
    expect(outcome).toEqual({ status: 'no-match' });
    expect(lookupRegions).toEqual([]);
    expect(ec2.calls()).toHaveLength(0);
  });

  it('drops states it does not handle and malformed events with the EventsIgnored metric', async () => {
    const pending = {
      ...(event('available') as object),
      detail: { ImageId: IMAGE_ID, State: 'pending' },
    };
    expect(await handleAmiEvent(deps(), pending)).toEqual({
      status: 'ignored',
      reason: 'ami-state-not-handled',
    });
    expect(await handleAmiEvent(deps(), { detail: {} })).toEqual({
      status: 'ignored',
      reason: 'malformed-event',
    });
    expect(
      metrics.records.filter((r) => r.name === 'EventsIgnored').map((r) => r.dimensions.Reason)
    ).toEqual(['ami-state-not-handled', 'malformed-event']);
    expect(ec2.calls()).toHaveLength(0);
  });

  it('does nothing when no stored NodeClass matches', async () => {
    ec2
      .on(DescribeImagesCommand, { Filters: [{ Name: 'image-id', Values: [IMAGE_ID] }] })
      .resolves({
        Images: [
          { ImageId: IMAGE_ID, Name: 'unrelated', OwnerId: '111122223333', State: 'available' },
        ],
      });
    expect(await handleAmiEvent(deps(), event('failed'))).toEqual({ status: 'no-match' });
    expect(publisher.sent).toEqual([]);
  });
});
