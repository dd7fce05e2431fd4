// The live fleet scan from the CLI (issue 15): the real `nodeclass-scan scan --cluster …` as a child
// process against local stand-ins on 127.0.0.1 — the deployment simulation's AWS emulator (EC2,
// SSM, IAM, EKS, STS answered from a fleet world, every action allowed) and one TLS Kubernetes API
// per cluster — with AWS's rate limits enforced by the stand-in (bench/aws-model.ts RATE_LIMITS:
// IAM simulations 5/s). Counts what AWS would see: commands (SDK invocation ids), HTTP attempts,
// throttled responses, and commands whose operation and body equal an earlier command's.
//   npm run bench:live-cli            (40 × 25, writes bench/results/live-cli.json)
//   npm run bench:live-cli -- 2 3     (clusters, NodeClasses per cluster; prints only)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { WorldSchema } from '../lambda/adapters/world/schema.js';
import type { ScanReport } from '../lambda/core/report.js';
import { sortedKeysJson } from '../lambda/shared/sorted-keys-json.js';
import { TokenBucket } from '../lambda/shared/token-bucket.js';
import { generatePki } from '../test/adapters/kube/tls-fixtures.js';
import type { Principal } from '../test/deploy/authorize.js';
import { AwsEmulator, type ReceivedRequest } from '../test/deploy/emulator/aws.js';
import { startKubeEmulator } from '../test/deploy/emulator/kube.js';
import { RATE_LIMITS } from './aws-model.js';
import { buildFleetWorld, type FleetSize } from './fleet.js';
import { fleetLowerBound } from './lower-bound.js';
import {
  accountDirectoryPages,
  iamWallFloorSeconds,
  type SimulationFloor,
  simulationFloor,
} from './simulation-floor.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ACCESS_KEY = 'AKIALIVECLIBENCH0001';
const SCANNER_ROLE = 'NodeclassScannerCli';

export interface OperationCount {
  /** Commands the CLI sent (distinct SDK invocation ids). */
  calls: number;
  /** HTTP requests, retries included. */
  attempts: number;
  /** Requests answered with the service's throttling error. */
  throttled: number;
  /** Commands whose operation and request body equal an earlier command's. */
  identical: number;
}

/** When an operation's commands first reached the stand-in, in seconds from the CLI's start. */
export interface OperationSpan {
  readonly first: number;
  readonly last: number;
}

export interface LiveCliRun {
  readonly fleet: FleetSize;
  readonly nodeClasses: number;
  readonly exitCode: number | null;
  readonly stderr: string;
  readonly report: ScanReport | undefined;
  readonly wallSeconds: number;
  readonly operations: Record<string, OperationCount>;
  readonly spans: Record<string, OperationSpan>;
  /** The fleet's SimulatePrincipalPolicy floor, from the world alone. */
  readonly floor: SimulationFloor;
  /**
   * The fewest IAM calls other than simulations: the role, policy and profile reads one by one, or
   * the account read whole (GetAccountAuthorizationDetails pages), whichever is fewer.
   */
  readonly iamReadFloor: number;
  readonly totals: OperationCount;
  readonly callsPerNodeClass: number;
  readonly kubeRequests: number;
  readonly findings: number;
}

/** `GET /clusters/x/pod-identity-associations/a-1` → `eks:DescribePodIdentityAssociation`. */
function restOperation(service: string, method: string, url: string): string {
  const parts = (url.split('?')[0] ?? '').split('/').filter(Boolean);
  if (service !== 'eks' || parts[0] !== 'clusters') return `${method} /${parts[0] ?? ''}`;
  if (parts.length === 1) return 'ListClusters';
  if (parts.length === 2) return 'DescribeCluster';
  const noun = parts[2] === 'access-entries' ? 'AccessEntr' : 'PodIdentityAssociation';
  if (parts.length === 3) return noun === 'AccessEntr' ? 'ListAccessEntries' : `List${noun}s`;
  return noun === 'AccessEntr' ? 'DescribeAccessEntry' : `Describe${noun}`;
}

