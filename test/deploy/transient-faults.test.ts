// The deployed service under transient faults: a fault is never a verdict. A cluster with open
// failures (Cluster-, NodeClass- and NodePool-scoped) is scanned while reads the scan makes fail
// for the whole scan (every attempt), then scanned clean again: nothing may be alerted during or
// after, the stored states stay exactly as they were (open, same firstSeen, same notified time,
// hash and message: so one clean scan after all rounds stands for one after each), Security Hub keeps
// its findings, and no scan fails. A read that fails once and then answers (a retry) must give
// the clean scan's result exactly. Its own file and simulation, so it runs beside the others.
//
// The reads are discovered from the first (clean) scan: the Kubernetes paths the kube emulator
// served and the AWS actions the scan worker called (the state table, SQS, SNS, Security Hub and
// the topic key SNS uses left out). Each read fails alone in a scan of its own with HTTP 500 (the
// quick kind: one read's failure must not leave a verdict on the data the others gave; grouping
// reads would hide that, one failing read masking another's). The slow kinds, throttling (with
// Kubernetes' `Retry-After: 1`) and a request never answered, each fail half of the other reads
// at once, on both sides, in one scan each: about 32 faulted scans, then one clean one. The
// worker's environment shortens the clients' timeouts and backoffs, and a faulted scan's deadline,
// so a hanging read costs a few seconds, not minutes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_TIMEOUT_ENV } from '../../lambda/adapters/aws/client-defaults.js';
import {
  KUBE_LIMIT_ENV,
  KUBE_RETRY_ENV,
  KUBE_TIMEOUT_ENV,
} from '../../lambda/adapters/kube/kube-client.js';
import { SCAN_DEADLINE_ENV } from '../../lambda/shared/deadline.js';
import type { KubeFault } from './emulator/kube.js';
import type { Invocation } from './lambda-runner.js';
import { alertMessages, alertsOf, dispatchScanFor, logLinesOf } from './scenario-support.js';
import { Simulation } from './simulation.js';
import { synthesizedAssembly } from './synthesized-assembly.js';

const CLUSTER = 'prod-use1';

/** A Karpenter release with controller-wide defects: an open failure on the Cluster itself. */
const KARPENTER_WITH_CLUSTER_DEFECTS = '1.3.0';

/**
 * The scan worker's environment on top of the template's: short client timeouts (a local answer
 * takes milliseconds, seconds at most on a loaded machine), Kubernetes backoffs and one Kubernetes retry (a `Retry-After` is still
 * honoured as given), and IAM paced at the most the setting allows (the emulator does not
 * throttle; the pace holds back retries too).
 */
const SHORTENED_WORKER_SETTINGS: Readonly<Record<string, string>> = {
  IAM_CALLS_PER_SECOND: '50',
  [AWS_TIMEOUT_ENV.connectionTimeoutMs]: '2000',
  [AWS_TIMEOUT_ENV.requestTimeoutMs]: '2000',
  [KUBE_LIMIT_ENV.requestDeadlineMs]: '5000',
  [KUBE_LIMIT_ENV.listDeadlineMs]: '10000',
  [KUBE_RETRY_ENV.maxAttempts]: '2',
  [KUBE_RETRY_ENV.baseDelayMs]: '100',
  [KUBE_RETRY_ENV.maxDelayMs]: '400',
  // A request left unanswered is a retried timeout, well inside its 5 s deadline; each timeout
  // leaves a loaded 2-core machine a second or two to answer the retry.
  [KUBE_TIMEOUT_ENV.readTimeoutMs]: '1500',
};

/**
 * The reading time of a scan under a slow fault (throttling, hanging): retries and timeouts end
 * there. Other scans read in about a second; their deadline is the Lambda's (its 60 s in the
 * simulation, less the store-and-publish reserve).
 */
const FAULTED_SCAN_DEADLINE_MS = 5_000;

/** Past the deadline a scan still evaluates, stores and publishes: this much, at most. */
const STORE_AND_PUBLISH_MS = 5_000;

/** Reads every clean scan makes (the discovery must find them). */
const EKS_DESCRIBE_CLUSTER = 'eks:DescribeCluster';
const NODECLASS_LIST = '/apis/karpenter.k8s.aws/v1/ec2nodeclasses';

