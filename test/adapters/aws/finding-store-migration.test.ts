// State an earlier version stored under the cluster name alone is adopted by the first scan of
// each cluster identity, without alerting: on a real DynamoDB implementation (dynalite), with the
// earlier version's store writing the state (test/support/legacy-finding-store.ts, its write path
// verbatim) and today's store reading it.
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createFindingStore } from '../../../lambda/adapters/aws/finding-store.js';
import {
  type PlanFactory,
  type ScanAndPublishDeps,
  scanAndPublish,
} from '../../../lambda/app/scan-and-publish.js';
import type { FindingStore } from '../../../lambda/core/ports/service.js';
import { useDynaliteTable } from '../../support/dynalite-table.js';
import { createLegacyFindingStore, legacyPort } from '../../support/legacy-finding-store.js';
import {
  brokenNodeClass as broken,
  fixedNodeClass as fixed,
  planFactoryOf,
  type ScanWorld,
} from '../../support/scan-world.js';
import { RecordingMetrics, RecordingPublisher, silentLogger } from '../../support/service-fakes.js';

const ACCOUNT = '111122223333';
const HOME = 'eu-west-1';
const CHECK = 'instance-profile-is-name';
const START = new Date('2026-11-01T00:00:00Z');

const dynamo = useDynaliteTable(HOME);

/** Every item of the table, attribute values unwrapped. */
async function tableItems(): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await dynamo.client.send(new ScanCommand({ TableName: dynamo.name }));
  return Items.map((item) =>
    Object.fromEntries(Object.entries(item).map(([key, value]) => [key, Object.values(value)[0]]))
  );
}

const keysOf = (items: readonly Record<string, unknown>[]) =>
  items.map((item) => `${String(item.pk)} ${String(item.sk)}`).sort();

/** Clusters by region, then name (the home region's `prod` and another region's `prod`). */
type Regions = Map<string, ScanWorld>;

function planFor(regions: Regions): PlanFactory {
  return ({ cluster, region }) =>
    planFactoryOf(regions.get(region ?? HOME) ?? new Map())({ cluster });
}

function currentStore(): FindingStore {
  return createFindingStore(dynamo.documents, {
    tableName: dynamo.name,
    resolvedTtlDays: 30,
    homeRegion: HOME,
    now: () => START,
  });
}

function deps(
  store: FindingStore,
  regions: Regions,
  at: Date,
  publisher = new RecordingPublisher()
): ScanAndPublishDeps & { publisher: RecordingPublisher } {
  return {
    planFor: planFor(regions),
    store,
    publisher,
    metrics: new RecordingMetrics(),
    logger: silentLogger,
    clock: () => at,
    settings: {
      reminderIntervalMs: 24 * 3_600_000,
      digest: 'on-change',
      account: ACCOUNT,
      region: HOME,
    },
  };
}

const schedule = (scanId: string, region?: string) => ({
  scanId,
  trigger: 'schedule',
  clusters: [{ cluster: 'prod', ...(region === undefined ? {} : { region }) }],
});

/** What the published messages notify: `change cluster@region checkId name`, summaries expanded. */
function alerts(publisher: RecordingPublisher): string[] {
  return publisher.sent.flatMap((message) => {
    const { change, region } = message.attributes;
    if (change === 'digest') return [];
    const body = JSON.parse(message.bodies.default) as {
      changes?: { change: string; checkId: string; resource: { cluster: string; name: string } }[];
      finding?: { checkId: string; resource: { cluster: string; name: string } };
    };
    const items =
      body.changes ??
      (body.finding ? [{ change: change ?? '', ...body.finding }] : ([] as never[]));
    return items.map(
      (item) =>
        `${item.change} ${item.resource.cluster}@${region} ${item.checkId} ${item.resource.name}`
    );
  });
}

/** Two NodeClasses of `prod` in the home region: one broken (alerted), one fixed. */
const homeOnly = (): Regions => new Map([[HOME, new Map([['prod', [broken('a'), fixed('b')]]])]]);

/** The state an earlier version leaves: its scans of `prod`, through its own store. */
async function scanWithEarlierVersion(regions: Regions, scans = 2) {
  const legacy = legacyPort(
    createLegacyFindingStore(dynamo.documents, {
      tableName: dynamo.name,
      resolvedTtlDays: 30,
      now: () => START,
    })
  );
  const publisher = new RecordingPublisher();
  for (let n = 1; n <= scans; n++) {
    const at = new Date(START.getTime() + (n - 1) * 15 * 60_000);
    await scanAndPublish(deps(legacy, regions, at, publisher), schedule(`legacy-${n}`));
  }
  return publisher;
}

