import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  createMetrics,
  createPowertoolsMetrics,
  METRICS_NAMESPACE,
} from '../../lambda/adapters/metrics.js';
import { SERVICE_NAME } from '../../lambda/shared/telemetry.js';

interface EmfDocument {
  _aws: {
    CloudWatchMetrics: {
      Namespace: string;
      Dimensions: string[][];
      Metrics: { Name: string; Unit: string }[];
    }[];
  };
  [key: string]: unknown;
}

function captureEmf(): EmfDocument[] {
  const documents: EmfDocument[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => {
    documents.push(JSON.parse(line) as EmfDocument);
  });
  return documents;
}

beforeEach(() => {
  // POWERTOOLS_DEV (test setup) disables metrics unless explicitly re-enabled.
  vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

describe('createMetrics', () => {
  it('writes OpenFindings per Severity and Cluster, and scan metrics, as EMF', () => {
    // Prepare
    const documents = captureEmf();
    const powertools = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'svc' });
    const metrics = createMetrics(powertools, 'cluster');
    // Act
    metrics.clusterScanned({
      cluster: 'prod',
      durationMs: 1234,
      nodeClasses: 7,
      openBySeverity: { critical: 1, high: 2, medium: 0, low: 0, info: 0 },
    });
    metrics.sourceErrors('prod', 3);
    metrics.apiCalls(42);
    metrics.eventIgnored('malformed-event');
    metrics.notificationsSent(2);
    powertools.publishStoredMetrics();
    // Assess
    const open = documents.filter((d) => 'OpenFindings' in d);
    expect(open.map((d) => [d.Severity, d.Cluster, d.OpenFindings])).toEqual([
      ['critical', 'prod', 1],
      ['high', 'prod', 2],
      ['medium', 'prod', 0],
      ['low', 'prod', 0],
      ['info', 'prod', 0],
    ]);
    expect(open[0]?._aws.CloudWatchMetrics[0]?.Namespace).toBe('NodeClassScanner');
    expect(open[0]?._aws.CloudWatchMetrics[0]?.Dimensions[0]).toEqual(
      expect.arrayContaining(['Cluster', 'Severity'])
    );
    expect(documents.find((d) => 'ScanDuration' in d)).toMatchObject({
      ScanDuration: 1234,
      Cluster: 'prod',
    });
    expect(documents.find((d) => 'NodeClassesScanned' in d)).toMatchObject({
      NodeClassesScanned: 7,
    });
    expect(documents.find((d) => 'SourceErrors' in d)).toMatchObject({
      SourceErrors: 3,
      Cluster: 'prod',
    });
    expect(documents.find((d) => 'EventsIgnored' in d)).toMatchObject({
      EventsIgnored: 1,
      Reason: 'malformed-event',
    });
    expect(documents.find((d) => 'AwsApiCalls' in d)).toMatchObject({
      AwsApiCalls: 42,
      ClustersScanned: 1,
      NotificationsSent: 2,
    });
  });

  it('metricsDetail account: the same metrics without Cluster, so series do not grow with clusters', () => {
    // Prepare
    const documents = captureEmf();
    const powertools = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'svc' });
    const metrics = createMetrics(powertools, 'account');
    // Act: two clusters scanned in one invocation
    for (const cluster of ['prod', 'staging']) {
      metrics.clusterScanned({
        cluster,
        durationMs: 100,
        nodeClasses: 3,
        openBySeverity: { critical: 1, high: 0, medium: 0, low: 0, info: 0 },
      });
      metrics.apiCalls(10, cluster);
      metrics.sourceErrors(cluster, 0);
      metrics.scanFailed(cluster);
    }
    powertools.publishStoredMetrics();
    // Assess
    expect(documents.filter((d) => 'Cluster' in d)).toEqual([]);
    const dimensionSets = new Set(
      documents.flatMap((d) =>
        d._aws.CloudWatchMetrics[0]?.Metrics.map(
          (m) => `${m.Name}:${[...(d._aws.CloudWatchMetrics[0]?.Dimensions[0] ?? [])].sort()}`
        )
      )
    );
    expect([...dimensionSets].sort()).toEqual([
      'AwsApiCalls:service',
      'ClustersScanned:service',
      'NodeClassesScanned:service',
      'OpenFindings:Severity,service',
      'ScanDuration:service',
      'ScanFailures:service',
      'SourceErrors:service',
    ]);
    // Both clusters' calls reach the one series.
    expect(documents.find((d) => 'AwsApiCalls' in d)?.AwsApiCalls).toEqual([10, 10]);
  });

  it('writes no OpenFindings when the open counts are unknown', () => {
    const documents = captureEmf();
    const metrics = createMetrics(
      new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'svc' }),
      'cluster'
    );
    metrics.clusterScanned({ cluster: 'prod', durationMs: 1, nodeClasses: 0 });
    expect(documents.some((d) => 'OpenFindings' in d)).toBe(false);
  });

  it('builds the Powertools instance under the service name and namespace', () => {
    // Prepare
    const documents = captureEmf();
    const powertools = createPowertoolsMetrics();
    // Act
    createMetrics(powertools, 'account').apiCalls(3);
    powertools.publishStoredMetrics();
    // Assess
    expect(documents).toMatchObject([
      {
        AwsApiCalls: 3,
        service: SERVICE_NAME,
        _aws: { CloudWatchMetrics: [{ Namespace: METRICS_NAMESPACE }] },
      },
    ]);
  });
});
