import { beforeEach, describe, expect, it } from 'vitest';
import type { ScanPlan } from '../../lambda/app/run-scan.js';
import {
  type PlanFactory,
  type ScanAndPublishDeps,
  scanAndPublish,
} from '../../lambda/app/scan-and-publish.js';
import { type ClusterIdentity, clusterKey } from '../../lambda/core/cluster-identity.js';
import type { FindingState } from '../../lambda/core/lifecycle.js';
import { findingId } from '../../lambda/core/model.js';
import type { FindingMessageBody, OutgoingMessage } from '../../lambda/core/notify/message.js';
import { type SummaryBody, summaryMessageId } from '../../lambda/core/notify/summary.js';
import {
  currentScanDeadline,
  deadlineAfter,
  type ScanDeadline,
} from '../../lambda/shared/deadline.js';
import { aNodeClassObject } from '../support/builders.js';
import { aNodePoolObject } from '../support/nodepool-builders.js';
import {
  ARN_PROFILE,
  brokenNodeClass as broken,
  fixedNodeClass as fixed,
  planFactoryOf,
  type ScanWorld as World,
} from '../support/scan-world.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../support/service-fakes.js';

const CHECK = 'instance-profile-is-name';
/** The identity `prod` is kept under when the settings name no account or region. */
const PROD: ClusterIdentity = { account: '', region: '', name: 'prod' };

let store: InMemoryFindingStore;
let publisher: RecordingPublisher;
let metrics: RecordingMetrics;
let now: Date;

