// The structured lines the dashboard's failing-resources table is built from, and the per-cluster
// AWS call counts, through the real scan path (scanAndPublish with in-memory ports).
import { beforeEach, describe, expect, it } from 'vitest';
import { apiCallMeter } from '../../lambda/app/api-call-meter.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../../lambda/app/scan-and-publish.js';
import type { AppLogger } from '../../lambda/core/ports/service.js';
import { FINDING_STATE_LOG_MESSAGE } from '../../lambda/shared/telemetry.js';
import {
  brokenNodeClass as broken,
  fixedNodeClass as fixed,
  planFactoryOf,
  type ScanWorld as World,
} from '../support/scan-world.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
} from '../support/service-fakes.js';

const CHECK = 'instance-profile-is-name';

type Line = { message: string } & Record<string, unknown>;

/** A plan per cluster (a cluster not in the world is unreachable); `onLoad` counts AWS calls. */
const planFactory = (world: World, onLoad?: (cluster: string) => void) =>
  planFactoryOf(world, {
    unreachable: (cluster) => !world.has(cluster),
    ...(onLoad === undefined ? {} : { onLoad }),
  });

let lines: Line[];
let metrics: RecordingMetrics;
let store: InMemoryFindingStore;
const logger: AppLogger = {
  info: (message, attributes) => lines.push({ message, ...attributes }),
  warn: () => {},
  error: () => {},
};

function deps(world: World, overrides: Partial<ScanAndPublishDeps> = {}): ScanAndPublishDeps {
  return {
    planFor: planFactory(world),
    store,
    publisher: new RecordingPublisher(),
    metrics,
    logger,
    clock: () => new Date('2026-11-01T10:00:00Z'),
    settings: { reminderIntervalMs: 24 * 3_600_000, digest: 'always' },
    ...overrides,
  };
}

const scan = (world: World, clusters: string[], scanId: string) =>
  scanAndPublish(deps(world), {
    scanId,
    trigger: 'schedule',
    clusters: clusters.map((cluster) => ({ cluster })),
  });

const stateLines = () => lines.filter((line) => line.message === FINDING_STATE_LOG_MESSAGE);

/**
 * What the dashboard's Logs Insights query computes: the latest line per (cluster, kind, name,
 * check), kept when its state is open.
 */
function failingTable(): string[] {
  const latest = new Map<string, Line>();
  for (const line of stateLines()) {
    latest.set(`${line.cluster}/${line.kind}/${line.name}/${line.checkId}`, line);
  }
  return [...latest.entries()]
    .filter(([, line]) => line.state === 'open')
    .map(([key, line]) => `${key} ${line.severity}`)
    .sort();
}

beforeEach(() => {
  lines = [];
  metrics = new RecordingMetrics();
  store = new InMemoryFindingStore();
});

