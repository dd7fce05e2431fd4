// The dashboard read against what the real scan-cluster handler writes to stdout: the Logs
// Insights table evaluated over its log lines, and the SEARCH schemas matched against the
// dimension sets of its EMF documents.
import type { SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAILING_RESOURCES_QUERY } from '../../infra/constructs/monitoring.js';
import { createHandler as createScanClusterHandler } from '../../lambda/handlers/scan-cluster.js';
import { captureJsonLines, lambdaContext } from '../handlers/lambda-context.js';
import { aNodeClassObject } from '../support/builders.js';
import { fakeDynamoDb } from '../support/fake-dynamodb.js';
import {
  capturingSns,
  exampleEvent,
  objectsPlan,
  SERVICE_ENV,
} from '../support/handler-fixtures.js';

// The test setup silences both; the shared Logger reads its level once, at import.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
});

type Row = Record<string, unknown>;

/**
 * Evaluates the subset of Logs Insights QL the dashboard's table uses (filter on equality, one
 * stats with latest()/max() and by, sort, limit); any other command fails the test, so the query
 * cannot drift from what is evaluated here. `@timestamp` is the line's position in the stream.
 */
function runLogsInsights(queryLines: readonly string[], events: readonly Row[]): Row[] {
  let rows: Row[] = events.map((event, index) => ({ ...event, '@timestamp': index }));
  for (const command of queryLines) {
    const filter = /^filter (\w+) = "([^"]*)"$/.exec(command);
    const stats = /^stats (.+) by (.+)$/.exec(command);
    const sort = /^sort (\w+) (asc|desc)$/.exec(command);
    const limit = /^limit (\d+)$/.exec(command);
    if (filter) {
      const [, field, value] = filter;
      rows = rows.filter((row) => row[field as string] === value);
    } else if (stats) {
      const aggregates = (stats[1] as string).split(', ').map((aggregate) => {
        const parsed = /^(latest|max)\(([@\w]+)\) as (\w+)$/.exec(aggregate);
        if (!parsed) throw new Error(`unsupported aggregate ${aggregate}`);
        return { fn: parsed[1], field: parsed[2] as string, as: parsed[3] as string };
      });
      const keys = (stats[2] as string).split(', ');
      const groups = new Map<string, Row>();
      for (const row of rows) {
        const key = JSON.stringify(keys.map((k) => row[k]));
        const group = groups.get(key) ?? Object.fromEntries(keys.map((k) => [k, row[k]]));
        for (const { fn, field, as } of aggregates) {
          if (!(field in row)) continue;
          const value = row[field];
          if (fn === 'latest' || (value as number) > ((group[as] as number) ?? -Infinity)) {
            group[as] = value;
          }
        }
        groups.set(key, group);
      }
      rows = [...groups.values()];
    } else if (sort) {
      const [, field, order] = sort;
      const sign = order === 'asc' ? 1 : -1;
      rows = [...rows].sort(
        (a, b) => sign * ((a[field as string] as number) - (b[field as string] as number))
      );
    } else if (limit) {
      rows = rows.slice(0, Number(limit[1]));
    } else {
      throw new Error(`unsupported Logs Insights command: ${command}`);
    }
  }
  return rows;
}

const ARN_PROFILE = 'arn:aws:iam::111122223333:instance-profile/KarpenterNodeProfile';
const CHECK = 'instance-profile-is-name';
const broken = (name: string) =>
  aNodeClassObject({ name, spec: { role: undefined, instanceProfile: ARN_PROFILE } });
const fixed = (name: string) =>
  aNodeClassObject({ name, spec: { role: undefined, instanceProfile: 'KarpenterNodeProfile' } });

const batch = exampleEvent<SQSEvent>('sqs-scan-cluster-batch.json');
let lines: Row[];