function deps(world: World, overrides: Partial<ScanAndPublishDeps> = {}): ScanAndPublishDeps {
  return {
    planFor: planFactoryOf(world),
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

interface Alert {
  readonly change: string;
  readonly checkId: string;
  readonly findingId: string;
  readonly resource: { readonly cluster: string; readonly kind: string; readonly name: string };
  /** The message that carried it. */
  readonly messageId: string;
}

/** Every change the published messages notify, summaries expanded, digests left out. */
function alertsIn(messages: readonly OutgoingMessage[]): Alert[] {
  return messages.flatMap((message): Alert[] => {
    const change = message.attributes.change;
    if (change === 'digest') return [];
    if (change === 'summary') {
      const body = JSON.parse(message.bodies.default) as SummaryBody;
      return body.changes.map((item) => ({
        change: item.change,
        checkId: item.checkId,
        findingId: item.findingId,
        resource: item.resource,
        messageId: message.id,
      }));
    }
    const body = JSON.parse(message.bodies.default) as FindingMessageBody;
    return [
      {
        change: body.change,
        checkId: body.finding.checkId,
        findingId: body.finding.id,
        resource: body.finding.resource,
        messageId: message.id,
      },
    ];
  });
}

function findingMessages(checkId = CHECK): Alert[] {
  return alertsIn(publisher.sent).filter((alert) => alert.checkId === checkId);
}

beforeEach(() => {
  store = new InMemoryFindingStore();
  publisher = new RecordingPublisher();
  metrics = new RecordingMetrics();
  now = new Date('2026-11-01T00:00:00Z');
});

describe('scanAndPublish', () => {
  it('notifies a failure once, in the summary of the first scan of its cluster', async () => {
    // Prepare
    const world: World = new Map([['prod', [broken()]]]);
    // Act
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    now = new Date('2026-11-01T00:15:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's2'));
    // Assess
    const messages = findingMessages();
    expect(messages.map((m) => m.change)).toEqual(['new']);
    expect(messages[0]?.resource).toEqual({
      cluster: 'prod',
      kind: 'EC2NodeClass',
      name: 'default',
    });
    expect(publisher.sent.map((m) => m.attributes.change)).toEqual(['summary', 'digest']);
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
      deps(world, { planFor: planFactoryOf(world, { unreachable: (cluster) => cluster === 'b' }) }),
      request(['a', 'b', 'c'])
    );
    expect(result.failedClusters).toEqual(['b']);
    expect(findingMessages().map((m) => m.resource.cluster)).toEqual(['a', 'c']);
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
    store = new InMemoryFindingStore();
    publisher = new RecordingPublisher();
    // The first scan of the cluster (sequence 1) is one summary.
    publisher.failOnce.add(summaryMessageId('prod', 1));
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
    const changes = findingMessages().map((m) => `${m.change}:${m.resource.name}`);
    expect(changes.slice(0, 2).sort()).toEqual(['new:a', 'new:b']);
    expect(changes.slice(2)).toEqual(['resolved:a']);
  });

  it('re-evaluates the NodePools of the requested NodeClasses with them, and only those', async () => {
    const poolA = aNodePoolObject({ name: 'pool-a', nodeClass: 'a' });
    const poolB = aNodePoolObject({ name: 'pool-b', nodeClass: 'b' });
    const world: World = new Map([['prod', [fixed('b'), poolA, poolB]]]);
    await scanAndPublish(deps(world), request(['prod'], 'full'));
    world.set('prod', [fixed('a'), fixed('b'), poolA, poolB]);
    await scanAndPublish(deps(world), {
      ...request(['prod'], 'event'),
      restrictTo: [{ cluster: 'prod', name: 'a' }],
    });
    // pool-b is left out of the narrowed view: it never reads as missing its class.
    expect(
      findingMessages('nodepool-nodeclass-exists').map((m) => `${m.change}:${m.resource.name}`)
    ).toEqual(['new:pool-a', 'resolved:pool-a']);
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
    // The scan itself makes 7 calls (counted while the cluster is planned); nothing else does.
    let calls = 100;
    const plan = planFactoryOf(world);
    await scanAndPublish(
      deps(world, {
        apiCallCount: () => calls,
        planFor: (target) => {
          calls += 7;
          return plan(target);
        },
      }),
      request(['prod'])
    );
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
    expect(store.index.get(`${clusterKey(PROD)}#default`)).toMatchObject({
      instanceProfile: ARN_PROFILE,
    });
  });
});

describe('scanAndPublish with a reading deadline for the request', () => {
  it('gives a cluster after a hung one its share of the reading time, and stores and publishes both', async () => {
    const world: World = new Map([
      ['hung', [broken()]],
      ['fast', [broken()]],
    ]);
    const healthy = planFactoryOf(world);
    await scanAndPublish(deps(world), request(['hung'], 'seed'));
    // Now `hung` answers nothing until its reads are abandoned, as a silent API server would.
    const readingMs = 600;
    let requestDeadline: ScanDeadline | undefined;
    let deadlinesTaken = 0;
    const seen = new Map<string, { startedAt: number; deadline: ScanDeadline | undefined }>();
    const hanging: PlanFactory = (target) => {
      const deadline = currentScanDeadline();
      seen.set(target.cluster, { startedAt: Date.now(), deadline });
      if (target.cluster !== 'hung') return healthy(target);
      return {
        objects: {
          load: async () => {
            const waitMs = Math.max(0, (deadline?.at ?? 0) - Date.now());
            await new Promise((wake) => setTimeout(wake, waitMs));
            const read = {
              status: 'unavailable' as const,
              reason: 'timeout' as const,
              message: `abandoned at ${deadline?.label}`,
            };
            return {
              clusters: [{ name: 'hung', partition: 'aws' as const, state: { read } }],
              nodeClasses: [],
              nodePools: [],
              inputs: ['cluster'],
              inputErrors: [],
            };
          },
        },
      };
    };
    const result = await scanAndPublish(
      deps(world, {
        planFor: hanging,
        settings: { reminderIntervalMs: 24 * 3_600_000, digest: 'always' },
        readDeadline: () => {
          deadlinesTaken += 1;
          requestDeadline = deadlineAfter(readingMs, 'the test deadline');
          return requestDeadline;
        },
      }),
      request(['hung', 'fast'], 'rescan')
    );
    // One deadline for the request; the hung cluster may spend only half of it (two clusters).
    expect(deadlinesTaken).toBe(1);
    const hung = seen.get('hung');
    const fast = seen.get('fast');
    const hungShareMs = (hung?.deadline?.at ?? Number.POSITIVE_INFINITY) - (hung?.startedAt ?? 0);
    expect(hungShareMs).toBeLessThanOrEqual(readingMs / 2 + 20);
    expect(hung?.deadline?.label).toContain('the test deadline');
    // The cluster after it still has reading time, and never reads into the request's reserve.
    const fastShareMs = (fast?.deadline?.at ?? 0) - (fast?.startedAt ?? 0);
    expect(fastShareMs).toBeGreaterThan(100);
    expect(fast?.deadline?.at).toBeLessThanOrEqual(requestDeadline?.at ?? 0);
    // Both are stored and published: the unread cluster keeps its failure open, the other
    // alerts its own, and the digest names both.
    expect(result.failedClusters).toEqual([]);
    const open = [...store.findings.values()]
      .filter((state) => state.checkId === CHECK && state.status === 'open')
      .map((state) => state.resource.cluster);
    expect(open.sort()).toEqual(['fast', 'hung']);
    expect(findingMessages().map((m) => `${m.change}:${m.resource.cluster}`)).toEqual([
      'new:hung',
      'new:fast',
    ]);
    const digests = publisher.sent.filter((m) => m.attributes.change === 'digest');
    expect(digests.map((m) => JSON.parse(m.bodies.default).clusters)).toEqual([
      ['hung'],
      ['hung', 'fast'],
    ]);
  });
});

/** Messages per id, digests left out. */
function sentCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const message of publisher.sent) {
    if (message.attributes.change === 'digest') continue;
    counts.set(message.id, (counts.get(message.id) ?? 0) + 1);
  }
  return counts;
}

