// Monthly cost per account of a fleet scanned on a schedule, at public us-east-1 prices, from
// measured figures: per-scan DynamoDB requests, KMS requests, SNS publishes, log bytes and metric
// series from the deployment simulation's steady-state scheduled scans (bench/cold-start.ts, in
// bench/results/cold-start.json), and the scan worker's duration from the rate-limited
// steady-state scans of bench/results/scans.json. `npx tsx bench/cost-model.ts` writes
// bench/results/cost-model.json and README's cost table (between its cost markers).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ColdStartResult, ScanFootprint } from './cold-start.js';

/**
 * us-east-1 list prices, as the pages showed them in 2025 (not re-read at run time: the bench has
 * no network). Free tiers are left out: the model prices the scanner alone, on its own bill line.
 */
export const PRICES = {
  source: {
    lambda: 'https://aws.amazon.com/lambda/pricing/ (2025, arm64)',
    dynamodb: 'https://aws.amazon.com/dynamodb/pricing/on-demand/ (2025, after the Nov 2024 cut)',
    sns: 'https://aws.amazon.com/sns/pricing/ (2025)',
    sqs: 'https://aws.amazon.com/sqs/pricing/ (2025)',
    cloudwatch: 'https://aws.amazon.com/cloudwatch/pricing/ (2025)',
    kms: 'https://aws.amazon.com/kms/pricing/ (2025)',
  },
  lambdaArmPerGbSecond: 0.0000133334,
  lambdaPerRequest: 0.2 / 1e6,
  dynamodbPerWriteUnit: 0.625 / 1e6,
  dynamodbPerReadUnit: 0.125 / 1e6,
  dynamodbPerGbMonth: 0.25,
  snsPerPublish: 0.5 / 1e6,
  snsPerEmail: 2 / 1e5,
  sqsPerRequest: 0.4 / 1e6,
  /** First 10,000 metrics; a series is billed for the hours it receives data. */
  customMetricPerMonth: 0.3,
  putMetricDataPer1000: 0.01,
  alarmPerMetricMonth: 0.1,
  dashboardPerMonth: 3,
  logsIngestedPerGb: 0.5,
  logsStoredPerGbMonth: 0.03,
  kmsKeyPerMonth: 1,
  kmsPer10kRequests: 0.03,
} as const;

export interface Fleet {
  readonly clusters: number;
  readonly nodeClassesPerCluster: number;
  readonly scheduleMinutes: number;
  readonly metricsDetail: 'account' | 'cluster';
}

/** Metrics the adapter writes per cluster with `metricsDetail` `cluster` (lambda/adapters/metrics.ts). */
const PER_CLUSTER_METRICS = new Set([
  'OpenFindings',
  'ScanDuration',
  'NodeClassesScanned',
  'AwsApiCalls',
  'SourceErrors',
  'ScanFailures',
]);

const HOURS_PER_MONTH = 730;
const SCAN_WORKER_MEMORY_GB = 1;
const DISPATCH_MEMORY_GB = 0.25;
const LOG_RETENTION_DAYS = 30;
/** The stack's alarms, each on the metrics it reads (infra/constructs/monitoring.ts). */
const FIXED_ALARM_METRICS = 4 /* Lambda errors */ + 1 /* no successful scan */ + 2; /* DLQs */

export interface Inputs {
  readonly footprints: readonly ScanFootprint[];
  /** Steady-state scan wall time (ms) by NodeClasses per cluster, measured (scans.json). */
  readonly scanMsByNodeClasses: readonly { readonly nodeClasses: number; readonly ms: number }[];
  readonly dispatchMs: number;
}

/** value(n) on the line through the two measured points nearest n (linear, clamped at 0). */
function linear(points: readonly { x: number; y: number }[], x: number): number {
  const sorted = [...points].sort((a, b) => a.x - b.x);
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  if (first === undefined || last === undefined) throw new Error('no measured points');
  if (first.x === last.x) return first.y;
  const slope = (last.y - first.y) / (last.x - first.x);
  return Math.max(0, first.y + slope * (x - first.x));
}

export interface CostLine {
  readonly item: string;
  readonly quantity: string;
  readonly usd: number;
}