describe('the first scan after the upgrade', () => {
  it('adopts what an earlier version stored: no alert, the state moved under the identity', async () => {
    // Prepare: the earlier version alerted the broken NodeClass once, then stayed quiet.
    const regions = homeOnly();
    const earlier = await scanWithEarlierVersion(regions);
    expect(alerts(earlier)).toEqual([`new prod@${HOME} ${CHECK} a`]);
    const legacyItems = await tableItems();
    const legacyFindings = legacyItems.filter(
      (item) => item.pk === 'CLUSTER#prod' && String(item.sk).startsWith('FINDING#')
    );
    expect(legacyFindings.length).toBeGreaterThan(0);
    expect(keysOf(legacyItems.filter((item) => item.pk === 'NODECLASS'))).toEqual([
      'NODECLASS prod#a',
      'NODECLASS prod#b',
    ]);

    // Act: the upgraded service's next scheduled scan
    const after = new Date(START.getTime() + 60 * 60_000);
    const upgraded = deps(currentStore(), regions, after);
    await scanAndPublish(upgraded, schedule('upgraded-1'));

    // Assess: nothing published; every finding item moved, same ids and revisions
    expect(upgraded.publisher.sent).toEqual([]);
    const items = await tableItems();
    const pk = `CLUSTER#${ACCOUNT}/${HOME}/prod`;
    const moved = items.filter((item) => item.pk === pk && String(item.sk).startsWith('FINDING#'));
    expect(moved.map((item) => [item.sk, item.revision, item.status]).sort()).toEqual(
      legacyFindings.map((item) => [item.sk, item.revision, item.status]).sort()
    );
    for (const item of moved) expect(item).toMatchObject({ account: ACCOUNT, region: HOME });
    // The legacy findings are gone; their counter stays as the adopter's tombstone, to expire.
    const legacy = items.filter((item) => item.pk === 'CLUSTER#prod');
    expect(keysOf(legacy)).toEqual(['CLUSTER#prod SCAN#SEQ']);
    expect(legacy[0]).toMatchObject({
      adoptedBy: `${ACCOUNT}/${HOME}/prod`,
      // Numbers come back as the wire's strings here: the TTL, resolvedTtlDays after the adoption.
      expiresAt: String(START.getTime() / 1000 + 30 * 86_400),
    });
    // The index is the identity's, and the legacy entries are gone.
    expect(keysOf(items.filter((item) => item.pk === 'NODECLASS'))).toEqual([
      `NODECLASS ${ACCOUNT}/${HOME}/prod#a`,
      `NODECLASS ${ACCOUNT}/${HOME}/prod#b`,
    ]);
    expect(items.find((item) => item.pk === pk && item.sk === 'SCAN#SEQ')).toMatchObject({
      legacyChecked: true,
    });

    // Act: quiet again, then the fix
    await scanAndPublish(deps(currentStore(), regions, after), schedule('upgraded-2'));
    regions.get(HOME)?.set('prod', [fixed('a'), fixed('b')]);
    const fixedScan = deps(currentStore(), regions, new Date(after.getTime() + 15 * 60_000));
    await scanAndPublish(fixedScan, schedule('upgraded-3'));

    // Assess: the adopted state resolves as any other
    expect(alerts(fixedScan.publisher)).toEqual([`resolved prod@${HOME} ${CHECK} a`]);
  });

  it('publishes once a claim the earlier version left pending', async () => {
    // Prepare: the earlier version claims the first findings, then dies before SNS takes them.
    const regions = homeOnly();
    const legacy = legacyPort(
      createLegacyFindingStore(dynamo.documents, {
        tableName: dynamo.name,
        resolvedTtlDays: 30,
        now: () => START,
      })
    );
    const dying = deps(legacy, regions, START);
    const result = await scanAndPublish(
      {
        ...dying,
        publisher: {
          publish: async () => {
            throw new Error('the Lambda timed out');
          },
        },
      },
      schedule('legacy-1')
    );
    expect(result.failedClusters).toEqual(['prod']);
    const pending = (await tableItems()).filter((item) => item.pendingSeq !== undefined);
    expect(pending.length).toBeGreaterThan(0);

    // Act: the upgraded service, once the pending claim's lease ran out
    const later = new Date(START.getTime() + 16 * 60_000);
    const upgraded = deps(currentStore(), regions, later);
    await scanAndPublish(upgraded, schedule('upgraded-1'));
    const again = deps(currentStore(), regions, new Date(later.getTime() + 15 * 60_000));
    await scanAndPublish(again, schedule('upgraded-2'));

    // Assess: sent once, then nothing pending and nothing more
    expect(alerts(upgraded.publisher)).toEqual([`new prod@${HOME} ${CHECK} a`]);
    expect(again.publisher.sent).toEqual([]);
    expect((await tableItems()).filter((item) => item.pendingSeq !== undefined)).toEqual([]);
  });

  it('two workers adopting at once: one state, no alert', async () => {
    // Prepare
    const regions = homeOnly();
    await scanWithEarlierVersion(regions);
    const after = new Date(START.getTime() + 60 * 60_000);
    const first = deps(currentStore(), regions, after);
    const second = deps(currentStore(), regions, after);

    // Act: a duplicate delivery of the schedule's message, both workers at once
    await Promise.all([
      scanAndPublish(first, schedule('upgraded-1')),
      scanAndPublish(second, schedule('upgraded-1')),
    ]);

    // Assess
    expect([...first.publisher.sent, ...second.publisher.sent]).toEqual([]);
    const items = await tableItems();
    const findings = items.filter((item) => String(item.sk).startsWith('FINDING#'));
    expect(new Set(findings.map((item) => item.pk))).toEqual(
      new Set([`CLUSTER#${ACCOUNT}/${HOME}/prod`])
    );
  });

  it('a scan that stops in the middle of the adoption: the next attempt finishes it, quietly', async () => {
    // Prepare: the legacy items cannot be deleted on the first attempt (after they were copied).
    const regions = homeOnly();
    await scanWithEarlierVersion(regions);
    const send = dynamo.documents.send.bind(dynamo.documents);
    let failures = 1;
    const flaky = Object.assign(Object.create(dynamo.documents) as DynamoDBDocumentClient, {
      send: ((command: unknown) => {
        if (command instanceof BatchWriteCommand && failures > 0) {
          failures -= 1;
          return Promise.reject(
            Object.assign(new Error('connection reset'), { name: 'InternalServerError' })
          );
        }
        return send(command as never);
      }) as DynamoDBDocumentClient['send'],
    });
    const store = createFindingStore(flaky, {
      tableName: dynamo.name,
      resolvedTtlDays: 30,
      homeRegion: HOME,
      now: () => START,
    });
    const after = new Date(START.getTime() + 60 * 60_000);

    // Act: the failed attempt, then the redelivery
    const failed = await scanAndPublish(deps(store, regions, after), schedule('upgraded-1'));
    const retry = deps(store, regions, after);
    await scanAndPublish(retry, schedule('upgraded-1'));

    // Assess
    expect(failed.failedClusters).toEqual(['prod']);
    expect(retry.publisher.sent).toEqual([]);
    const items = await tableItems();
    expect(
      items.filter((item) => item.pk === 'CLUSTER#prod' && String(item.sk).startsWith('FINDING#'))
    ).toEqual([]);
    expect(
      items.filter(
        (item) => item.pk === `CLUSTER#${ACCOUNT}/${HOME}/prod` && item.status === 'open'
      )
    ).toHaveLength(1);
  });
});