/** How often each change (`kind:findingId`) was notified, in whatever message. */
function notifiedCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const alert of alertsIn(publisher.sent)) {
    const key = `${alert.change}:${alert.findingId}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('scanAndPublish batching', () => {
  /** `count` NodeClasses failing the one check: one change each. */
  const brokenClasses = (prefix: string, count: number) =>
    Array.from({ length: count }, (_, i) => broken(`${prefix}${i}`));

  async function afterBaseline(added: number, settings: Partial<ScanAndPublishDeps['settings']>) {
    const world: World = new Map([['prod', [broken('seed')]]]);
    await scanAndPublish(deps(world), request(['prod'], 'baseline'));
    publisher.sent.length = 0;
    world.set('prod', [broken('seed'), ...brokenClasses('n', added)]);
    now = new Date('2026-11-01T01:00:00Z');
    const base = deps(world);
    await scanAndPublish(
      { ...base, settings: { ...base.settings, ...settings } },
      request(['prod'], 'later')
    );
    return publisher.sent.filter((message) => message.attributes.change !== 'digest');
  }

  it('sends 6 changes of one cluster scan as one summary, and 5 as 5 messages', async () => {
    // Act
    const six = await afterBaseline(6, {});
    store = new InMemoryFindingStore();
    publisher = new RecordingPublisher();
    now = new Date('2026-11-01T00:00:00Z');
    const five = await afterBaseline(5, {});
    // Assess
    expect(six.map((message) => message.attributes.change)).toEqual(['summary']);
    expect(alertsIn(six)).toHaveLength(6);
    expect(five.map((message) => message.attributes.change)).toEqual(Array(5).fill('new'));
  });

  it('takes the threshold from the settings', async () => {
    const six = await afterBaseline(6, { alertBatchThreshold: 10 });
    expect(six.map((message) => message.attributes.change)).toEqual(Array(6).fill('new'));
  });

  it('sends the first scan of a new cluster as one summary, whatever the count', async () => {
    const world: World = new Map([['prod', [broken('a'), broken('b')]]]);
    await scanAndPublish(deps(world), request(['prod'], 'first'));
    const sent = publisher.sent.filter((message) => message.attributes.change !== 'digest');
    expect(sent.map((message) => message.attributes.change)).toEqual(['summary']);
    expect(sent[0]?.covers).toHaveLength(2);
    expect(JSON.parse(sent[0]?.bodies.default ?? '{}')).toMatchObject({ firstScan: true });
  });

  it('sends a first scan of 1,100 changes as one summary covering each change once', async () => {
    const world: World = new Map([['prod', brokenClasses('c', 1100)]]);
    await scanAndPublish(deps(world), request(['prod'], 'first'));
    const summaries = publisher.sent.filter((message) => message.attributes.change === 'summary');

    // The store keeps a first scan's summary once, not per claim: no split is needed.
    expect(summaries.map((message) => message.id)).toEqual([summaryMessageId('prod', 1)]);
    expect(new Set(summaries[0]?.covers).size).toBe(1100);
  });

  it('sends 1,100 changes of a cluster with stored state as one summary covering each once', async () => {
    // Act
    const sent = await afterBaseline(1100, {});
    // Assess: the store keeps any summary once, its claims name it: no split into parts.
    expect(sent.map((message) => message.id)).toEqual([summaryMessageId('prod', 2)]);
    expect(new Set(sent[0]?.covers).size).toBe(1100);
    expect(JSON.parse(sent[0]?.bodies.default ?? '{}')).toMatchObject({ firstScan: false });
  });

  it('names the account, region and cluster in every message', async () => {
    const world: World = new Map([['prod', [broken()]]]);
    const base = deps(world);
    const settings = { ...base.settings, account: '111122223333', region: 'eu-west-1' };
    const elsewhere = {
      ...request([], 's2'),
      clusters: [{ cluster: 'prod', region: 'eu-central-1' }],
    };
    await scanAndPublish({ ...base, settings }, request(['prod'], 's1'));
    // Another cluster named prod, in eu-central-1: its own first findings, nothing resolved.
    await scanAndPublish({ ...base, settings }, elsewhere);
    world.set('prod', [fixed()]);
    await scanAndPublish({ ...base, settings }, { ...elsewhere, scanId: 's3' });
    expect(publisher.sent.map((m) => m.attributes.change)).toEqual([
      'summary',
      'digest',
      'summary',
      'digest',
      'resolved',
      'digest',
    ]);
    for (const message of publisher.sent) {
      expect(message.attributes.account, message.id).toBe('111122223333');
      expect(message.attributes.cluster, message.id).toBe('prod');
      expect(message.bodies.email, message.id).toContain('111122223333');
      expect(message.bodies.email, message.id).toMatch(/prod/);
    }
    expect(publisher.sent.map((m) => m.attributes.region)).toEqual([
      'eu-west-1',
      'eu-west-1',
      'eu-central-1',
      'eu-central-1',
      'eu-central-1',
      'eu-central-1',
    ]);
    // The home region's cluster reads `prod`, the other `prod@eu-central-1`.
    expect(publisher.sent.map((m) => m.subject)).toEqual([
      expect.stringContaining('First findings on prod in 111122223333 eu-west-1'),
      expect.stringContaining('Scan digest for prod in 111122223333 eu-west-1'),
      expect.stringContaining('First findings on prod@eu-central-1 in 111122223333 eu-central-1'),
      expect.stringContaining('Scan digest for prod@eu-central-1 in 111122223333 eu-central-1'),
      // Too long with the check id and the location: the label stays.
      expect.stringContaining('RESOLVED CRITICAL prod@eu-central-1/EC2NodeClass/default'),
      expect.stringContaining('Scan digest for prod@eu-central-1 in 111122223333 eu-central-1'),
    ]);
  });
});

/** A NodeClass failing several checks at once, so one scan claims changes of several severities. */
const veryBroken = (name: string) =>
  aNodeClassObject({
    name,
    spec: {
      role: undefined,
      instanceProfile: ARN_PROFILE,
      metadataOptions: { httpEndpoint: 'enabled', httpTokens: 'optional' },
    },
  });

describe('scanAndPublish with two clusters of one name in two regions', () => {
  const WEST = 'us-west-2';
  let home: World;
  let west: World;
  const twoRegions = (): ScanAndPublishDeps => ({
    ...deps(new Map()),
    planFor: ({ cluster, region }) => planFactoryOf(region === WEST ? west : home)({ cluster }),
    settings: {
      reminderIntervalMs: 24 * 3_600_000,
      digest: 'never',
      account: '111122223333',
      region: 'eu-west-1',
    },
  });
  const both = {
    scanId: 'schedule',
    trigger: 'schedule',
    clusters: [{ cluster: 'prod' }, { cluster: 'prod', region: WEST }],
  };
  const changes = () =>
    alertsIn(publisher.sent).map(
      (alert) =>
        `${alert.change} ${alert.resource.name} ${publisher.sent.find((m) => m.id === alert.messageId)?.attributes.region}`
    );

  beforeEach(() => {
    home = new Map([['prod', [broken('a'), broken('c')]]]);
    west = new Map([['prod', [broken('a'), broken('c')]]]);
  });

  it('keeps each one its own state: the second schedule is quiet', async () => {
    // Act
    const first = await scanAndPublish(twoRegions(), both);
    const firstAlerts = changes().sort();
    publisher.sent.length = 0;
    await scanAndPublish(twoRegions(), { ...both, scanId: 'schedule-2' });
    // Assess
    expect(first.outcomes.map((outcome) => outcome.cluster)).toEqual(['prod', `prod@${WEST}`]);
    expect(firstAlerts).toEqual([
      'new a eu-west-1',
      `new a ${WEST}`,
      'new c eu-west-1',
      `new c ${WEST}`,
    ]);
    expect(publisher.sent).toEqual([]);
    expect(
      metrics.records.filter((r) => r.name === 'NodeClassesScanned').map((r) => r.dimensions)
    ).toEqual([
      { Cluster: 'prod' },
      { Cluster: `prod@${WEST}` },
      { Cluster: 'prod' },
      { Cluster: `prod@${WEST}` },
    ]);
  });

  it('rescans only the NodeClasses an event named in each region', async () => {
    // Prepare: both scanned, then everything fixed in both
    await scanAndPublish(twoRegions(), both);
    publisher.sent.length = 0;
    home.set('prod', [fixed('a'), fixed('c')]);
    west.set('prod', [fixed('a'), fixed('c')]);
    // Act: an event affecting home's a and us-west-2's c
    await scanAndPublish(twoRegions(), {
      ...both,
      scanId: 'event',
      trigger: 'iam-AttachRolePolicy',
      restrictTo: [
        { cluster: 'prod', name: 'a' },
        { cluster: 'prod', name: 'c', region: WEST },
      ],
    });
    // Assess
    expect(changes().sort()).toEqual(['resolved a eu-west-1', `resolved c ${WEST}`]);
  });
});

describe('scanAndPublish with DynamoDB failing from the Nth request on', () => {
  // Baseline: a, b broken and notified. The faulty scan then sees a fixed, b unchanged, c and d
  // new: five changes, one message each; with e also new, seven changes in one summary.
  const before = (): World => new Map([['prod', [veryBroken('a'), veryBroken('b')]]]);
  const single = (): World =>
    new Map([['prod', [fixed('a'), veryBroken('b'), veryBroken('c'), broken('d')]]]);
  const batched = (): World =>
    new Map([
      ['prod', [fixed('a'), veryBroken('b'), veryBroken('c'), broken('d'), veryBroken('e')]],
    ]);

  async function faultyRun(
    after: () => World,
    failFrom: number | undefined,
    failAfterApplying: boolean
  ) {
    store = new InMemoryFindingStore();
    publisher = new RecordingPublisher();
    await scanAndPublish(deps(before()), request(['prod'], 'baseline'));
    publisher.sent.length = 0;
    now = new Date('2026-11-01T02:00:00Z');
    const start = store.requests.length;
    store.failFrom = failFrom === undefined ? undefined : start + failFrom;
    store.failAfterApplying = failAfterApplying;
    const world = after();
    const first = await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    const failedAt = failFrom === undefined ? undefined : store.requests[start + failFrom - 1];
    // DynamoDB heals; SQS redelivers the same message, then the next schedule runs.
    store.failFrom = undefined;
    const redelivery = await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    now = new Date('2026-11-01T02:10:00Z');
    const next = await scanAndPublish(deps(world), request(['prod'], 'msg-2'));
    return { first, redelivery, next, failedAt, requests: store.requests.length - start };
  }

  it.each([
    { world: single, kind: 'one message per change', summaries: 0 },
    { world: batched, kind: 'one summary', summaries: 1 },
  ])(
    'delivers every alert exactly once for every N, the clear-pending step aside ($kind)',
    async ({ world, summaries }) => {
      // Prepare: the alerts of a fault-free run, and how many store requests its scan makes
      const reference = await faultyRun(world, undefined, false);
      const expected = [...notifiedCounts().keys()].sort();
      expect(expected.some((key) => key.startsWith('resolved:'))).toBe(true);
      expect(expected.filter((key) => key.startsWith('new:')).length).toBeGreaterThan(2);
      expect([...notifiedCounts().values()].every((count) => count === 1)).toBe(true);
      expect(publisher.sent.filter((m) => m.attributes.change === 'summary')).toHaveLength(
        summaries
      );
      expect(reference.first.failedClusters).toEqual([]);

      for (const failAfterApplying of [false, true]) {
        for (let n = 1; n <= reference.requests + 1; n++) {
          // Act
          const run = await faultyRun(world, n, failAfterApplying);
          const counts = notifiedCounts();
          // Assess: nothing lost, nothing extra, and doubles only when the clear-pending write failed
          const where = `N=${n} (${run.failedAt ?? 'none'}, applied=${failAfterApplying})`;
          expect([...counts.keys()].sort(), where).toEqual(expected);
          const doubled = [...counts.values()].filter((count) => count > 1);
          expect(Math.max(...counts.values()), where).toBeLessThanOrEqual(2);
          if (run.failedAt !== 'clearPending') {
            expect(doubled, where).toEqual([]);
            expect(
              [...sentCounts().values()].every((count) => count === 1),
              where
            ).toBe(true);
          }
          expect(run.redelivery.failedClusters, where).toEqual([]);
          expect(run.next.outcomes[0]?.published, where).toBe(0);
          expect(store.pending.size, where).toBe(0);
        }
      }
    }
  );

  it('counts a scan cut short by DynamoDB as failed, not as scanned', async () => {
    store.failFrom = 3;
    const result = await scanAndPublish(deps(new Map([['prod', [broken()]]])), request(['prod']));
    expect(result.failedClusters).toEqual(['prod']);
    expect(metrics.total('ClustersScanned')).toBe(0);
    expect(metrics.total('ScanFailures')).toBe(1);
    expect(metrics.records.filter((r) => r.name === 'OpenFindings')).toEqual([]);
  });
});

describe('scanAndPublish when SNS refuses a message', () => {
  it('sends it on the redelivery, exactly once, and counts the first attempt as failed', async () => {
    // Prepare: the cluster's first scan (sequence 1) is one summary; SNS refuses it once
    const world: World = new Map([['prod', [veryBroken('a'), broken('b')]]]);
    publisher.failOnce.add(summaryMessageId('prod', 1));
    // Act
    const failed = await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    const retried = await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    const later = await scanAndPublish(deps(world), request(['prod'], 'msg-2'));
    // Assess
    expect(failed.failedClusters).toEqual(['prod']);
    expect([retried.failedClusters, later.failedClusters]).toEqual([[], []]);
    expect(notifiedCounts().size).toBeGreaterThan(2);
    expect([...notifiedCounts().values()].every((count) => count === 1)).toBe(true);
    expect([...sentCounts().keys()]).toEqual([summaryMessageId('prod', 2)]);
    expect(metrics.total('ScanFailures')).toBe(1);
    expect(metrics.total('ClustersScanned')).toBe(2);
  });

  it('keeps a refused summary of a taken-over claim pending until a later attempt sends it once', async () => {
    // Prepare: the first attempt claims part of the batch, then DynamoDB fails before the publish
    const world: World = new Map([['prod', [veryBroken('a'), broken('b')]]]);
    // Request 4 is the first claim: it is written, then the connection drops.
    store.failFrom = 4;
    store.failAfterApplying = true;
    await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    store.failFrom = undefined;
    const pendingIds = [...new Set([...store.pending.values()].map((p) => p.message.id))];
    expect(pendingIds).toEqual([summaryMessageId('prod', 1)]);
    expect(store.pending.size).toBe(1);
    for (const id of pendingIds) publisher.failOnce.add(id);
    // Act: the redelivery adopts the claim and claims the rest of the batch with the same summary
    const second = await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    const third = await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    // Assess
    expect(second.failedClusters).toEqual(['prod']);
    expect(third.failedClusters).toEqual([]);
    expect([...sentCounts().entries()]).toEqual([[summaryMessageId('prod', 1), 1]]);
    expect(notifiedCounts().size).toBeGreaterThan(2);
    expect([...notifiedCounts().values()].every((count) => count === 1)).toBe(true);
    expect(store.pending.size).toBe(0);
  });

  it("leaves another live scan's pending publish alone until its lease runs out", async () => {
    const world: World = new Map([['prod', [broken()]]]);
    // Request 4 is the first claim: it is written, then the connection drops.
    store.failFrom = 4;
    store.failAfterApplying = true;
    await scanAndPublish(deps(world), request(['prod'], 'msg-1'));
    store.failFrom = undefined;
    now = new Date('2026-11-01T00:05:00Z');
    await scanAndPublish(deps(world), request(['prod'], 'event-1'));
    expect(sentCounts().size).toBe(0);
    now = new Date('2026-11-01T00:16:00Z');
    await scanAndPublish(deps(world), request(['prod'], 'schedule-2'));
    expect(sentCounts().size).toBeGreaterThan(0);
    expect([...sentCounts().values()].every((count) => count === 1)).toBe(true);
    expect([...notifiedCounts().values()].every((count) => count === 1)).toBe(true);
  });
});

describe('scanAndPublish with suppressed findings', () => {
  const IGNORE = `ignore-check.nodeclass-scanner/${CHECK}`;
  const accepted = (expiresNote = 'moving to spec.role next sprint') =>
    aNodeClassObject({
      name: 'default',
      metadata: { annotations: { [IGNORE]: expiresNote } },
      spec: { role: undefined, instanceProfile: ARN_PROFILE },
    });

  it('announces once that an alerted finding was suppressed, and alerts it as new when the annotation goes', async () => {
    // Prepare: alerted while failing
    const world: World = new Map([['prod', [broken()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    const id = [...store.findings.values()].find((s) => s.checkId === CHECK)?.id ?? '';
    // Act: accepted by annotation, scanned twice; then the annotation is removed
    world.set('prod', [accepted()]);
    now = new Date('2026-11-01T01:00:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's2'));
    const quietState = store.stateOf(id);
    const openAfterQuiet = metrics.records.filter(
      (r) => r.name === 'OpenFindings' && r.dimensions.Severity === 'critical'
    );
    now = new Date('2026-11-02T02:00:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's3'));
    world.set('prod', [broken()]);
    now = new Date('2026-11-02T03:00:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's4'));
    // Assess: the suppression is one message (s2), the quiet rescan none (s3)
    expect(findingMessages().map((m) => `${m.change}:${m.messageId.split('-')[0]}`)).toEqual([
      'new:summary',
      'suppressed:suppressed',
      'new:new',
    ]);
    const notice = publisher.sent.find((message) => message.attributes.change === 'suppressed');
    expect(notice?.attributes).toMatchObject({
      change: 'suppressed',
      suppressedBy: 'annotation',
      status: 'suppressed',
      checkId: CHECK,
    });
    expect(notice?.bodies.email).toContain(
      `Suppressed by the annotation ${IGNORE} on EC2NodeClass/default: "moving to spec.role next sprint"`
    );
    expect(quietState).toMatchObject({
      status: 'resolved',
      lastNotified: '2026-11-01T01:00:00.000Z',
      resolvedAt: '2026-11-01T01:00:00.000Z',
    });
    expect(openAfterQuiet.at(-1)?.value).toBe(0);
  });

  it('sends a suppression on its own, never inside a summary, so a change=suppressed filter sees it', async () => {
    // Prepare: alerted; then suppressed while another NodeClass breaks, with batching from 1 change
    const world: World = new Map([['prod', [broken()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    publisher.sent.length = 0;
    world.set('prod', [accepted(), broken('other')]);
    now = new Date('2026-11-01T01:00:00Z');
    // Act
    await scanAndPublish(
      deps(world, {
        settings: { reminderIntervalMs: 24 * 3_600_000, digest: 'never', alertBatchThreshold: 0 },
      }),
      request(['prod'], 's2')
    );
    // Assess
    expect(publisher.sent.map((message) => message.attributes.change).sort()).toEqual([
      'summary',
      'suppressed',
    ]);
    expect(
      alertsIn(publisher.sent)
        .map((alert) => `${alert.change}:${alert.resource.name}`)
        .sort()
    ).toEqual(['new:other', 'suppressed:default']);
  });

  it('keeps a finding open when the annotationSuppression setting refuses the annotation, saying so', async () => {
    // Prepare: alerted while failing
    const world: World = new Map([['prod', [broken()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    const id = [...store.findings.values()].find((s) => s.checkId === CHECK)?.id ?? '';
    const refusing = deps(world, {
      settings: {
        reminderIntervalMs: 24 * 3_600_000,
        digest: 'on-change',
        annotationSuppression: 'deny',
      },
    });
    // Act: annotated, then a day later (the reminder carries the refusal)
    world.set('prod', [accepted()]);
    now = new Date('2026-11-01T01:00:00Z');
    await scanAndPublish(refusing, request(['prod'], 's2'));
    const afterAnnotation = findingMessages().length;
    now = new Date('2026-11-02T01:00:00Z');
    await scanAndPublish(refusing, request(['prod'], 's3'));
    // Assess: nothing resolved or suppressed; the reminder says the annotation was refused
    expect(afterAnnotation).toBe(1);
    expect(store.stateOf(id)?.status).toBe('open');
    const reminder = publisher.sent.find((message) => message.attributes.change === 'reminder');
    const body = JSON.parse(reminder?.bodies.default ?? '{}') as FindingMessageBody;
    expect(body.finding.message).toContain(
      `The annotation ${IGNORE} ("moving to spec.role next sprint") tried to suppress this finding; refused: the deployment's annotationSuppression setting does not let annotations suppress ${CHECK}, so it stays open.`
    );
    expect(body.finding.evidence).toMatchObject({
      annotationSuppression: { annotation: IGNORE, outcome: 'refused' },
    });
  });

  it('never alerts a finding suppressed from its first sighting', async () => {
    const world: World = new Map([['prod', [accepted()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    expect(findingMessages()).toEqual([]);
    expect([...store.findings.values()].filter((s) => s.checkId === CHECK)).toEqual([]);
  });
});

describe('scanAndPublish with the 412 dry-run notice', () => {
  const VERSION_CHECK = 'karpenter-version-supported';
  /** A healthy NodeClass of a cluster running Karpenter 1.7.0: validation dry-runs, 412s. */
  const healthy = () =>
    aNodeClassObject({
      name: 'default',
      metadata: { annotations: { 'nodeclass-scanner/karpenter-version': '1.7.0' } },
      spec: { role: undefined, instanceProfile: 'KarpenterNodeProfile' },
    });
  const noticeId = findingId(
    VERSION_CHECK,
    { cluster: 'prod', kind: 'Cluster', name: 'prod' },
    'dry-run-412-noise'
  );
  /** The open state the previous version stored: the notice as an info `fail`, alerted daily. */
  const legacyState = (): FindingState => ({
    id: noticeId,
    checkId: VERSION_CHECK,
    resource: { cluster: 'prod', kind: 'Cluster', name: 'prod' },
    status: 'open',
    findingStatus: 'fail',
    severity: 'info',
    message: 'Expected, not an error: Karpenter 1.7.0 validates each NodeClass with EC2 dry-runs.',
    materialHash: '0123456789abcdef',
    firstSeen: '2026-10-01T00:00:00.000Z',
    lastSeen: '2026-10-31T00:00:00.000Z',
    lastNotified: '2026-10-31T00:00:00.000Z',
    revision: 31,
  });

  it('never stores, alerts or reminds the notice, day after day', async () => {
    const world: World = new Map([['prod', [healthy()]]]);
    for (const [day, scanId] of [
      ['2026-11-01T00:00:00Z', 's1'],
      ['2026-11-02T01:00:00Z', 's2'],
      ['2026-11-03T02:00:00Z', 's3'],
    ] as const) {
      now = new Date(day);
      await scanAndPublish(deps(world), request(['prod'], scanId));
    }
    expect(publisher.sent).toEqual([]);
    expect([...store.findings.values()]).toEqual([]);
  });

  it('closes the open state a previous version stored without a RESOLVED alert, and never reminds it', async () => {
    // Prepare: stored open by the previous version; its daily reminder is due
    store.findings.set(InMemoryFindingStore.key(PROD, noticeId), legacyState());
    const world: World = new Map([['prod', [healthy()]]]);
    // Act: the first scans after the upgrade
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    const closed = store.stateOf(noticeId);
    now = new Date('2026-11-02T01:00:00Z');
    await scanAndPublish(deps(world), request(['prod'], 's2'));
    // Assess
    expect(alertsIn(publisher.sent)).toEqual([]);
    expect(publisher.sent).toEqual([]);
    expect(closed).toMatchObject({
      status: 'resolved',
      resolvedAt: '2026-11-01T00:00:00.000Z',
      lastNotified: '2026-10-31T00:00:00.000Z',
      revision: 32,
    });
    expect(store.stateOf(noticeId)).toEqual(closed);
    expect(store.pending.size).toBe(0);
    const open = metrics.records.filter(
      (r) => r.name === 'OpenFindings' && r.dimensions.Severity === 'info'
    );
    expect(open.map((r) => r.value)).toEqual([0, 0]);
  });
});

function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** A plan that reads the world now and hands the snapshot over once `resume` opens. */
function stalePlan(world: World, resume: Promise<void>, read: () => void): PlanFactory {
  return (target) => {
    const snapshot: World = new Map([[target.cluster, [...(world.get(target.cluster) ?? [])]]]);
    read();
    const plan = planFactoryOf(snapshot)(target) as ScanPlan;
    return {
      ...plan,
      objects: {
        load: async () => {
          await resume;
          return plan.objects.load();
        },
      },
    };
  };
}

describe('scanAndPublish with two overlapping scans of one cluster', () => {
  const restricted = [{ cluster: 'prod', name: 'default' }];
  const variants = [
    { older: 'full', newer: 'full' },
    { older: 'restricted', newer: 'full' },
    { older: 'full', newer: 'restricted' },
    { older: 'restricted', newer: 'restricted' },
  ] as const;
  const scanOf = (kind: 'full' | 'restricted', scanId: string) => ({
    ...request(['prod'], scanId),
    ...(kind === 'restricted' ? { restrictTo: restricted } : {}),
  });

  it.each(variants)(
    'newer finishes first ($older older, $newer newer): no false RESOLVED',
    async ({ older, newer }) => {
      // Prepare: the older scan reads the cluster while the NodeClass is fixed
      const world: World = new Map([['prod', [fixed()]]]);
      const resume = gate();
      const read = gate();
      const olderScan = scanAndPublish(
        deps(world, { planFor: stalePlan(world, resume.opened, read.open) }),
        scanOf(older, 'older')
      );
      await read.opened;
      // Act: the NodeClass breaks, the newer scan sees it and completes, then the older one resumes
      world.set('prod', [broken()]);
      await scanAndPublish(deps(world), scanOf(newer, 'newer'));
      resume.open();
      const result = await olderScan;
      // Assess
      expect(findingMessages().map((m) => m.change)).toEqual(['new']);
      expect([...store.findings.values()].find((s) => s.checkId === CHECK)?.status).toBe('open');
      expect(result.outcomes[0]).toMatchObject({ ok: true, superseded: true, published: 0 });
    }
  );

  it.each(variants)(
    'older finishes first ($older older, $newer newer): no false RESOLVED',
    async ({ older, newer }) => {
      // Prepare: broken and notified; then the older scan reads it fixed, the newer broken again
      const world: World = new Map([['prod', [broken()]]]);
      await scanAndPublish(deps(world), request(['prod'], 'baseline'));
      world.set('prod', [fixed()]);
      const olderResume = gate();
      const olderRead = gate();
      const olderScan = scanAndPublish(
        deps(world, { planFor: stalePlan(world, olderResume.opened, olderRead.open) }),
        scanOf(older, 'older')
      );
      await olderRead.opened;
      world.set('prod', [broken()]);
      const newerResume = gate();
      const newerRead = gate();
      const newerScan = scanAndPublish(
        deps(world, { planFor: stalePlan(world, newerResume.opened, newerRead.open) }),
        scanOf(newer, 'newer')
      );
      await newerRead.opened;
      // Act: the older scan finishes before the newer one writes anything
      olderResume.open();
      await olderScan;
      newerResume.open();
      await newerScan;
      // Assess
      expect(findingMessages().map((m) => m.change)).toEqual(['new']);
      expect([...store.findings.values()].find((s) => s.checkId === CHECK)?.status).toBe('open');
    }
  );

  it('an older scan that passed the staleness check still loses to a newer write on the item', async () => {
    // Prepare: broken and notified; the older scan reads it fixed and stops after the check
    const world: World = new Map([['prod', [broken()]]]);
    await scanAndPublish(deps(world), request(['prod'], 'baseline'));
    world.set('prod', [fixed()]);
    const checked = gate();
    const resume = gate();
    const latest = store.latestScanSeq.bind(store);
    store.latestScanSeq = async (cluster: ClusterIdentity) => {
      const seq = await latest(cluster);
      store.latestScanSeq = latest;
      checked.open();
      await resume.opened;
      return seq;
    };
    const olderScan = scanAndPublish(deps(world), request(['prod'], 'older'));
    await checked.opened;
    // Act: the NodeClass breaks again; a newer scan two hours later refreshes the finding
    world.set('prod', [broken()]);
    const later = new Date('2026-11-01T02:00:00Z');
    await scanAndPublish(deps(world, { clock: () => later }), request(['prod'], 'newer'));
    resume.open();
    await olderScan;
    // Assess
    expect(findingMessages().map((m) => m.change)).toEqual(['new']);
    expect([...store.findings.values()].find((s) => s.checkId === CHECK)).toMatchObject({
      status: 'open',
      lastSeen: later.toISOString(),
    });
  });
});

describe('scanAndPublish with an object too large to store', () => {
  /** Karpenter's CRD bounds no selector term: one AMI name of 420,000 characters. */
  const poison = () =>
    aNodeClassObject({
      name: 'poison',
      spec: { amiFamily: 'AL2023', amiSelectorTerms: [{ name: `${'a'.repeat(419_999)}*` }] },
    });

  function recordingLogger() {
    const lines: { level: string; message: string; attributes?: Record<string, unknown> }[] = [];
    const logger = {
      info: (message: string, attributes?: Record<string, unknown>) =>
        lines.push({ level: 'info', message, ...(attributes ? { attributes } : {}) }),
      warn: (message: string, attributes?: Record<string, unknown>) =>
        lines.push({ level: 'warn', message, ...(attributes ? { attributes } : {}) }),
      error: (message: string, attributes?: Record<string, unknown>) =>
        lines.push({ level: 'error', message, ...(attributes ? { attributes } : {}) }),
    };
    return { lines, logger };
  }

  it('reports it as an error on that object, and stores and alerts the rest of the cluster', async () => {
    // Prepare: the store holds what DynamoDB holds; the poison's index entry is over it
    store.maxItemBytes = 409_600;
    const { lines, logger } = recordingLogger();
    const world: World = new Map([['prod', [broken('default'), poison()]]]);

    // Act
    const result = await scanAndPublish(deps(world, { logger }), request(['prod']));

    // Assess: the scan succeeded; the regression on the other NodeClass is alerted
    expect(result.failedClusters).toEqual([]);
    const alerts = alertsIn(publisher.sent);
    expect(alerts.filter((alert) => alert.resource.name === 'default')).toMatchObject([
      { change: 'new', checkId: CHECK },
    ]);
    // The poison object: its own bounded findings, and the error saying what was not stored
    const onPoison = alerts.filter((alert) => alert.resource.name === 'poison');
    expect(onPoison.map((alert) => alert.checkId).sort()).toEqual([
      'ami-selector-pinned',
      'nodeclass-schema-valid',
    ]);
    const refused = [...store.findings.values()].find(
      (state) => state.checkId === 'nodeclass-schema-valid' && state.resource.name === 'poison'
    );
    expect(refused).toMatchObject({ status: 'open', findingStatus: 'error', severity: 'high' });
    expect(refused?.message).toMatch(
      /^The scanner cannot store this EC2NodeClass in its event index \(42\d,\d{3} bytes, over the 409,600-byte DynamoDB item limit; most of it is spec\.amiSelectorTerms\)\./
    );
    for (const state of store.findings.values()) {
      expect(Buffer.byteLength(state.message)).toBeLessThanOrEqual(2048);
    }
    // Not indexed (events cannot re-evaluate it), the others are; the log names it
    expect([...store.index.keys()]).toEqual([`${clusterKey(PROD)}#default`]);
    expect(lines).toContainEqual({
      level: 'warn',
      message: 'Item too large to store',
      attributes: {
        cluster: 'prod',
        object: 'EC2NodeClass/poison',
        item: 'nodeclass-index',
        bytes: expect.any(Number),
        maxBytes: 409_600,
      },
    });
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('stays quiet on the next scan: the bounded findings keep their ids and material hashes', async () => {
    // Prepare
    store.maxItemBytes = 409_600;
    const world: World = new Map([['prod', [broken('default'), poison()]]]);
    await scanAndPublish(deps(world), request(['prod'], 's1'));
    publisher.sent.length = 0;
    now = new Date('2026-11-01T00:15:00Z');

    // Act
    const result = await scanAndPublish(deps(world), request(['prod'], 's2'));

    // Assess
    expect(result.failedClusters).toEqual([]);
    expect(publisher.sent).toEqual([]);
  });

  it('resolves the error once the object fits again', async () => {
    // Prepare
    store.maxItemBytes = 409_600;
    await scanAndPublish(deps(new Map([['prod', [poison()]]])), request(['prod'], 's1'));
    publisher.sent.length = 0;
    now = new Date('2026-11-01T00:15:00Z');

    // Act: the term is shortened
    await scanAndPublish(deps(new Map([['prod', [fixed('poison')]]])), request(['prod'], 's2'));

    // Assess
    expect(
      alertsIn(publisher.sent)
        .map((alert) => `${alert.change} ${alert.checkId}`)
        .sort()
    ).toEqual(['resolved ami-selector-pinned', 'resolved nodeclass-schema-valid']);
    expect([...store.index.keys()]).toEqual([`${clusterKey(PROD)}#poison`]);
  });

  it('logs the cluster and the object a failed scan failed on', async () => {
    // Prepare: the claim of one object's finding fails
    const { lines, logger } = recordingLogger();
    store.claim = async () => {
      throw new Error('ValidationException: Item size has exceeded the maximum allowed size');
    };

    // Act
    const result = await scanAndPublish(
      deps(new Map([['prod', [broken('default')]]]), { logger }),
      request(['prod'])
    );

    // Assess
    expect(result.failedClusters).toEqual(['prod']);
    expect(result.outcomes[0]?.error).toBe(
      'Error: ValidationException: Item size has exceeded the maximum allowed size'
    );
    expect(lines.filter((line) => line.level === 'error')).toEqual([
      {
        level: 'error',
        message: 'Cluster scan failed',
        attributes: {
          cluster: 'prod',
          scanId: 's1',
          error: 'Error: ValidationException: Item size has exceeded the maximum allowed size',
          object: 'EC2NodeClass/default',
          step: 'claim',
        },
      },
    ]);
  });
});
