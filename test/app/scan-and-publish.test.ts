import { beforeEach, describe, expect, it } from 'vitest';
import type { ScanPlan } from '../../lambda/app/run-scan.js';
import {
  type PlanFactory,
  type ScanAndPublishDeps,
  scanAndPublish,
} from '../../lambda/app/scan-and-publish.js';
import type { FindingMessageBody } from '../../lambda/core/notify/message.js';
import { aNodeClassEntry, aNodeClassObject } from '../support/builders.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../support/service-fakes.js';

const ARN_PROFILE = 'arn:aws:iam::111122223333:instance-profile/KarpenterNodeProfile';
const CHECK = 'instance-profile-is-name';

/** Clusters and their NodeClass objects, editable between scans. */
type World = Map<string, Record<string, unknown>[]>;

function planFactory(world: World, failing = new Set<string>()): PlanFactory {
  return ({ cluster }): ScanPlan => {
    if (failing.has(cluster)) throw new Error(`cluster ${cluster} unreachable`);
    return {
      objects: {
        load: async () => ({
          clusters: [{ name: cluster, partition: 'aws' }],
          nodeClasses: (world.get(cluster) ?? []).map((raw) => aNodeClassEntry(raw, cluster)),
          nodePools: [],
          inputs: [],
          inputErrors: [],
        }),
      },
    };
  };
}

const broken = (name = 'default') =>
  aNodeClassObject({ name, spec: { role: undefined, instanceProfile: ARN_PROFILE } });
const fixed = (name = 'default') =>
  aNodeClassObject({ name, spec: { role: undefined, instanceProfile: 'KarpenterNodeProfile' } });

let store: InMemoryFindingStore;
let publisher: RecordingPublisher;
let metrics: RecordingMetrics;
let now: Date;

function deps(world: World, overrides: Partial<ScanAndPublishDeps> = {}): ScanAndPublishDeps {
  return {
    planFor: planFactory(world),
    store,
    publisher,
    metrics,
    logger: silentLogger,
    clock: () => now,
    settings: { reminderIntervalMs: 24 * 3_600_000, digest: 'on-change' },
    ...overrides,
  };
}

const request = (clusters: string[], scanId = 's1') => ({
  scanId,
  trigger: 'schedule',
  clusters: clusters.map((cluster) => ({ cluster })),
});

function findingMessages(checkId = CHECK): FindingMessageBody[] {
  return publisher.sent
    .filter((m) => m.attributes.checkId === checkId)
    .map((m) => JSON.parse(m.bodies.default) as FindingMessageBody);
}

beforeEach(() => {
  store = new InMemoryFindingStore();
  publisher = new RecordingPublisher();
  metrics = new RecordingMetrics();
  now = new Date('2026-11-01T00:00:00Z');
});