/** Services the scan reads from (the others hold its state or carry its messages). */
const READ_SERVICES: ReadonlySet<string> = new Set(['ec2', 'eks', 'iam', 'kms', 'ssm', 'sts']);

/** IAM's permission simulation is cached in the state table: the cache must be cold to call it. */
const SIMULATION = 'iam:SimulatePrincipalPolicy';

type Kind = 'server-error' | 'throttle' | 'hang';
const KINDS: readonly Kind[] = ['server-error', 'throttle', 'hang'];

interface Read {
  readonly side: 'kubernetes' | 'aws';
  /** The request path (Kubernetes) or the IAM action (AWS). */
  readonly name: string;
  /** Kubernetes, or the AWS service. */
  readonly service: string;
}

/** A fault for the whole scan: every request of the read, each retry included. */
function kubeFault(kind: Kind, times?: number): KubeFault {
  const limit = times === undefined ? {} : { times };
  if (kind === 'hang') return { hang: true, ...limit };
  if (kind === 'throttle') return { status: 429, headers: { 'Retry-After': '1' }, ...limit };
  // A one-shot server error is the 503 an API server sends while it restarts.
  return { status: times === undefined ? 500 : 503, ...limit };
}

/** The status the kube emulator logs for a request a whole-scan fault of `kind` failed. */
const KUBE_LOGGED_STATUS: Readonly<Record<Kind, number>> = {
  'server-error': 500,
  throttle: 429,
  hang: 0,
};

/** One faulted scan: these reads fail with this kind, every request. */
interface Round {
  readonly kind: Kind;
  readonly reads: readonly Read[];
}

/**
 * Each read alone with HTTP 500; then throttling and hanging, each on every other read of the
 * cluster (Kubernetes) and of the account (AWS but EKS), alternately, so each slow kind meets
 * both sides. EKS and the EC2NodeClass list stay out of those: a slow fault there holds back
 * every read after it past the faulted scan's deadline, so the others would not be met.
 */
function roundsOf(reads: readonly Read[]): Round[] {
  const alone = reads.map((read): Round => ({ kind: 'server-error', reads: [read] }));
  const grouped = reads.filter((read) => read.service !== 'eks' && read.name !== NODECLASS_LIST);
  const half = (parity: number) =>
    (['kubernetes', 'aws'] as const).flatMap((side) =>
      grouped.filter((read) => read.side === side).filter((_, index) => index % 2 === parity)
    );
  return [...alone, { kind: 'throttle', reads: half(0) }, { kind: 'hang', reads: half(1) }];
}

/** What the lifecycle keeps of each stored finding that a fault must not change. */
interface StoredState {
  readonly id: string;
  readonly about: string;
  readonly status: unknown;
  readonly findingStatus: unknown;
  readonly firstSeen: unknown;
  readonly lastNotified: unknown;
  readonly materialHash: unknown;
  readonly message: unknown;
}

let sim: Simulation;
/** The template's environment of the scan worker. */
let templateEnvironment: Readonly<Record<string, string>> = {};

beforeAll(async () => {
  sim = await Simulation.start((await synthesizedAssembly()).directory);
  templateEnvironment = sim.fn('ScanCluster').environment;
});

/** The scan worker runs with the short timeouts, and a slow-faulted scan with its deadline. */
function useWorkerEnvironment(shortDeadline: boolean): void {
  sim.functions.set('ScanCluster', {
    ...sim.fn('ScanCluster'),
    environment: {
      ...templateEnvironment,
      ...SHORTENED_WORKER_SETTINGS,
      ...(shortDeadline ? { [SCAN_DEADLINE_ENV]: String(FAULTED_SCAN_DEADLINE_MS) } : {}),
    },
  });
}

afterAll(async () => {
  await sim?.close();
});

/** The simulation's world, with prod-use1 on a Karpenter release with controller-wide defects. */
function useWorldWithClusterFailure(): void {
  const world = structuredClone(sim.world);
  const cluster = world.eks.clusters.find((entry) => entry.name === CLUSTER);
  if (!cluster?.kubernetes) throw new Error(`the world has no ${CLUSTER} cluster`);
  cluster.kubernetes.karpenterVersion = KARPENTER_WITH_CLUSTER_DEFECTS;
  sim.setWorld(world);
}