export function monthlyCost(fleet: Fleet, inputs: Inputs) {
  const scansPerCluster = (HOURS_PER_MONTH * 60) / fleet.scheduleMinutes;
  const scans = scansPerCluster * fleet.clusters;
  const perScan = (pick: (f: ScanFootprint) => number) =>
    linear(
      inputs.footprints.map((f) => ({ x: f.nodeClasses, y: pick(f) })),
      fleet.nodeClassesPerCluster
    );
  const scanSeconds =
    linear(
      inputs.scanMsByNodeClasses.map((p) => ({ x: p.nodeClasses, y: p.ms })),
      fleet.nodeClassesPerCluster
    ) / 1000;
  const writes = perScan((f) => f.dynamodbWrites);
  const reads = perScan((f) => f.dynamodbReads);
  const publishes = perScan((f) => f.snsPublishes);
  const kmsRequests = perScan((f) => f.kmsRequests);
  const logBytes = perScan((f) => f.logBytes) * scans;
  const seriesKeys = new Set(inputs.footprints.flatMap((f) => f.emfSeries));
  const accountSeries = [
    ...new Set([...seriesKeys].map((key) => key.replace(/Cluster=[^,}]*,?/, ''))),
  ];
  // Per cluster, each per-cluster metric once a cluster; AwsApiCalls keeps its account-wide
  // remainder (calls no cluster made) besides.
  const series = accountSeries.reduce((sum, key) => {
    const metric = key.split('{')[0] ?? '';
    if (fleet.metricsDetail !== 'cluster' || !PER_CLUSTER_METRICS.has(metric)) return sum + 1;
    return sum + fleet.clusters + (metric === 'AwsApiCalls' ? 1 : 0);
  }, 0);
  // Metrics Insights alarms are billed per metric they analyse: critical findings, source errors
  // and failures, over a series per cluster or one.
  const insightsAlarmMetrics = fleet.metricsDetail === 'cluster' ? 3 * fleet.clusters : 3;
  const lines: CostLine[] = [
    {
      item: 'Lambda requests',
      quantity: `${Math.round(scans + scansPerCluster)} invocations`,
      usd: (scans + scansPerCluster) * PRICES.lambdaPerRequest,
    },
    {
      item: 'Lambda compute (arm64)',
      quantity: `${scans.toFixed(0)} scans × ${scanSeconds.toFixed(2)} s × 1 GB + dispatch`,
      usd:
        (scans * scanSeconds * SCAN_WORKER_MEMORY_GB +
          scansPerCluster * (inputs.dispatchMs / 1000) * DISPATCH_MEMORY_GB) *
        PRICES.lambdaArmPerGbSecond,
    },
    {
      item: 'SQS requests',
      quantity: `${Math.round(scans * 3)} requests: send, receive, delete`,
      usd: scans * 3 * PRICES.sqsPerRequest,
    },
    {
      item: 'DynamoDB writes (on-demand)',
      quantity: `${writes.toFixed(1)} a scan, 1 WRU each`,
      usd: writes * scans * PRICES.dynamodbPerWriteUnit,
    },
    {
      item: 'DynamoDB reads (on-demand)',
      quantity: `${reads.toFixed(1)} a scan, 1 RRU each`,
      usd: reads * scans * PRICES.dynamodbPerReadUnit,
    },
    {
      item: 'DynamoDB storage',
      quantity: `≈ ${fleet.clusters * fleet.nodeClassesPerCluster * 2} items × 1 KB`,
      usd:
        ((fleet.clusters * fleet.nodeClassesPerCluster * 2 * 1024) / 1e9) *
        PRICES.dynamodbPerGbMonth,
    },
    {
      item: 'SNS publishes and emails',
      quantity: `${publishes.toFixed(2)} a scan`,
      usd: publishes * scans * (PRICES.snsPerPublish + PRICES.snsPerEmail),
    },
    {
      item: 'CloudWatch custom metrics',
      quantity: `${series} series (metricsDetail ${fleet.metricsDetail})`,
      usd: series * PRICES.customMetricPerMonth,
    },
    { item: 'PutMetricData requests', quantity: '0 (EMF log lines)', usd: 0 },
    {
      item: 'CloudWatch alarms',
      quantity: `${FIXED_ALARM_METRICS + insightsAlarmMetrics} alarm metrics`,
      usd: (FIXED_ALARM_METRICS + insightsAlarmMetrics) * PRICES.alarmPerMetricMonth,
    },
    { item: 'CloudWatch dashboard', quantity: '1', usd: PRICES.dashboardPerMonth },
    {
      item: 'CloudWatch Logs',
      quantity: `${(logBytes / 1e9).toFixed(3)} GB ingested, ${LOG_RETENTION_DAYS} days kept`,
      usd:
        (logBytes / 1e9) *
        (PRICES.logsIngestedPerGb + PRICES.logsStoredPerGbMonth * (LOG_RETENTION_DAYS / 30)),
    },
    {
      item: 'KMS',
      quantity: `1 key, ${kmsRequests.toFixed(1)} scanner requests a scan`,
      usd: PRICES.kmsKeyPerMonth + ((kmsRequests * scans) / 1e4) * PRICES.kmsPer10kRequests,
    },
  ];
  const total = lines.reduce((sum, line) => sum + line.usd, 0);
  return { fleet, scansPerMonth: scans, lines, totalUsd: total };
}

