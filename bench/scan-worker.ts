// One benchmark measurement, run in a fresh process so its peak RSS is its own:
//   scan-worker size <clusters> <nodeClassesPerCluster>   full scan of a synthetic fleet
//   scan-worker events <clusters> <nodeClassesPerCluster> one AMI and one IAM event on that fleet
// Prints one JSON object on stdout. Time spent waiting on AWS is virtual (see virtual-clock.ts).
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
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
import type { SimulationCacheOptions } from '../lambda/app/cached-simulator.js';
import { createAwsFactsEnricher } from '../lambda/app/collect-aws-facts.js';
import { createPermissionsEnricher } from '../lambda/app/collect-permissions.js';
import { handleAmiEvent } from '../lambda/app/handle-ami-event.js';
import { handleIamEvent } from '../lambda/app/handle-iam-event.js';
import { collectInventory, evaluateInventory, type ScanPlan } from '../lambda/app/run-scan.js';
import { type ScanAndPublishDeps, scanAndPublish } from '../lambda/app/scan-and-publish.js';
import { imageMatchesTerm } from '../lambda/core/ami/queries.js';
import { indexEntriesOf } from '../lambda/core/event-index.js';
import type { SimulationResult } from '../lambda/core/facts/permissions.js';
import {
  cacheKeyId,
  type SimulationCacheEntry,
  type SimulationCachePort,
} from '../lambda/core/iam/simulation-cache.js';
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

/** The state table's verdict cache, in memory: what a scheduled Lambda scan reads back. */
class InMemoryVerdictCache implements SimulationCachePort {
  private readonly entries = new Map<string, readonly SimulationResult[]>();
  public lookups = 0;
  public hits = 0;
  public writes = 0;

  public async get(keys: Parameters<SimulationCachePort['get']>[0]) {
    const found = new Map<string, readonly SimulationResult[]>();
    for (const key of keys) {
      this.lookups++;
      const results = this.entries.get(cacheKeyId(key));
      if (results !== undefined) found.set(cacheKeyId(key), results);
    }
    this.hits += found.size;
    return found;
  }

  public async put(entries: readonly SimulationCacheEntry[]) {
    this.writes += entries.length;
    for (const entry of entries) this.entries.set(cacheKeyId(entry.key), entry.results);
  }
}

