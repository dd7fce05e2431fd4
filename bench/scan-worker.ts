// One benchmark measurement, run in a fresh process so its peak RSS is its own:
//   scan-worker size <clusters> <nodeClassesPerCluster>   full scan of a synthetic fleet
//   scan-worker events <clusters> <nodeClassesPerCluster> one AMI and one IAM event on that fleet
// Prints one JSON object on stdout. Time spent waiting on AWS is virtual (see virtual-clock.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLiveAwsFacts } from '../lambda/adapters/aws/aws-facts-adapter.js';
import { createIamEntityReader } from '../lambda/adapters/aws/iam-entities.js';
import {
  createIamRolePolicyReader,
  createIamSimulator,
} from '../lambda/adapters/aws/iam-simulator.js';
import { ApiRateLimiter, rateLimited } from '../lambda/adapters/aws/rate-limit.js';
import { type World, WorldSchema } from '../lambda/adapters/world/schema.js';
import { createWorldObjectSource } from '../lambda/adapters/world/world-objects.js';
import { createAwsFactsEnricher } from '../lambda/app/collect-aws-facts.js';
import { createPermissionsEnricher } from '../lambda/app/collect-permissions.js';
import { handleAmiEvent } from '../lambda/app/handle-ami-event.js';
import { handleIamEvent } from '../lambda/app/handle-iam-event.js';
import { collectInventory, evaluateInventory, type ScanPlan } from '../lambda/app/run-scan.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../lambda/app/scan-and-publish.js';
import { imageMatchesTerm } from '../lambda/core/ami/queries.js';
import { indexEntriesOf } from '../lambda/core/event-index.js';
import type { Inventory } from '../lambda/core/inventory.js';
import { applyChanges, diffFindings } from '../lambda/core/lifecycle.js';
import {
  InMemoryFindingStore,
  RecordingMetrics,
  RecordingPublisher,
  silentLogger,
} from '../test/support/service-fakes.js';
import { DEFAULT_LATENCY_MS, RATE_LIMITS, SimulatedAws } from './aws-model.js';
import { buildFleetWorld, type FleetSize } from './fleet.js';
import { fleetLowerBound, lowerBoundWallTimeMs } from './lower-bound.js';
import { VirtualClock } from './virtual-clock.js';
import { createWorldSdk, type Interceptor } from './world-sdk.js';

export const SCAN_TIME = new Date('2026-11-01T00:00:00Z');
const REMINDER_MS = 24 * 60 * 60 * 1000;

/** AWS modelled for one measurement, plus the real time spent computing the world's answers. */
function simulatedAccount(world: World, rateLimited = true) {
  const clock = new VirtualClock();
  const aws = new SimulatedAws({ clock, rateLimited });
  let answeringMs = 0;
  const intercept: Interceptor = (service, operation, input, answer) =>
    aws.intercept(service, operation, input, async () => {
      const started = performance.now();
      try {
        return await answer();
      } finally {
        answeringMs += performance.now() - started;
      }
    });
  const sdk = createWorldSdk(world, { now: SCAN_TIME, intercept });
  // The scanner's own client-side limits (as in production), on the virtual clock.
  const limiter = new ApiRateLimiter({
    now: () => clock.now(),
    sleep: (ms) => clock.sleep(ms),
  });
  return { clock, aws, sdk, limiter, answeringMs: () => answeringMs };
}

/** The production enrichers (AWS facts, then permissions) over a simulated account, fresh per scan. */
function enrichersFor(account: ReturnType<typeof simulatedAccount>) {
  return [
    createAwsFactsEnricher({
      port: createLiveAwsFacts(account.sdk, { limiter: account.limiter }),
      now: SCAN_TIME,
    }),
    createPermissionsEnricher({
      simulator: createIamSimulator(account.sdk.iam, { limiter: account.limiter }),
      policies: createIamRolePolicyReader(rateLimited(account.sdk.iam, 'iam', account.limiter)),
    }),
  ] as const;
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function peakRssMb(): number {
  return Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
}

function round(value: number): number {
  return Math.round(value);
}

function errorReasons(inventory: Inventory): Record<string, number> {
  const reasons: Record<string, number> = {};
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    if (record.status === 'unavailable' && typeof record.reason === 'string') {
      reasons[record.reason] = (reasons[record.reason] ?? 0) + 1;
      return;
    }
    for (const child of Object.values(record)) visit(child);
  };
  for (const facts of inventory.awsFacts.values()) visit(facts);
  for (const facts of inventory.permissions.values()) visit(facts);
  return reasons;
}

