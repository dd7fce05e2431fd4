// The publish path under faults (SNS rejecting messages, DynamoDB failing claims) and event replay:
// every change is notified exactly once in the end, and replaying an event batch changes nothing.
import { describe, expect, it } from 'vitest';
import { createWorldSdk } from '../../bench/world-sdk.js';
import { createLiveAwsFacts } from '../../lambda/adapters/aws/aws-facts-adapter.js';
import { createIamEntityReader } from '../../lambda/adapters/aws/iam-entities.js';
import { createIamSimulator } from '../../lambda/adapters/aws/iam-simulator.js';
import type { World } from '../../lambda/adapters/world/schema.js';
import { createWorldObjectSource } from '../../lambda/adapters/world/world-objects.js';
import { createAwsFactsEnricher } from '../../lambda/app/collect-aws-facts.js';
import { createPermissionsEnricher } from '../../lambda/app/collect-permissions.js';
import { handleAmiEvent } from '../../lambda/app/handle-ami-event.js';
import { handleIamEvent } from '../../lambda/app/handle-iam-event.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../../lambda/app/scan-and-publish.js';
import { imageMatchesTerm } from '../../lambda/core/ami/queries.js';
import type { LifecycleChange } from '../../lambda/core/lifecycle.js';
import type { OutgoingMessage } from '../../lambda/core/notify/message.js';
import type { NotificationPublisher } from '../../lambda/core/ports/service.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../support/service-fakes.js';
import { exampleWorld, fnv1a, SCAN_TIME } from './support.js';

const world = exampleWorld();
const clusters = world.eks.clusters.map((cluster) => ({ cluster: cluster.name }));
const scheduled = { scanId: 'schedule-1', trigger: 'schedule', clusters };

function worldOf(cluster: string): World {
  return { ...world, eks: { clusters: world.eks.clusters.filter((c) => c.name === cluster) } };
}

function depsFor(
  store: InMemoryFindingStore,
  publisher: NotificationPublisher,
  at = SCAN_TIME
): ScanAndPublishDeps {
  const sdk = createWorldSdk(world, { now: at });
  return {
    planFor: ({ cluster }) => ({
      objects: createWorldObjectSource({ world: worldOf(cluster), file: 'world.json' }),
      enrichers: [
        createAwsFactsEnricher({ port: createLiveAwsFacts(sdk), now: at }),
        createPermissionsEnricher({
          simulator: createIamSimulator(sdk.iam),
        }),
      ],
    }),
    store,
    publisher,
    metrics: new RecordingMetrics(),
    logger: silentLogger,
    clock: () => at,
    settings: {
      reminderIntervalMs: 24 * 60 * 60 * 1000,
      digest: 'never',
      account: world.account,
      region: world.region,
    },
  };
}

/**
 * Rejects about half of the messages (deterministically, by the changes they notify) on their first
 * attempt. A summary gets a new id on each attempt of a scan, so it is known by what it covers.
 */
class FlakyPublisher implements NotificationPublisher {
  public readonly sent: OutgoingMessage[] = [];
  private readonly seen = new Set<string>();

  public async publish(messages: readonly OutgoingMessage[]) {
    const failed = [];
    for (const message of messages) {
      const keys = message.covers ?? [message.id];
      const firstTime = keys.some((key) => !this.seen.has(key));
      for (const key of keys) this.seen.add(key);
      if (firstTime && fnv1a(keys.join(',')) % 2 === 0) {
        failed.push({ id: message.id, code: 'InternalError', message: 'SNS unavailable' });
      } else this.sent.push(message);
    }
    return { failed };
  }
}

/** Every change the messages notify (`kind:findingId`), summaries expanded. */
function notified(messages: readonly OutgoingMessage[]): string[] {
  return messages.flatMap((message) => message.covers ?? [message.id]).sort();
}