describe('finding state lines', () => {
  it('logs one line per open failing finding per scan, with cluster, resource, check and severity', async () => {
    // Prepare
    const world: World = new Map([
      ['prod', [broken('default'), fixed('gpu')]],
      ['staging', [broken('spot')]],
    ]);
    // Act
    await scan(world, ['prod', 'staging'], 's1');
    // Assess
    const open = stateLines().filter((line) => line.checkId === CHECK);
    expect(open).toEqual([
      expect.objectContaining({
        state: 'open',
        cluster: 'prod',
        kind: 'EC2NodeClass',
        name: 'default',
        checkId: CHECK,
        severity: expect.any(String),
        severityRank: expect.any(Number),
        findingStatus: 'fail',
        scanId: 's1',
        scanSeq: expect.any(Number),
      }),
      expect.objectContaining({ state: 'open', cluster: 'staging', name: 'spot', checkId: CHECK }),
    ]);
    // Every line is an open finding of the store, and every open finding has its line.
    const prod = { account: '', region: '', name: 'prod' };
    const openInStore = (await store.loadFindings(prod)).states.filter((s) => s.status === 'open');
    expect(stateLines().filter((line) => line.cluster === 'prod')).toHaveLength(openInStore.length);
  });

  it('logs the open findings again at every scan, and a resolved line when one is fixed', async () => {
    // Prepare
    const world: World = new Map([['prod', [broken('default'), broken('gpu')]]]);
    await scan(world, ['prod'], 's1');
    const afterFirst = failingTable();
    // Act: gpu is fixed
    world.set('prod', [broken('default'), fixed('gpu')]);
    const before = stateLines().length;
    await scan(world, ['prod'], 's2');
    // Assess
    const second = stateLines().slice(before);
    expect(second.filter((l) => l.checkId === CHECK).map((l) => [l.name, l.state])).toEqual([
      ['default', 'open'],
      ['gpu', 'resolved'],
    ]);
    expect(second.every((line) => line.scanId === 's2')).toBe(true);
    expect(afterFirst.filter((row) => row.includes(CHECK))).toHaveLength(2);
    expect(failingTable().filter((row) => row.includes(CHECK))).toEqual([
      expect.stringMatching(/^prod\/EC2NodeClass\/default\/instance-profile-is-name /),
    ]);
  });

  it('logs nothing for a cluster that could not be scanned', async () => {
    // Act
    await scan(new Map(), ['gone'], 's1');
    // Assess
    expect(stateLines()).toEqual([]);
  });
});

describe('AWS calls per cluster', () => {
  it('reports the calls made while scanning each cluster, and the rest without a cluster', async () => {
    // Prepare: reading prod costs 5 calls, staging 3, the unreachable cluster 2; the digest 1.
    let calls = 0;
    const cost: Record<string, number> = { prod: 5, staging: 3, gone: 2 };
    const world: World = new Map([
      ['prod', [broken('default')]],
      ['staging', [fixed('default')]],
    ]);
    const publisher = new RecordingPublisher();
    const countingPublisher = {
      publish: async (messages: Parameters<RecordingPublisher['publish']>[0]) => {
        if (messages.some((m) => m.attributes.change === 'digest')) calls += 1;
        return publisher.publish(messages);
      },
    };
    const recorded: [number, string | undefined][] = [];
    class CallRecordingMetrics extends RecordingMetrics {
      public override apiCalls(count: number, cluster?: string): void {
        recorded.push([count, cluster]);
      }
    }
    // Act
    await scanAndPublish(
      deps(world, {
        planFor: planFactory(world, (cluster) => {
          calls += cost[cluster] ?? 0;
        }),
        publisher: countingPublisher,
        metrics: new CallRecordingMetrics(),
        apiCallCount: () => calls,
      }),
      {
        scanId: 's1',
        trigger: 'schedule',
        clusters: ['prod', 'gone', 'staging'].map((cluster) => ({ cluster })),
      }
    );
    // Assess
    expect(recorded).toEqual([
      [5, 'prod'],
      [2, 'gone'],
      [3, 'staging'],
      [1, undefined],
    ]);
  });

  it('reports nothing without a call counter', async () => {
    const recorded: unknown[] = [];
    const meter = apiCallMeter(undefined, { apiCalls: (...args) => recorded.push(args) });
    await expect(meter.cluster('prod', async () => 'scanned')).resolves.toBe('scanned');
    meter.rest();
    expect(recorded).toEqual([]);
  });

  it('reports the calls of a scan that throws, and rethrows', async () => {
    let calls = 10;
    const recorded: unknown[] = [];
    const meter = apiCallMeter(() => calls, { apiCalls: (...args) => recorded.push(args) });
    await expect(
      meter.cluster('prod', async () => {
        calls += 4;
        throw new Error('EKS unreachable');
      })
    ).rejects.toThrow('EKS unreachable');
    calls += 1;
    meter.rest();
    expect(recorded).toEqual([[4, 'prod'], [1]]);
  });
});