describe('scanAndPublish', () => {
  it('sends one new message for the same failing scan run twice', async () => {
    // Prepare
    const world: World = new Map([['prod', [broken()]]]);
    // Act
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    now = new Date('2026-11-01T00:15:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's2'));
    // Assess
    const messages = findingMessages();
    expect(messages.map((m) => m.change)).toEqual(['new']);
    expect(messages[0]?.finding.resource).toEqual({
      cluster: 'prod',
      kind: 'EC2NodeClass',
      name: 'default',
    });
    expect(publisher.sent.filter((m) => m.attributes.change === 'digest')).toHaveLength(1);
  });

  it('sends one resolved message when the NodeClass is fixed, and nothing after', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    world.set('prod', [fixed()]);
    now = new Date('2026-11-01T01:00:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's2'));
    await scanAndPublish(deps(world), request(['prod'], 's3'));
    expect(findingMessages().map((m) => m.change)).toEqual(['new', 'resolved']);
    const state = [...store.findings.values()].find((s) => s.checkId === CHECK);
    expect(state).toMatchObject({ status: 'resolved', resolvedAt: '2026-11-01T01:00:00.000Z' });
  });

  it('sends no duplicate when two deliveries of the same scan race', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await Promise.all([
      scanAndPublish(deps(world), request(['prod'], 'dup')),
      scanAndPublish(deps(world), request(['prod'], 'dup')),
    ]);
    expect(findingMessages().map((m) => m.change)).toEqual(['new']);
  });

  it('still publishes the other clusters when one cluster throws, and reports it failed', async () => {
    const world: World = new Map([
      ['a', [broken()]],
      ['b', [broken()]],
      ['c', [broken()]],
    ]);
    const result = await scanAndPublish(
      deps(world, { planFor: planFactory(world, new Set(['b'])) }),
      request(['a', 'b', 'c'])
    );
    expect(result.failedClusters).toEqual(['b']);
    expect(findingMessages().map((m) => m.finding.resource.cluster)).toEqual(['a', 'c']);
    const digest = publisher.sent.find((m) => m.attributes.change === 'digest');
    expect(JSON.parse(digest?.bodies.default ?? '{}')).toMatchObject({ failedClusters: ['b'] });
    expect(metrics.records).toContainEqual({
      name: 'SourceErrors',
      value: 1,
      dimensions: { Cluster: 'b' },
    });
  });

  it('releases the claim of a message that failed to publish, so the retry sends it', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    const first = await scanAndPublish(deps(world), request(['prod'], 'probe'));
    // Start again from scratch, this time failing the finding's message once.
    const id = [...store.findings.values()].find((s) => s.checkId === CHECK)?.id ?? '';
    store = new InMemoryFindingStore();
    publisher = new RecordingPublisher();
    publisher.failOnce.add(`new-${id}`);
    const failed = await scanAndPublish(deps(world), request(['prod'], 'r1'));
    const retried = await scanAndPublish(deps(world), request(['prod'], 'r2'));
    expect(first.failedClusters).toEqual([]);
    expect(failed.failedClusters).toEqual(['prod']);
    expect(retried.failedClusters).toEqual([]);
    expect(findingMessages().map((m) => m.change)).toEqual(['new']);
  });

  it('re-evaluates only the requested NodeClasses and leaves the others alone', async () => {
    const world: World = new Map([['prod', [broken('a'), broken('b')]]]);
    await scanAndPublish(deps(world), request(['prod'], 'full'));
    world.set('prod', [fixed('a'), fixed('b')]);
    const result = await scanAndPublish(deps(world), {
      ...request(['prod'], 'event'),
      restrictTo: [{ cluster: 'prod', name: 'a' }],
    });
    expect(result.outcomes[0]?.nodeClassesScanned).toBe(1);
    const changes = findingMessages().map((m) => `${m.change}:${m.finding.resource.name}`);
    expect(changes.slice(0, 2).sort()).toEqual(['new:a', 'new:b']);
    expect(changes.slice(2)).toEqual(['resolved:a']);
  });

  it('never resolves findings of a cluster whose objects could not be read', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    const unreadable: PlanFactory = ({ cluster }) => ({
      objects: {
        load: async () => ({
          clusters: [
            {
              name: cluster,
              partition: 'aws',
              state: { read: { status: 'unavailable', reason: 'access-denied', message: '403' } },
            },
          ],
          nodeClasses: [],
          nodePools: [],
          inputs: ['cluster'],
          inputErrors: [],
        }),
      },
    });
    await scanAndPublish(deps(world, { planFor: unreadable }), request(['prod'], 's2'));
    expect(findingMessages().map((m) => m.change)).toEqual(['new']);
    expect(store.index.size).toBe(1);
  });

  it('records scan metrics, open findings and the AWS calls made during the scan', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    let calls = 100;
    await scanAndPublish(deps(world, { apiCallCount: () => (calls += 7) }), request(['prod']));
    expect(metrics.total('ClustersScanned')).toBe(1);
    expect(metrics.records).toContainEqual({
      name: 'NodeClassesScanned',
      value: 1,
      dimensions: { Cluster: 'prod' },
    });
    expect(metrics.records).toContainEqual({
      name: 'OpenFindings',
      value: expect.any(Number),
      dimensions: { Cluster: 'prod', Severity: 'critical' },
    });
    expect(
      metrics.records.find((r) => r.name === 'OpenFindings' && r.dimensions.Severity === 'critical')
        ?.value
    ).toBeGreaterThanOrEqual(1);
    expect(metrics.total('AwsApiCalls')).toBe(7);
    expect(store.index.get('prod#default')).toMatchObject({ instanceProfile: ARN_PROFILE });
  });
});
