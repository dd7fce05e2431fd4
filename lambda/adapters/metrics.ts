// CloudWatch metrics as Embedded Metric Format log lines through Powertools Metrics: no
// PutMetricData calls, no IAM permission, no throttling. Namespace `NodeClassScanner`, or the
// deployment's own (`metricsNamespaceOf`).
// Dimensions stay low-cardinality: cluster, severity, reason — never resource ids. `Cluster` is the
// cluster's label (its name; `name@region` outside the home region), one series per cluster, and
// only with `metricsDetail` `cluster`: each series is billed as a custom metric, so `account` (the
// default) writes the same metrics without it, a fixed number of series for any fleet.
// Metrics without their own dimensions are stored on the Powertools instance and written by its
// `logMetrics` middleware after each invocation (see `lambda/handlers/service.ts`).
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricsOptions, MetricUnit as Unit } from '@aws-lambda-powertools/metrics/types';
import { SEVERITIES } from '../core/model.js';
import type { ServiceMetrics } from '../core/ports/service.js';

import { metricsNamespaceOf, SERVICE_NAME } from '../shared/telemetry.js';

export { METRICS_NAMESPACE } from '../shared/telemetry.js';

/** The Powertools instance the handlers' `logMetrics` middleware flushes. */
export function createPowertoolsMetrics(logger?: MetricsOptions['logger']): Metrics {
  return new Metrics({
    // The deployment's namespace (set by the construct), so deployments never mix metrics.
    namespace: metricsNamespaceOf(process.env),
    serviceName: SERVICE_NAME,
    ...(logger === undefined ? {} : { logger }),
  });
}

/** `cluster`: per-cluster series too; `account`: deployment-wide series only (settings.ts). */
export type MetricsDetail = 'account' | 'cluster';

/** The scan's metrics port over a Powertools instance (which the caller flushes). */
export function createMetrics(metrics: Metrics, detail: MetricsDetail): ServiceMetrics {
  const perCluster = detail === 'cluster';
  /** The Cluster dimension when series are per cluster, none otherwise. */
  const clusterDimension = (cluster: string): Record<string, string> =>
    perCluster ? { Cluster: cluster } : {};

  /** A metric with its own dimension set is written as its own EMF document, immediately. */
  function single(
    name: string,
    unit: Unit,
    value: number,
    dimensions: Record<string, string>
  ): void {
    const one = metrics.singleMetric();
    one.addDimensions(dimensions);
    one.addMetric(name, unit, value);
  }

  return {
    clusterScanned({ cluster, durationMs, nodeClasses, openBySeverity }) {
      metrics.addMetric('ClustersScanned', MetricUnit.Count, 1);
      single('ScanDuration', MetricUnit.Milliseconds, durationMs, clusterDimension(cluster));
      single('NodeClassesScanned', MetricUnit.Count, nodeClasses, clusterDimension(cluster));
      if (openBySeverity === undefined) return;
      // Account-wide, each scan's count is one datapoint of the series: its MAX is the worst cluster.
      for (const severity of SEVERITIES) {
        single('OpenFindings', MetricUnit.Count, openBySeverity[severity], {
          ...clusterDimension(cluster),
          Severity: severity,
        });
      }
    },
    sourceErrors(cluster, count) {
      single('SourceErrors', MetricUnit.Count, count, clusterDimension(cluster));
    },
    apiCalls(count, cluster) {
      if (cluster === undefined || !perCluster) {
        metrics.addMetric('AwsApiCalls', MetricUnit.Count, count);
      } else single('AwsApiCalls', MetricUnit.Count, count, { Cluster: cluster });
    },
    eventIgnored(reason) {
      single('EventsIgnored', MetricUnit.Count, 1, { Reason: reason });
    },
    notificationsSent(count) {
      metrics.addMetric('NotificationsSent', MetricUnit.Count, count);
    },
    scanFailed(cluster) {
      single('ScanFailures', MetricUnit.Count, 1, clusterDimension(cluster));
    },
  };
}