/** The production enrichers (AWS facts, then permissions) over a simulated account, fresh per scan. */
function enrichersFor(
  account: ReturnType<typeof simulatedAccount>,
  cache?: SimulationCacheOptions
) {
  return [
    createAwsFactsEnricher({
      port: createLiveAwsFacts(account.sdk, { limiter: account.limiter }),
      now: SCAN_TIME,
    }),
    createPermissionsEnricher({
      simulator: createIamSimulator(account.sdk.iam, { limiter: account.limiter }),
      policies: createIamRolePolicyReader(rateLimited(account.sdk.iam, 'iam', account.limiter)),
      ...(cache === undefined ? {} : { cache }),
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

/** One full scan (AWS facts, then permissions) of `world` on a fresh simulated account. */
async function scanOnce(world: World, rateLimited: boolean, cache?: SimulationCacheOptions) {
  const account = simulatedAccount(world, rateLimited);
  const { clock } = account;
  const realStart = performance.now();
  const phases: Record<string, number> = {};
  const result = await clock.run(async () => {
    const objects = createWorldObjectSource({ world, file: 'fleet' });
    const { inventory: loaded, inputErrors } = await collectInventory({ objects });
    const [awsFacts, permissions] = enrichersFor(account, cache);
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
  return { account, phases, result, scannerComputeMs: realMs - account.answeringMs() };
}

async function measureSize(size: FleetSize, rateLimited: boolean) {
  const fleet = buildFleetWorld(size);
  const world = WorldSchema.parse(fleet);
  // The Lambdas' verdict cache: the first scan fills it, the second (a scheduled scan of the
  // unchanged fleet) is measured from it.
  const verdicts = new InMemoryVerdictCache();
  const cache: SimulationCacheOptions = { port: verdicts, ttlSeconds: 24 * 60 * 60 };
  const { account, phases, result, scannerComputeMs } = await scanOnce(world, rateLimited, cache);
  const { clock, aws } = account;
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
  const scanPeakRssMb = peakRssMb();
  const hitsBefore = verdicts.hits;
  const steady = await scanOnce(world, rateLimited, cache);
  const steadyOperations = steady.account.aws.report();
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
    /** Requests sent again with an input equal to an earlier one, per operation (should be 0). */
    identicalRequests: Object.fromEntries(
      Object.entries(operations).map(([op, stats]) => [op, stats.identical])
    ),
    /**
     * A second, scheduled scan of the unchanged fleet on a fresh account, with the verdicts the
     * first scan cached: its simulations are what a steady-state Lambda scan sends.
     */
    steadyState: {
      simulations: steadyOperations[SIMULATE]?.calls ?? 0,
      calls: sum(Object.values(steadyOperations).map((op) => op.calls)),
      cachedVerdictsUsed: verdicts.hits - hitsBefore,
      wallTimeMs: round(steady.account.clock.now() + steady.scannerComputeMs),
      sameFindings:
        JSON.stringify(steady.result.report.summary.byStatus) ===
        JSON.stringify(result.report.summary.byStatus),
    },
    peakRssMb: scanPeakRssMb,
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
  // Stored under each cluster's identity as the scans below see it (their settings name no account
  // or region).
  for (const state of applyChanges([], initial.changes)) {
    const cluster = { account: '', region: '', name: state.resource.cluster };
    store.findings.set(InMemoryFindingStore.key(cluster, state.id), state);
  }

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
        imagesIn: () => createLiveAwsFacts(account.sdk, { limiter: account.limiter }),
        homeRegion: world.region,
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
        homeRegion: world.region,
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

/**
 * The real CLI (`scan --world FILE --format F`) in this process, its report written as it comes
 * to /dev/null: the peak RSS of producing one output format for the whole fleet.
 */
async function measureFormat(format: string, worldFile: string) {
  const { runCli } = await import('../lambda/cli/main.js');
  const sink = openSync('/dev/null', 'w');
  let bytes = 0;
  const started = performance.now();
  try {
    const exitCode = await runCli(['scan', '--world', worldFile, '--format', format], {
      stdout: (text) => {
        bytes += Buffer.byteLength(text);
        writeSync(sink, text);
      },
      stderr: (text) => process.stderr.write(text),
      readStdin: async () => '',
      stdoutIsTty: false,
      stderrIsTty: false,
      // The 100 × 50 world is above the default world-file limits.
      env: {
        ...process.env,
        NODECLASS_SCAN_MAX_WORLD_BYTES: String(1024 * 1024 * 1024),
        NODECLASS_SCAN_MAX_WORLD_VALUES: String(100_000_000),
      },
      now: () => SCAN_TIME,
    });
    return {
      kind: 'format',
      format,
      exitCode,
      reportBytes: bytes,
      wallTimeMs: round(performance.now() - started),
      peakRssMb: peakRssMb(),
    };
  } finally {
    closeSync(sink);
  }
}

const [mode, clusters, perCluster, extra] = process.argv.slice(2);
if (mode === 'format') {
  // scan-worker format <table|json|sarif|junit> <world file>
  if (clusters === undefined || perCluster === undefined)
    throw new Error('usage: scan-worker format <format> <world file>');
  process.stdout.write(`${JSON.stringify(await measureFormat(clusters, perCluster))}\n`);
} else {
  const size = { clusters: Number(clusters), nodeClassesPerCluster: Number(perCluster) };
  if (!Number.isInteger(size.clusters) || !Number.isInteger(size.nodeClassesPerCluster)) {
    throw new Error(
      'usage: scan-worker size|events <clusters> <nodeClassesPerCluster> [--no-rate-limits]'
    );
  }
  const output =
    mode === 'events'
      ? await measureEvents(size)
      : await measureSize(size, extra !== '--no-rate-limits');
  process.stdout.write(`${JSON.stringify(output)}\n`);
}