/** The cluster's stored findings, open ones first, by id. */
async function storedFindings(): Promise<StoredState[]> {
  const items = await sim.tableItems();
  return items
    .filter((item) => String(item.sk).startsWith('FINDING#') && item.cluster === CLUSTER)
    .map((item) => ({
      id: String(item.id),
      about: `${String(item.checkId)} ${String(item.resourceKind)}/${String(item.resourceName)}`,
      status: item.status,
      findingStatus: item.findingStatus,
      firstSeen: item.firstSeen,
      lastNotified: item.lastNotified,
      materialHash: item.materialHash,
      message: item.message,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

const openOnes = (states: readonly StoredState[]) =>
  states.filter((state) => state.status === 'open');

/** Security Hub's view of each finding: what a customer's workflow sees change. */
function securityHubView(): string[] {
  return [...sim.aws.securityHub.values()]
    .map(
      (record) =>
        `${record.finding.Id} ${record.finding.RecordState} ${record.finding.Compliance?.Status} ${record.workflowStatus}`
    )
    .sort();
}

/**
 * What was published since the last scan started: each alert as `change checkId Kind/name` (a
 * failure message that says which), any other message by its subject.
 */
async function published(): Promise<string[]> {
  if (sim.aws.published.length === 0) return [];
  const about = new Map((await storedFindings()).map((state) => [state.id, state.about]));
  const alerts = alertMessages(sim.aws.published);
  return [
    ...alertsOf(alerts).map((alert) => {
      const [change, , id = ''] = alert.split(' ');
      return `${change} ${about.get(id) ?? id}`;
    }),
    ...sim.aws.published
      .filter((message) => !alerts.includes(message))
      .map((message) => `message ${message.subject ?? message.attributes.change}`),
  ];
}

/** Failures the scan logged. */
function scanFailures(invocations: readonly Invocation[]): unknown[] {
  return logLinesOf(invocations).filter(
    (line) => line.message === 'Cluster scan failed' || 'ScanFailures' in line
  );
}

/** The sum of a metric over the scan's EMF documents. */
function metricSum(invocations: readonly Invocation[], name: string): number {
  return invocations
    .flatMap((invocation) => invocation.logLines)
    .reduce((sum, line) => sum + (typeof line[name] === 'number' ? (line[name] as number) : 0), 0);
}

/**
 * The schedule's scan of the cluster with `faults` set after dispatch (dispatch reads EKS too):
 * returns how it went and how long the worker took.
 */
async function scan(faults?: () => void, options: { readonly shortDeadline?: boolean } = {}) {
  sim.aws.published.length = 0;
  const message = await dispatchScanFor(sim, CLUSTER);
  useWorkerEnvironment(options.shortDeadline ?? false);
  faults?.();
  const started = Date.now();
  const { failed, invocations } = await sim.deliverQueued([message]);
  const elapsedMs = Date.now() - started;
  sim.aws.clearFaults();
  sim.kube.faults.clear();
  return { failed, invocations, elapsedMs, sourceErrors: metricSum(invocations, 'SourceErrors') };
}

/** Fails each read with its kind: every request, or its first `times`. */
function setFaults(faults: readonly { read: Read; kind: Kind }[], times?: number): void {
  const kube = new Map<string, KubeFault>();
  for (const { read, kind } of faults) {
    if (read.side === 'kubernetes') kube.set(read.name, kubeFault(kind, times));
    else {
      sim.aws.setFault(read.name, {
        kind,
        fromCall: 1,
        ...(times === undefined ? {} : { count: times }),
      });
    }
  }
  if (kube.size > 0) sim.kube.faults.set(CLUSTER, kube);
}

const coldSimulationCache = () =>
  sim.deleteTableItems((item) => String(item.pk).startsWith('SIMCACHE#'));

describe('transient faults', () => {
  let reads: Read[] = [];
  let baseline: StoredState[] = [];
  let baselineSecurityHub: string[] = [];

  it('baseline: the first scan alerts every open failure once and shows the reads', async () => {
    // Prepare
    await sim.resetState();
    useWorldWithClusterFailure();

    // Act: the first scan
    const firstCall = sim.aws.calls.length;
    const firstRequest = sim.kube.requests.length;
    const first = await scan();

    // Assess: no failure; every open finding alerted as new, once
    expect(first.failed).toEqual([]);
    expect(scanFailures(first.invocations)).toEqual([]);
    const stored = await storedFindings();
    const open = openOnes(stored);
    expect(alertsOf(sim.aws.published)).toEqual(
      open.map((state) => `new ${CLUSTER} ${state.id}`).sort()
    );
    // The open failures span every scope the lifecycle rule must hold for.
    const abouts = open.map((state) => state.about);
    expect(abouts).toContainEqual(`karpenter-version-supported Cluster/${CLUSTER}`);
    expect(abouts).toContainEqual('controller-can-pass-node-role EC2NodeClass/analytics');
    expect(abouts.some((about) => / NodePool\//.test(about))).toBe(true);

    // The reads the scan made
    const worker = sim.fn('ScanCluster').roleLogicalId;
    const topicKeys = new Set(sim.template.topicKeys().values());
    const kubePaths = sim.kube.requests
      .slice(firstRequest)
      .filter((request) => request.cluster === CLUSTER)
      .map((request) => request.path);
    const awsActions = sim.aws.calls
      .slice(firstCall)
      .filter(
        (call) =>
          call.principal === worker &&
          READ_SERVICES.has(call.service) &&
          !topicKeys.has(call.resource)
      )
      .map((call) => call.action);
    reads = [
      ...[...new Set(kubePaths)].map(
        (path): Read => ({ side: 'kubernetes', name: path, service: 'kubernetes' })
      ),
      ...[...new Set(awsActions)].map(
        (action): Read => ({ side: 'aws', name: action, service: action.split(':')[0] ?? '' })
      ),
    ];
    expect(reads.map((read) => read.name)).toEqual(
      expect.arrayContaining([EKS_DESCRIBE_CLUSTER, NODECLASS_LIST, SIMULATION])
    );
    baseline = stored;
    baselineSecurityHub = securityHubView();
  });

  // Before the rounds below: each read failing for a whole scan spends the warm environment's
  // SDK retry quota (standard mode: 500, 14 a retry, 1 back a success), after which the SDK no
  // longer retries at all until successes refill it, by design. A one-shot fault then stays a
  // fault (held, never alerted), but this test is about the retry answering.
  it('a read failing once, then answering, gives the clean scan exactly', async () => {
    expect(reads.length).toBeGreaterThan(0);
    // Every read fails its first request, all at once, the kinds rotating by read.
    const faults = reads.map((read, index) => ({
      read,
      kind: KINDS[index % KINDS.length] ?? 'server-error',
    }));
    // The state the last clean scan left (the baseline's, unless a round above changed it).
    const before = await storedFindings();
    const securityHubBefore = securityHubView();
    const injectedBefore = sim.aws.injected.length;
    const requestsBefore = sim.kube.requests.length;
    const callsBefore = sim.aws.calls.length;

    // Act
    const once = await scan(() => setFaults(faults, 1));

    // Assess: each fault met was retried and answered, and the scan is the clean one's
    const injected = new Set(sim.aws.injected.slice(injectedBefore).map((entry) => entry.action));
    const answered = new Set(sim.aws.calls.slice(callsBefore).map((call) => call.action));
    const kubeLog = sim.kube.requests
      .slice(requestsBefore)
      .filter((request) => request.cluster === CLUSTER);
    const faultStatus = (kind: Kind) => (kind === 'server-error' ? 503 : KUBE_LOGGED_STATUS[kind]);
    const met = faults.filter(({ read, kind }) =>
      read.side === 'aws'
        ? injected.has(read.name)
        : kubeLog.some(
            (request) => request.path === read.name && request.status === faultStatus(kind)
          )
    );
    const notRetried = met.filter(({ read, kind }) =>
      read.side === 'aws'
        ? !answered.has(read.name)
        : !kubeLog.some(
            (request) =>
              request.path === read.name && ![0, 429, faultStatus(kind)].includes(request.status)
          )
    );
    for (const side of ['kubernetes', 'aws'] as const) {
      const kinds = new Set(met.filter(({ read }) => read.side === side).map(({ kind }) => kind));
      expect(kinds, `one-shot kinds met on ${side}`).toEqual(new Set(KINDS));
    }
    expect(
      notRetried.map(({ read, kind }) => `${kind} on ${read.name}`),
      'failed once and not read again'
    ).toEqual([]);
    expect(once.failed).toEqual([]);
    expect(scanFailures(once.invocations)).toEqual([]);
    expect(
      logLinesOf(once.invocations).flatMap((line) => (line.unavailable as string[]) ?? []),
      'reads that failed after their retries'
    ).toEqual([]);
    expect(once.sourceErrors).toBe(0);
    expect({
      published: await published(),
      stored: await storedFindings(),
      securityHub: securityHubView(),
    }).toEqual({ published: [], stored: before, securityHub: securityHubBefore });
  });

  it('a read failing for a whole scan alerts nothing, then or after, and keeps every state', async () => {
    expect(reads.length).toBeGreaterThan(0);
    const rounds = roundsOf(reads);
    // The reads each slow kind failed and the scan made: both sides, for each.
    const metByKind = new Map<Kind, Set<Read>>();
    let before = baseline;
    let securityHubBefore = baselineSecurityHub;
    for (const { kind, reads: faultedReads } of rounds) {
      const label = `${kind} on ${faultedReads.map((read) => read.name).join(', ')}`;
      if (faultedReads.some((read) => read.name === SIMULATION)) await coldSimulationCache();
      const injectedBefore = sim.aws.injected.length;
      const requestsBefore = sim.kube.requests.length;

      // Act: the faulted scan
      // Only the slow kinds need the short deadline; a lone 500 ends by itself, read or not.
      const faulted = await scan(() => setFaults(faultedReads.map((read) => ({ read, kind }))), {
        shortDeadline: kind !== 'server-error',
      });

      // Assess: the faults were met; the scan ended in time, alerted nothing, kept every state
      const metAws = new Set(sim.aws.injected.slice(injectedBefore).map((entry) => entry.action));
      const metKube = new Set(
        sim.kube.requests
          .slice(requestsBefore)
          .filter(
            (request) => request.cluster === CLUSTER && request.status === KUBE_LOGGED_STATUS[kind]
          )
          .map((request) => request.path)
      );
      const met = faultedReads.filter((read) =>
        read.side === 'aws' ? metAws.has(read.name) : metKube.has(read.name)
      );
      metByKind.set(kind, new Set([...(metByKind.get(kind) ?? []), ...met]));
      if (faultedReads.length === 1) {
        expect.soft(met, `${label}: the scan did not make the read`).toEqual(faultedReads);
      }
      expect.soft(faulted.failed, `${label}: scan failed`).toEqual([]);
      expect.soft(scanFailures(faulted.invocations), `${label}: scan failed`).toEqual([]);
      expect
        .soft(faulted.elapsedMs, `${label}: scan time`)
        .toBeLessThan(FAULTED_SCAN_DEADLINE_MS + STORE_AND_PUBLISH_MS);
      expect
        .soft(
          {
            published: await published(),
            open: openOnes(await storedFindings()),
            securityHub: securityHubView(),
          },
          `${label}: while faulted`
        )
        .toEqual({ published: [], open: openOnes(before), securityHub: securityHubBefore });
      // Every stored state exactly as before the fault (same firstSeen, notified, hash, message):
      // so the clean scan after any round is the clean scan after the baseline, run once below.
      const after = await storedFindings();
      expect.soft(after, `${label}: stored states`).toEqual(before);
      // Each round against the state before it: one round's defect does not fail the next.
      before = after;
      securityHubBefore = securityHubView();
    }

    // Act: the next scan, clean
    const recovered = await scan();

    // Assess: still nothing alerted after recovery
    expect(recovered.failed, 'recovery scan failed').toEqual([]);
    expect(await published(), 'after recovery').toEqual([]);
    // Every kind met both sides.
    for (const kind of KINDS) {
      const sides = new Set([...(metByKind.get(kind) ?? [])].map((read) => read.side));
      expect(sides, kind).toEqual(new Set(['kubernetes', 'aws']));
    }
    // And so, after every round, the baseline's states: same firstSeen, still open.
    expect(await storedFindings(), 'after every round: the baseline states').toEqual(baseline);
    expect(securityHubView(), 'after every round: Security Hub').toEqual(baselineSecurityHub);
  });

  it('denied no call the faulted scans made', () => {
    expect(sim.aws.calls.filter((call) => !call.allowed)).toEqual([]);
  });
});