/** The request with its parameters in a fixed order: equal requests give equal text. */
function canonicalRequest(request: ReceivedRequest): string {
  let body = request.body;
  if (body.startsWith('{')) {
    body = sortedKeysJson(JSON.parse(body));
  } else if (body.includes('=')) {
    body = [...new URLSearchParams(body)]
      .map(([key, value]) => `${key}=${value}`)
      .sort()
      .join('&');
  }
  return `${request.service} ${request.method} ${request.url} ${body}`;
}

/** Rate limits as AWS applies them: EC2 per action, IAM simulations apart from other IAM reads. */
function rateLimiter(limits: typeof RATE_LIMITS) {
  const buckets = new Map<string, TokenBucket>();
  return (service: string, operation: string): boolean => {
    const key =
      service === 'ec2'
        ? `ec2:${operation}`
        : service === 'iam' && operation === 'SimulatePrincipalPolicy'
          ? 'iam:simulate'
          : service;
    const spec =
      key === 'iam:simulate'
        ? limits.iamSimulate
        : service === 'ec2'
          ? limits.ec2
          : service === 'iam'
            ? limits.iam
            : service === 'ssm'
              ? limits.ssm
              : undefined;
    if (spec === undefined) return true;
    let bucket = buckets.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket({
        ratePerSecond: spec.refillPerSecond,
        burst: spec.capacity,
        now: () => performance.now(),
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      });
      buckets.set(key, bucket);
    }
    return bucket.tryTake();
  };
}

const ALLOW_ALL = {
  authorize: () => ({ allowed: true, reason: 'the CLI benchmark allows every action' }),
};

function runChild(
  args: readonly string[],
  env: NodeJS.ProcessEnv
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/nodeclass-scan.js'), ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
      })
    );
  });
}

/** The environment of a CLI child: fake static keys, the stand-in as endpoint, nothing inherited. */
function childEnv(directory: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: directory,
    AWS_CONFIG_FILE: join(directory, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(directory, 'no-credentials'),
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ACCESS_KEY_ID: ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: 'live-cli-benchmark-secret',
    NO_COLOR: '1',
    ...extra,
  };
}