describe('publish path under faults', () => {
  it('SNS rejecting messages: the scan completes, and the retry notifies exactly the rest', async () => {
    // Prepare
    const reference = new RecordingPublisher();
    await scanAndPublish(depsFor(new InMemoryFindingStore(), reference), scheduled);
    const store = new InMemoryFindingStore();
    const flaky = new FlakyPublisher();

    // Act: a first delivery that partly fails, then the retry of the same scan
    const first = await scanAndPublish(depsFor(store, flaky), scheduled);
    const retry = await scanAndPublish(depsFor(store, flaky), scheduled);

    // Assess
    expect(notified(reference.sent).length).toBeGreaterThan(2);
    expect(first.failedClusters.length).toBeGreaterThan(0);
    expect(retry.failedClusters).toEqual([]);
    expect(notified(flaky.sent)).toEqual(notified(reference.sent));
  });

  it('DynamoDB failing one cluster: the others publish, the retry completes it without duplicates', async () => {
    // Prepare
    const reference = new RecordingPublisher();
    await scanAndPublish(depsFor(new InMemoryFindingStore(), reference), scheduled);
    const store = new InMemoryFindingStore();
    const broken = clusters[0]?.cluster ?? '';
    const claim = store.claim.bind(store);
    store.claim = async (change: LifecycleChange, input: Parameters<typeof claim>[1]) => {
      if (change.next.resource.cluster === broken) {
        throw Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' });
      }
      return claim(change, input);
    };
    const publisher = new RecordingPublisher();

    // Act
    const first = await scanAndPublish(depsFor(store, publisher), scheduled);
    const publishedFirst = [...publisher.sent];
    store.claim = claim;
    await scanAndPublish(depsFor(store, publisher), scheduled);

    // Assess
    expect(first.failedClusters).toEqual([broken]);
    expect(publishedFirst.some((message) => message.attributes.cluster === broken)).toBe(false);
    expect(publishedFirst.length).toBeGreaterThan(0);
    expect(notified(publisher.sent)).toEqual(notified(reference.sent));
  });
});

describe('idempotency', () => {
  it('replaying the same event batch N times yields the same state and notifications', async () => {
    // Prepare: stored state and index from a scheduled scan
    const store = new InMemoryFindingStore();
    await scanAndPublish(depsFor(store, new RecordingPublisher()), scheduled);
    const index = await store.loadIndex();
    const named = index.find((entry) => entry.amiSelectorTerms.some((term) => term.name));
    const image = world.ec2.images.find((candidate) =>
      named?.amiSelectorTerms.some(
        (term) =>
          term.name !== undefined &&
          imageMatchesTerm(
            {
              id: candidate.ImageId,
              ...(candidate.Name === undefined ? {} : { name: candidate.Name }),
              ...(candidate.OwnerId === undefined ? {} : { ownerId: candidate.OwnerId }),
              state: 'available',
              tags: {},
            },
            term,
            { accountId: world.account }
          )
      )
    );
    const role = index.find((entry) => entry.nodeRole)?.nodeRole;
    expect(image).toBeDefined();
    expect(role).toBeDefined();
    const { default: amiTemplate } = await import(
      '../../examples/events/ami-state-change-deregistered.json',
      { with: { type: 'json' } }
    );
    const { default: iamTemplate } = await import(
      '../../examples/events/iam-attach-role-policy.json',
      { with: { type: 'json' } }
    );
    const batch = [
      {
        kind: 'ami',
        event: {
          ...amiTemplate,
          // AMIs are regional: the event comes from the world's region.
          region: world.region,
          detail: { ...amiTemplate.detail, ImageId: image?.ImageId ?? '' },
        },
      },
      {
        kind: 'iam',
        event: {
          ...iamTemplate,
          detail: {
            ...iamTemplate.detail,
            requestParameters: { ...iamTemplate.detail.requestParameters, roleName: role ?? '' },
          },
        },
      },
    ] as const;
    const publisher = new RecordingPublisher();
    const later = new Date(SCAN_TIME.getTime() + 5 * 60_000);
    const deliver = async () => {
      const deps = depsFor(store, publisher, later);
      const sdk = createWorldSdk(world, { now: later });
      const common = {
        store,
        scan: (request: Parameters<typeof scanAndPublish>[1]) => scanAndPublish(deps, request),
        metrics: deps.metrics,
        logger: silentLogger,
        homeRegion: world.region,
      };
      const outcomes = [];
      for (const item of batch) {
        outcomes.push(
          item.kind === 'ami'
            ? await handleAmiEvent(
                {
                  ...common,
                  imagesIn: () => createLiveAwsFacts(sdk),
                  matches: (candidate, term, context) =>
                    imageMatchesTerm(candidate, term, { ...context, accountId: world.account }),
                },
                item.event
              )
            : await handleIamEvent({ ...common, iam: createIamEntityReader(sdk.iam) }, item.event)
        );
      }
      return outcomes.map((outcome) => outcome.status);
    };

    // Act
    const firstOutcomes = await deliver();
    const stateAfterFirst = structuredClone([...store.findings.entries()]);
    const notificationsAfterFirst = notified(publisher.sent);
    const replays = [];
    for (let replay = 0; replay < 3; replay++) replays.push(await deliver());

    // Assess: the events did reach NodeClasses, and replays changed nothing
    expect(firstOutcomes).toEqual(['scanned', 'scanned']);
    for (const outcome of replays) expect(outcome).toEqual(firstOutcomes);
    expect([...store.findings.entries()]).toEqual(stateAfterFirst);
    expect(notified(publisher.sent)).toEqual(notificationsAfterFirst);
  });
});