/** The cost model's inputs from the stored bench results. */
function storedInputs(root: string): Inputs {
  const read = (name: string) =>
    JSON.parse(readFileSync(join(root, 'bench/results', name), 'utf8')) as unknown;
  const coldStart = read('cold-start.json') as ColdStartResult;
  const scans = read('scans.json') as {
    size: string;
    rateLimited: { steadyState?: { wallTimeMs: number } };
  }[];
  const singleCluster = scans.flatMap((scan) => {
    const [clusters, nodeClasses] = scan.size.split('x').map(Number);
    const ms = scan.rateLimited.steadyState?.wallTimeMs;
    return clusters === 1 && nodeClasses !== undefined && ms !== undefined
      ? [{ nodeClasses, ms }]
      : [];
  });
  const dispatch = coldStart.handlers.find((handler) => handler.name === 'dispatch');
  if (!coldStart.scheduledScans?.length || dispatch === undefined) {
    throw new Error(
      'bench/results/cold-start.json has no scheduled scans: run bench/cold-start.ts'
    );
  }
  return {
    footprints: coldStart.scheduledScans,
    scanMsByNodeClasses: singleCluster,
    dispatchMs: dispatch.warmInvocationMs,
  };
}

const COST_START = '<!-- cost:start -->';
const COST_END = '<!-- cost:end -->';

function renderCostTable(models: readonly ReturnType<typeof monthlyCost>[]): string {
  const usd = (value: number) => `$${value < 0.01 && value > 0 ? '<0.01' : value.toFixed(2)}`;
  const [first] = models;
  if (first === undefined) return '';
  const header = models.map((m) => `\`metricsDetail\` ${m.fleet.metricsDetail}`);
  return [
    `Per account and month, ${first.fleet.clusters} clusters × ${first.fleet.nodeClassesPerCluster} NodeClasses scanned every ${first.fleet.scheduleMinutes} minutes (${Math.round(first.scansPerMonth)} scans), us-east-1 list prices without free tiers (\`bench/cost-model.ts\` cites each pricing page; \`bench/results/cost-model.json\`). Per-scan figures are measured: DynamoDB, KMS, SNS, log bytes and metric series from the deployment simulation's steady-state scheduled scans (a scan of an unchanged cluster; fitted linearly on its clusters' NodeClass counts), scan time from the rate-limited steady-state benchmark scans. Assumed: 1 KB items (1 write or read unit a request), 1 GB scan worker, 30-day log retention, no finding changes (no emails).`,
    '',
    `| Line | ${header.join(' | ')} |`,
    `| --- | ${models.map(() => '---:').join(' | ')} |`,
    ...first.lines.map(
      (line, index) =>
        `| ${line.item} | ${models.map((m) => `${usd(m.lines[index]?.usd ?? 0)} (${m.lines[index]?.quantity})`).join(' | ')} |`
    ),
    `| **Total** | ${models.map((m) => `**${usd(m.totalUsd)}**`).join(' | ')} |`,
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = process.cwd();
  const inputs = storedInputs(root);
  const fleet = { clusters: 10, nodeClassesPerCluster: 30, scheduleMinutes: 15 } as const;
  const models = (['account', 'cluster'] as const).map((metricsDetail) =>
    monthlyCost({ ...fleet, metricsDetail }, inputs)
  );
  writeFileSync(
    join(root, 'bench/results/cost-model.json'),
    `${JSON.stringify({ prices: PRICES, inputs, models }, null, 2)}\n`
  );
  const readmePath = join(root, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const start = readme.indexOf(COST_START);
  const end = readme.indexOf(COST_END);
  if (start >= 0 && end > start) {
    writeFileSync(
      readmePath,
      `${readme.slice(0, start)}${COST_START}\n${renderCostTable(models)}\n${readme.slice(end)}`
    );
  }
  process.stdout.write(`${renderCostTable(models)}\n`);
}