/** Runs the CLI against the stand-ins for a generated fleet. */
export async function runLiveCli(
  fleet: FleetSize,
  options: {
    readonly seed?: number;
    readonly limits?: typeof RATE_LIMITS;
    /** Edits the generated world before both the stand-ins and the world file see it. */
    readonly editWorld?: (world: Record<string, unknown>) => Record<string, unknown>;
    /** Sees every command once (its first attempt), in the order the stand-in received them. */
    readonly onCommand?: (request: ReceivedRequest) => void;
  } = {}
): Promise<LiveCliRun & { readonly worldFile: string; readonly cleanup: () => void }> {
  const generated = buildFleetWorld(fleet, options.seed);
  const worldJson = options.editWorld === undefined ? generated : options.editWorld(generated);
  const world = WorldSchema.parse(worldJson);
  const account = { id: world.account, region: world.region, partition: world.partition ?? 'aws' };
  const directory = mkdtempSync(join(tmpdir(), 'live-cli-bench-'));
  const worldFile = join(directory, 'world.json');
  writeFileSync(worldFile, JSON.stringify(worldJson));
  const pki = generatePki();
  const caFile = join(directory, 'ca.pem');
  writeFileSync(caFile, pki.caPem);
  const principal: Principal = {
    kind: 'role',
    roleLogicalId: SCANNER_ROLE,
    arn: `arn:${account.partition}:iam::${account.id}:role/${SCANNER_ROLE}`,
  };
  const kube = await startKubeEmulator({
    pki,
    region: world.region,
    clusters: world.eks.clusters,
    accessEntries: () => [principal.arn],
    principalsByAccessKey: new Map([[ACCESS_KEY, principal.arn]]),
  });
  const operations = new Map<string, OperationCount>();
  const seenInvocations = new Set<string>();
  const seenRequests = new Map<string, string>();
  const spans = new Map<string, { first: number; last: number }>();
  let started = performance.now();
  const admitByRate = rateLimiter(options.limits ?? RATE_LIMITS);
  const admit = (request: ReceivedRequest): boolean => {
    const operation = `${request.service}:${
      request.operation.includes(' ')
        ? restOperation(request.service, request.method, request.url)
        : request.operation
    }`;
    let count = operations.get(operation);
    if (count === undefined) {
      count = { calls: 0, attempts: 0, throttled: 0, identical: 0 };
      operations.set(operation, count);
    }
    count.attempts++;
    if (!seenInvocations.has(request.invocationId)) {
      seenInvocations.add(request.invocationId);
      count.calls++;
      options.onCommand?.(request);
      const at = (performance.now() - started) / 1000;
      const span = spans.get(operation);
      if (span === undefined) spans.set(operation, { first: at, last: at });
      else span.last = at;
      const key = canonicalRequest(request);
      const first = seenRequests.get(key);
      if (first === undefined) seenRequests.set(key, request.invocationId);
      else count.identical++;
    }
    const admitted = admitByRate(request.service, request.operation);
    if (!admitted) count.throttled++;
    return admitted;
  };
  const aws = new AwsEmulator({
    account,
    world,
    now: new Date(),
    authorizer: ALLOW_ALL,
    principalsByAccessKey: new Map([[ACCESS_KEY, principal]]),
    topics: new Set(),
    topicKeys: new Map(),
    kubeEndpoints: kube.endpoints,
    kubeCaPem: pki.caPem,
    dynamoEndpoint: 'http://127.0.0.1:9',
    tls: { key: pki.serverKeyPem, cert: pki.serverCertPem },
    admit,
  });
  const endpoint = await aws.start();
  const clusters = world.eks.clusters.map((cluster) => cluster.name);
  const nodeClasses = world.eks.clusters.reduce(
    (sum, cluster) => sum + (cluster.kubernetes?.ec2NodeClasses.length ?? 0),
    0
  );
  try {
    started = performance.now();
    const result = await runChild(
      [
        'scan',
        ...clusters.flatMap((name) => ['--cluster', name]),
        '--region',
        account.region,
        '--format',
        'json',
      ],
      childEnv(directory, {
        AWS_ENDPOINT_URL: endpoint,
        AWS_REGION: account.region,
        NODE_EXTRA_CA_CERTS: caFile,
      })
    );
    const wallSeconds = (performance.now() - started) / 1000;
    let report: ScanReport | undefined;
    try {
      report = JSON.parse(result.stdout) as ScanReport;
    } catch {
      report = undefined;
    }
    const sorted = Object.fromEntries(
      [...operations.entries()].sort(([a], [b]) => a.localeCompare(b))
    );
    const totals = [...operations.values()].reduce(
      (sum, count) => ({
        calls: sum.calls + count.calls,
        attempts: sum.attempts + count.attempts,
        throttled: sum.throttled + count.throttled,
        identical: sum.identical + count.identical,
      }),
      { calls: 0, attempts: 0, throttled: 0, identical: 0 }
    );
    return {
      fleet,
      nodeClasses,
      exitCode: result.code,
      stderr: result.stderr,
      report,
      wallSeconds,
      operations: sorted,
      spans: Object.fromEntries(spans),
      floor: simulationFloor(worldJson),
      iamReadFloor: Math.min(
        accountDirectoryPages(worldJson),
        Object.entries(fleetLowerBound(worldJson).byOperation)
          .filter(
            ([operation]) =>
              operation.startsWith('iam:') && !operation.endsWith(':SimulatePrincipalPolicy')
          )
          .reduce((sum, [, calls]) => sum + calls, 0)
      ),
      totals,
      callsPerNodeClass: nodeClasses === 0 ? 0 : totals.calls / nodeClasses,
      kubeRequests: kube.requests.length,
      findings: report?.findings.length ?? 0,
      worldFile,
      cleanup: () => rmSync(directory, { recursive: true, force: true }),
    };
  } finally {
    await aws.close();
    await kube.close();
  }
}