async function measureSize(size: FleetSize, rateLimited: boolean) {
  const fleet = buildFleetWorld(size);
  const world = WorldSchema.parse(fleet);
  const account = simulatedAccount(world, rateLimited);
  const { clock, aws } = account;
  const realStart = performance.now();
  const phases: Record<string, number> = {};
  const result = await clock.run(async () => {
    const objects = createWorldObjectSource({ world, file: 'fleet' });
    const { inventory: loaded, inputErrors } = await collectInventory({ objects });
    const [awsFacts, permissions] = enrichersFor(account);
    let started = clock.now();
    const withFacts = await awsFacts.enrich(loaded);
    phases.awsFacts = clock.now() - started;
    started = clock.now();
    const inventory = await permissions.enrich(withFacts);
    phases.permissions = clock.now() - started;
    const report = evaluateInventory(inventory, { now: SCAN_TIME }, inputErrors);
    return { inventory, report };
  });
  const realMs = performance.now() - realStart;
  const scannerComputeMs = realMs - account.answeringMs();
  const operations = aws.report();
  // The bound comes from the fleet description alone (lower-bound.ts uses no scanner code).
  const bound = fleetLowerBound(fleet);
  const SIMULATE = 'iam:SimulatePrincipalPolicy';
  const allOps = [
    ...new Set([...Object.keys(operations), ...Object.keys(bound.byOperation)]),
  ].sort();
  const byOperation = Object.fromEntries(
    allOps.map((op) => {
      const calls = operations[op]?.calls ?? 0;
      const lowerBound = bound.byOperation[op] ?? 0;
      return [op, { calls, lowerBound, ratio: lowerBound === 0 ? null : calls / lowerBound }];
    })
  );
  const factsOps = allOps.filter((op) => op !== SIMULATE);
  const simulate = operations[SIMULATE];
  const simulationBound = bound.byOperation[SIMULATE] ?? 0;
  const nodeClasses = size.clusters * size.nodeClassesPerCluster;
  const factsCallsTotal = sum(factsOps.map((op) => operations[op]?.calls ?? 0));
  const factsBoundTotal = sum(factsOps.map((op) => bound.byOperation[op] ?? 0));
  return {
    kind: 'size',
    rateLimited,
    clusters: size.clusters,
    nodeClassesPerCluster: size.nodeClassesPerCluster,
    nodeClasses,
    /** Every operation: calls sent, the fleet's lower bound, and their ratio. */
    byOperation,
    /** The bound's own wall time under the same limits and latency (unlimited concurrency). */
    lowerBoundWallTimeMs: lowerBoundWallTimeMs(
      bound.byOperation,
      rateLimited
        ? RATE_LIMITS
        : {
            ec2: { capacity: Number.POSITIVE_INFINITY, refillPerSecond: 1 },
            ssm: { capacity: Number.POSITIVE_INFINITY, refillPerSecond: 1 },
            iam: { capacity: Number.POSITIVE_INFINITY, refillPerSecond: 1 },
            iamSimulate: { capacity: Number.POSITIVE_INFINITY, refillPerSecond: 1 },
          },
      DEFAULT_LATENCY_MS
    ),
    awsFacts: {
      simulatedMs: round(phases.awsFacts ?? 0),
      calls: factsCallsTotal,
      lowerBound: factsBoundTotal,
      ratio: factsCallsTotal / factsBoundTotal,
      callsPerNodeClass: factsCallsTotal / nodeClasses,
      throttled: sum(factsOps.map((op) => operations[op]?.throttled ?? 0)),
      failed: sum(factsOps.map((op) => operations[op]?.failed ?? 0)),
    },
    permissions: {
      simulatedMs: round(phases.permissions ?? 0),
      calls: simulate?.calls ?? 0,
      distinctSimulations: bound.simulationContexts,
      lowerBound: simulationBound,
      ratio: simulationBound === 0 ? 1 : (simulate?.calls ?? 0) / simulationBound,
      callsPerNodeClass: (simulate?.calls ?? 0) / nodeClasses,
      throttled: simulate?.throttled ?? 0,
      failed: simulate?.failed ?? 0,
    },
    operations,
    /** AWS waits (virtual) plus the scanner's own compute, which the waits do not overlap here. */
    wallTimeMs: round(clock.now() + scannerComputeMs),
    simulatedAwsMs: round(clock.now()),
    scannerComputeMs: round(scannerComputeMs),
    findings: result.report.summary.byStatus,
    unavailableInputs: errorReasons(result.inventory),
    peakRssMb: peakRssMb(),
  };
}

function amiEvent(imageId: string, region: string) {
  const event = JSON.parse(
    readFileSync(join(process.cwd(), 'examples/events/ami-state-change-available.json'), 'utf8')
  ) as { resources: string[]; detail: { ImageId: string }; region: string };
  event.detail.ImageId = imageId;
  event.region = region;
  event.resources = [`arn:aws:ec2:${event.region}::image/${imageId}`];
  return event;
}

function iamEvent(roleName: string) {
  const event = JSON.parse(
    readFileSync(join(process.cwd(), 'examples/events/iam-attach-role-policy.json'), 'utf8')
  ) as { detail: { requestParameters: { roleName: string } } };
  event.detail.requestParameters.roleName = roleName;
  return event;
}

/** The world restricted to one cluster: what the per-cluster worker Lambda scans. */
function clusterWorld(world: World, cluster: string): World {
  return { ...world, eks: { clusters: world.eks.clusters.filter((c) => c.name === cluster) } };
}