beforeEach(() => {
  fakeDynamoDb();
  capturingSns();
  lines = captureJsonLines();
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function scanBoth(
  world: Map<string, Record<string, unknown>[]>,
  at: string,
  metricsDetail?: 'account' | 'cluster'
) {
  const handler = createScanClusterHandler({
    env:
      metricsDetail === undefined ? SERVICE_ENV : { ...SERVICE_ENV, METRICS_DETAIL: metricsDetail },
    planFor: objectsPlan(world),
    clock: () => new Date(at),
  });
  await handler(batch, lambdaContext());
}

const failing = () =>
  runLogsInsights(FAILING_RESOURCES_QUERY, lines)
    .filter((row) => row.checkId === CHECK)
    .map((row) => [row.cluster, row.kind, row.name, row.sev, row.status]);

describe('the failing-resources table over the handler’s log lines', () => {
  it('lists each open finding once, by cluster, and drops it after the scan that fixes it', async () => {
    // Prepare
    const world = new Map([
      ['prod', [broken('default'), broken('gpu')]],
      ['staging', [broken('default')]],
    ]);
    // Act: two scans of both clusters, then gpu is fixed and both are scanned again
    await scanBoth(world, '2026-11-01T10:15:05Z');
    await scanBoth(world, '2026-11-01T10:30:05Z');
    const beforeFix = failing();
    world.set('prod', [broken('default'), fixed('gpu')]);
    await scanBoth(world, '2026-11-01T10:45:05Z');
    // Assess
    const severity = beforeFix[0]?.[3];
    expect(['critical', 'high', 'medium', 'low', 'info']).toContain(severity);
    expect(beforeFix.sort()).toEqual([
      ['prod', 'EC2NodeClass', 'default', severity, 'fail'],
      ['prod', 'EC2NodeClass', 'gpu', severity, 'fail'],
      ['staging', 'EC2NodeClass', 'default', severity, 'fail'],
    ]);
    expect(failing().sort()).toEqual([
      ['prod', 'EC2NodeClass', 'default', severity, 'fail'],
      ['staging', 'EC2NodeClass', 'default', severity, 'fail'],
    ]);
  });

  it('keeps same-named clusters of two regions apart: rows and dimensions name the region', async () => {
    // Prepare: a prod in the home region and another in us-west-2, each with a broken NodeClass
    const [record] = batch.Records;
    if (!record) throw new Error('the example batch has no record');
    const west = {
      ...record,
      messageId: 'west-1',
      body: JSON.stringify({ ...JSON.parse(record.body), region: 'us-west-2' }),
    };
    const handler = createScanClusterHandler({
      env: { ...SERVICE_ENV, METRICS_DETAIL: 'cluster' },
      planFor: objectsPlan(new Map([['prod', [broken('default')]]])),
      clock: () => new Date('2026-11-01T10:15:05Z'),
    });
    // Act
    await handler({ Records: [record, west] }, lambdaContext());
    // Assess
    const severity = failing()[0]?.[3];
    expect(failing().sort()).toEqual([
      ['prod', 'EC2NodeClass', 'default', severity, 'fail'],
      ['prod@us-west-2', 'EC2NodeClass', 'default', severity, 'fail'],
    ]);
    const open = lines.filter((line) => 'OpenFindings' in line && line.Severity === severity);
    expect(open.map((line) => [line.Cluster, line.OpenFindings])).toEqual([
      ['prod', 1],
      ['prod@us-west-2', 1],
    ]);
  });

  it('sorts the most severe first', async () => {
    // Prepare: failures of several severities (instance profile ARN, IMDSv1, hop limit 2)
    const weak = aNodeClassObject({
      name: 'weak',
      spec: {
        role: undefined,
        instanceProfile: ARN_PROFILE,
        metadataOptions: {
          httpEndpoint: 'enabled',
          httpPutResponseHopLimit: 2,
          httpTokens: 'optional',
        },
      },
    });
    // Act
    await scanBoth(new Map([['prod', [weak]]]), '2026-11-01T10:15:05Z');
    // Assess
    const ranks = runLogsInsights(FAILING_RESOURCES_QUERY, lines).map((row) => row.rank as number);
    expect(new Set(ranks).size).toBeGreaterThan(1);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });
});

describe('the SEARCH schemas against the handler’s EMF documents', () => {
  /** The dimension set of each EMF document holding `metric`, as a sorted schema. */
  const schemasOf = (metric: string) =>
    lines
      .filter((line) => metric in line && '_aws' in line)
      .map((line) => {
        const [directive] = (line._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] })
          .CloudWatchMetrics;
        return [...(directive?.Dimensions[0] ?? [])].sort().join(',');
      });

  it('OpenFindings per cluster and severity, AwsApiCalls per cluster and for the rest', async () => {
    // Act
    await scanBoth(new Map([['prod', [broken('default')]]]), '2026-11-01T10:15:05Z', 'cluster');
    // Assess: the dashboard searches {NodeClassScanner,Cluster,Severity,service} and
    // {NodeClassScanner,Cluster,service}; the remainder has service alone.
    expect(new Set(schemasOf('OpenFindings'))).toEqual(new Set(['Cluster,Severity,service']));
    expect(schemasOf('AwsApiCalls').sort()).toEqual([
      'Cluster,service',
      'Cluster,service',
      'service',
    ]);
    expect(
      lines.filter((line) => 'AwsApiCalls' in line && 'Cluster' in line).map((l) => l.Cluster)
    ).toEqual(['prod', 'staging']);
    expect(new Set(schemasOf('ScanDuration'))).toEqual(new Set(['Cluster,service']));
  });

  it('metricsDetail account (the default): no Cluster dimension, one series per severity', async () => {
    // Act
    await scanBoth(new Map([['prod', [broken('default')]]]), '2026-11-01T10:15:05Z');
    // Assess: the account-wide dashboard searches {NodeClassScanner,Severity,service}.
    expect(new Set(schemasOf('OpenFindings'))).toEqual(new Set(['Severity,service']));
    expect(new Set(schemasOf('AwsApiCalls'))).toEqual(new Set(['service']));
    expect(new Set(schemasOf('ScanDuration'))).toEqual(new Set(['service']));
    expect(new Set(schemasOf('NodeClassesScanned'))).toEqual(new Set(['service']));
    expect(lines.filter((line) => '_aws' in line && 'Cluster' in line)).toEqual([]);
    // Both clusters' scans still count: two datapoints of each severity's one series.
    expect(
      lines.filter((line) => 'OpenFindings' in line && line.Severity === 'critical')
    ).toHaveLength(2);
  });
});
