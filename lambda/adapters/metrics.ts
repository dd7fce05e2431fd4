// CloudWatch metrics as Embedded Metric Format log lines through Powertools Metrics: no
// PutMetricData calls, no IAM permission, no throttling (aws-facts §8.4). Namespace
// `NodeClassScanner`. Dimensions stay low-cardinality: cluster, severity, reason — never resource ids.
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricUnit as Unit } from '@aws-lambda-powertools/metrics/types';
import { SEVERITIES } from '../core/model.js';
import type { ServiceMetrics } from '../core/service-ports.js';

import { METRICS_NAMESPACE, SERVICE_NAME } from '../shared/telemetry.js';

export { METRIC_NAMES, METRICS_NAMESPACE } from '../shared/telemetry.js';

export interface EmfMetrics extends ServiceMetrics {
  /** Writes the stored (dimensionless) metrics; call once at the end of each invocation. */
  flush(): void;
}

export function createMetrics(
  metrics: Metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME })
): EmfMetrics {
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
      single('ScanDuration', MetricUnit.Milliseconds, durationMs, { Cluster: cluster });
      single('NodeClassesScanned', MetricUnit.Count, nodeClasses, { Cluster: cluster });
      if (openBySeverity === undefined) return;
      for (const severity of SEVERITIES) {
        single('OpenFindings', MetricUnit.Count, openBySeverity[severity], {
          Cluster: cluster,
          Severity: severity,
        });
      }
    },
    sourceErrors(cluster, count) {
      single('SourceErrors', MetricUnit.Count, count, { Cluster: cluster });
    },
    apiCalls(count) {
      metrics.addMetric('AwsApiCalls', MetricUnit.Count, count);
    },
    eventIgnored(reason) {
      single('EventsIgnored', MetricUnit.Count, 1, { Reason: reason });
    },
    notificationsSent(count) {
      metrics.addMetric('NotificationsSent', MetricUnit.Count, count);
    },
    scanFailed(cluster) {
      single('ScanFailures', MetricUnit.Count, 1, { Cluster: cluster });
    },
    flush() {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    },
  };
}