async function measureEvents(size: FleetSize) {
  const world = WorldSchema.parse(buildFleetWorld(size));
  const perCluster = new Map(world.eks.clusters.map((c) => [c.name, clusterWorld(world, c.name)]));

  // Stored state after a clean full scan (not measured, no rate limits): the index and findings.
  const store = new InMemoryFindingStore();
  const setup = simulatedAccount(world, false);
  const { inventory, report } = await setup.clock.run(async () => {
    const { inventory: loaded, inputErrors } = await collectInventory({
      objects: createWorldObjectSource({ world, file: 'fleet' }),
      enrichers: enrichersFor(setup),
    });
    return {
      inventory: loaded,
      report: evaluateInventory(loaded, { now: SCAN_TIME }, inputErrors),
    };
  });
  await store.putIndexEntries(indexEntriesOf(inventory));
  const initial = diffFindings({
    stored: [],
    findings: report.findings,
    scope: { clusters: world.eks.clusters.map((c) => c.name) },
    now: SCAN_TIME,
  });
  for (const state of applyChanges([], initial.changes)) store.findings.set(state.id, state);

  async function measure(
    run: (
      deps: ScanAndPublishDeps,
      account: ReturnType<typeof simulatedAccount>
    ) => Promise<unknown>
  ) {
    const account = simulatedAccount(world);
    const publisher = new RecordingPublisher();
    const deps: ScanAndPublishDeps = {
      planFor: ({ cluster }): ScanPlan => {
        const scoped = perCluster.get(cluster) ?? world;
        return {
          objects: createWorldObjectSource({ world: scoped, file: 'fleet' }),
          enrichers: enrichersFor(account),
        };
      },
      store,
      publisher,
      metrics: new RecordingMetrics(),
      logger: silentLogger,
      clock: () => new Date(SCAN_TIME.getTime() + 60_000),
      settings: { reminderIntervalMs: REMINDER_MS, digest: 'on-change' },
    };
    const realStart = performance.now();
    const outcome = (await account.clock.run(() => run(deps, account))) as {
      status: string;
      nodeClasses?: readonly unknown[];
    };
    const realMs = performance.now() - realStart;
    const operations = account.aws.report();
    const calls = sum(Object.values(operations).map((op) => op.calls));
    const compute = realMs - account.answeringMs();
    return {
      status: outcome.status,
      affectedNodeClasses: outcome.nodeClasses?.length ?? 0,
      calls,
      operations,
      wallTimeMs: round(account.clock.now() + compute),
      simulatedAwsMs: round(account.clock.now()),
      scannerComputeMs: round(compute),
      notifications: publisher.sent.length,
    };
  }

  // A team's own image (name selector, one NodeClass) and one cluster's node role.
  const uniqueClass = inventory.nodeClasses.find(
    (entry) => entry.parsed.ok && entry.parsed.value.spec.amiSelectorTerms[0]?.name !== undefined
  );
  const pattern = uniqueClass?.parsed.ok
    ? (uniqueClass.parsed.value.spec.amiSelectorTerms[0]?.name ?? '')
    : '';
  const image = world.ec2.images.find(
    (candidate) => candidate.Name === pattern.replace('*', '2025')
  );
  if (!uniqueClass || !image) throw new Error('fleet has no NodeClass with a unique image');
  const nodeRole = `KarpenterNodeRole-${uniqueClass.cluster}`;

  const ami = await measure((deps, account) =>
    handleAmiEvent(
      {
        store,
        scan: (request) => scanAndPublish(deps, request),
        metrics: deps.metrics,
        logger: silentLogger,
        images: createLiveAwsFacts(account.sdk, { limiter: account.limiter }),
        matches: (candidate, term, context) =>
          imageMatchesTerm(candidate, term, { ...context, accountId: world.account }),
      },
      amiEvent(image.ImageId, world.region)
    )
  );
  const iam = await measure((deps, account) =>
    handleIamEvent(
      {
        store,
        scan: (request) => scanAndPublish(deps, request),
        metrics: deps.metrics,
        logger: silentLogger,
        iam: createIamEntityReader(account.sdk.iam),
      },
      iamEvent(nodeRole)
    )
  );
  return {
    kind: 'events',
    clusters: size.clusters,
    nodeClassesPerCluster: size.nodeClassesPerCluster,
    nodeClasses: inventory.nodeClasses.length,
    ami: { imageId: image.ImageId, ...ami },
    iam: { roleName: nodeRole, ...iam },
    peakRssMb: peakRssMb(),
  };
}

const [mode, clusters, perCluster, limits] = process.argv.slice(2);
const size = { clusters: Number(clusters), nodeClassesPerCluster: Number(perCluster) };
if (!Number.isInteger(size.clusters) || !Number.isInteger(size.nodeClassesPerCluster)) {
  throw new Error(
    'usage: scan-worker size|events <clusters> <nodeClassesPerCluster> [--no-rate-limits]'
  );
}
const output =
  mode === 'events'
    ? await measureEvents(size)
    : await measureSize(size, limits !== '--no-rate-limits');
process.stdout.write(`${JSON.stringify(output)}\n`);