/** `scan --world` on a world file: the same checks answered offline, for comparison. */
export async function runWorldCli(
  worldFile: string
): Promise<{ code: number | null; report: ScanReport | undefined; stderr: string }> {
  const directory = dirname(worldFile);
  const result = await runChild(
    ['scan', '--world', worldFile, '--format', 'json'],
    childEnv(directory, {})
  );
  let report: ScanReport | undefined;
  try {
    report = JSON.parse(result.stdout) as ScanReport;
  } catch {
    report = undefined;
  }
  return { code: result.code, report, stderr: result.stderr };
}

type Finding = ScanReport['findings'][number];

/**
 * Findings as compared with `scan --world`: the stand-in serves each cluster on its own loopback
 * endpoint, which `scanner-can-read-cluster` reports instead of the world's EKS hostname.
 */
export function comparableFindings(report: ScanReport | undefined): Finding[] {
  return (report?.findings ?? []).map((finding) => {
    if (finding.checkId !== 'scanner-can-read-cluster') return finding;
    const { endpoint, endpointAccess: _access, ...evidence } = finding.evidence;
    return {
      ...finding,
      message: finding.message.replace(String(endpoint), '<endpoint>'),
      evidence,
    };
  });
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** The KMS facts' calls (EBS encryption defaults, key reads), counted apart from the rest. */
const isKmsFactCall = (operation: string) =>
  operation.startsWith('kms:') ||
  operation === 'ec2:GetEbsEncryptionByDefault' ||
  operation === 'ec2:GetEbsDefaultKmsKeyId';

/**
 * A run against its floors: simulations against the fleet's simulation floor, and the scan's wall
 * time against the time IAM's simulation bucket (as the stand-in enforces it) needs for that floor.
 */
/**
 * One budget for every IAM call, reads and simulations alike, the size of IAM's own bucket: the
 * floor. The scanner's bucket (lambda/adapters/aws/rate-limit.ts) has the same rate and keeps 2
 * tokens of that burst as a margin against network jitter (0.4 s over the floor).
 */
const SCANNER_IAM_BUDGET = { capacity: 10, refillPerSecond: 5 };

export function againstFloor(
  run: Pick<
    LiveCliRun,
    'operations' | 'spans' | 'floor' | 'iamReadFloor' | 'totals' | 'nodeClasses' | 'wallSeconds'
  >,
  limits: typeof RATE_LIMITS = RATE_LIMITS
) {
  const simulations = run.operations['iam:SimulatePrincipalPolicy']?.calls ?? 0;
  const kmsCalls = Object.entries(run.operations)
    .filter(([operation]) => isKmsFactCall(operation))
    .reduce((sum, [, count]) => sum + count.calls, 0);
  const iamReads = Object.entries(run.operations)
    .filter(
      ([operation]) =>
        operation.startsWith('iam:') && !operation.endsWith(':SimulatePrincipalPolicy')
    )
    .reduce((sum, [, count]) => sum + count.calls, 0);
  const iamFloorSeconds = iamWallFloorSeconds(run.floor.calls, limits.iamSimulate);
  // Under the scanner's single IAM budget, the reads wait in the simulations' queue.
  const budgetFloorSeconds = iamWallFloorSeconds(
    run.floor.calls + run.iamReadFloor,
    SCANNER_IAM_BUDGET
  );
  const perNodeClass = (calls: number) => (run.nodeClasses === 0 ? 0 : calls / run.nodeClasses);
  const span = run.spans['iam:SimulatePrincipalPolicy'];
  return {
    simulations,
    simulationFloor: run.floor.calls,
    simulationFloorByPairs: run.floor.byPairs,
    simulationContexts: run.floor.contexts,
    simulationsOverFloor: run.floor.calls === 0 ? 0 : simulations / run.floor.calls,
    iamWallFloorSeconds: iamFloorSeconds,
    scanOverIamWallFloor: iamFloorSeconds === 0 ? 0 : run.wallSeconds / iamFloorSeconds,
    iamReadFloor: run.iamReadFloor,
    iamBudgetFloorSeconds: budgetFloorSeconds,
    scanOverIamBudgetFloor: budgetFloorSeconds === 0 ? 0 : run.wallSeconds / budgetFloorSeconds,
    callsPerNodeClass: perNodeClass(run.totals.calls),
    kmsFactCalls: kmsCalls,
    callsPerNodeClassWithoutKms: perNodeClass(run.totals.calls - kmsCalls),
    iamReads,
    /** When the simulations reached IAM (seconds from the CLI's start) and at what rate. */
    simulationPhase:
      span === undefined
        ? undefined
        : {
            first: span.first,
            last: span.last,
            perSecond: span.last > span.first ? (simulations - 1) / (span.last - span.first) : 0,
          },
  };
}

async function main(): Promise<void> {
  const [clusters, perCluster] = process.argv.slice(2).map(Number);
  const fleet: FleetSize = { clusters: clusters || 40, nodeClassesPerCluster: perCluster || 25 };
  const run = await runLiveCli(fleet);
  const offline = await runWorldCli(run.worldFile);
  run.cleanup();
  const live = comparableFindings(run.report);
  const floor = againstFloor(run);
  const summary = {
    fleet: `${fleet.clusters}x${fleet.nodeClassesPerCluster}`,
    nodeClasses: run.nodeClasses,
    rateLimits: RATE_LIMITS,
    exitCode: run.exitCode,
    wallSeconds: round(run.wallSeconds, 1),
    awsCalls: run.totals.calls,
    awsAttempts: run.totals.attempts,
    throttled: run.totals.throttled,
    identicalRequests: run.totals.identical,
    callsPerNodeClass: round(run.callsPerNodeClass, 3),
    kmsFactCalls: floor.kmsFactCalls,
    callsPerNodeClassWithoutKms: round(floor.callsPerNodeClassWithoutKms, 3),
    simulations: floor.simulations,
    simulationFloor: floor.simulationFloor,
    simulationFloorByPairs: floor.simulationFloorByPairs,
    simulationContexts: floor.simulationContexts,
    simulationsOverFloor: round(floor.simulationsOverFloor, 3),
    iamWallFloorSeconds: round(floor.iamWallFloorSeconds, 1),
    scanOverIamWallFloor: round(floor.scanOverIamWallFloor, 2),
    iamReads: floor.iamReads,
    iamReadFloor: floor.iamReadFloor,
    iamBudgetFloorSeconds: round(floor.iamBudgetFloorSeconds, 1),
    scanOverIamBudgetFloor: round(floor.scanOverIamBudgetFloor, 2),
    simulationPhase: floor.simulationPhase && {
      firstSecond: round(floor.simulationPhase.first, 1),
      lastSecond: round(floor.simulationPhase.last, 1),
      perSecond: round(floor.simulationPhase.perSecond, 2),
    },
    phases: Object.fromEntries(
      Object.entries(run.spans).map(([operation, span]) => [
        operation,
        [round(span.first, 1), round(span.last, 1)],
      ])
    ),
    kubeRequests: run.kubeRequests,
    findings: run.findings,
    /** Findings whose check could not run (an AWS call that failed after the SDK's retries). */
    errorFindings: live.filter((finding) => finding.status === 'error').length,
    sameFindingsAsWorldScan: isDeepStrictEqual(live, comparableFindings(offline.report)),
    operations: run.operations,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (run.report === undefined) {
    process.stderr.write(`the CLI printed no JSON report:\n${run.stderr}\n`);
    process.exitCode = 1;
    return;
  }
  if (clusters === undefined || (clusters === 40 && perCluster === 25)) {
    writeFileSync(
      join(ROOT, 'bench/results/live-cli.json'),
      `${JSON.stringify({ ...summary, node: process.version }, null, 2)}\n`
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