describe('two clusters of one name in two regions', () => {
  const WEST = 'us-west-2';
  /** prod in the home region (one broken class), and another prod in us-west-2 (two). */
  const twoRegions = (): Regions =>
    new Map([
      [HOME, new Map([['prod', [broken('a'), fixed('b')]]])],
      [WEST, new Map([['prod', [broken('a'), broken('c')]]])],
    ]);

  /** Three scheduled rounds: what each alerted. Both clusters at once, or one after the other. */
  async function threeRounds(store: () => FindingStore, together: boolean): Promise<string[][]> {
    const regions = twoRegions();
    const rounds: string[][] = [];
    for (let round = 0; round < 3; round++) {
      const at = new Date(START.getTime() + round * 15 * 60_000);
      const home = deps(store(), regions, at);
      const west = deps(store(), regions, at);
      const scanHome = () => scanAndPublish(home, schedule(`home-${round}`));
      const scanWest = () => scanAndPublish(west, schedule(`west-${round}`, WEST));
      if (together) await Promise.all([scanHome(), scanWest()]);
      else await scanWest().then(scanHome);
      rounds.push([...alerts(home.publisher), ...alerts(west.publisher)].sort());
    }
    return rounds;
  }

  it.each([
    ['one after the other', false],
    ['at once', true],
  ])(
    'keeps apart what each one alerts: three rounds (%s), alerts in the first only',
    async (_, together) => {
      expect(await threeRounds(currentStore, together)).toEqual([
        [
          `new prod@${HOME} ${CHECK} a`,
          `new prod@${WEST} ${CHECK} a`,
          `new prod@${WEST} ${CHECK} c`,
        ],
        [],
        [],
      ]);
    }
  );

  it('(an earlier version, keyed by name, alerted RESOLVED and NEW every round)', async () => {
    const legacy = () =>
      legacyPort(
        createLegacyFindingStore(dynamo.documents, {
          tableName: dynamo.name,
          resolvedTtlDays: 30,
          now: () => START,
        })
      );
    const rounds = await threeRounds(legacy, false);
    expect(rounds[1]?.length).toBeGreaterThan(0);
    expect(rounds[2]?.length).toBeGreaterThan(0);
  });

  it('legacy state of the name goes to the region its index names; the other starts afresh', async () => {
    // Prepare: the earlier version scanned the home region's prod only.
    const regions = twoRegions();
    await scanWithEarlierVersion(regions);
    const after = new Date(START.getTime() + 60 * 60_000);
    const home = deps(currentStore(), regions, after);
    const west = deps(currentStore(), regions, after);

    // Act: the other region's prod first (the legacy index says prod is the home region's)
    await scanAndPublish(west, schedule('west-1', WEST));
    await scanAndPublish(home, schedule('home-1'));

    // Assess: us-west-2's prod alerts its own findings as new; the home region's stays quiet
    expect(alerts(west.publisher).sort()).toEqual([
      `new prod@${WEST} ${CHECK} a`,
      `new prod@${WEST} ${CHECK} c`,
    ]);
    expect(home.publisher.sent).toEqual([]);
  });
});
