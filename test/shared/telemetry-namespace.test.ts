// A deployment's metrics namespace: set by the construct, read by the Lambdas' metrics adapter.
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPowertoolsMetrics } from '../../lambda/adapters/metrics.js';
import {
  METRICS_NAMESPACE,
  METRICS_NAMESPACE_VARIABLE,
  metricsNamespaceOf,
} from '../../lambda/shared/telemetry.js';

describe('metrics namespace of a deployment', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is the variable when set, the default otherwise', () => {
    expect(metricsNamespaceOf({})).toBe(METRICS_NAMESPACE);
    expect(metricsNamespaceOf({ [METRICS_NAMESPACE_VARIABLE]: '' })).toBe(METRICS_NAMESPACE);
    expect(metricsNamespaceOf({ [METRICS_NAMESPACE_VARIABLE]: 'NodeClassScanner_dev' })).toBe(
      'NodeClassScanner_dev'
    );
  });

  it('refuses a namespace that queries would have to quote', () => {
    expect(() => metricsNamespaceOf({ [METRICS_NAMESPACE_VARIABLE]: 'Node-Class' })).toThrow(
      'POWERTOOLS_METRICS_NAMESPACE: "Node-Class" is not a namespace of letters, digits and underscores'
    );
  });

  it('is where the Lambdas publish their EMF metrics', () => {
    // Prepare
    vi.stubEnv(METRICS_NAMESPACE_VARIABLE, 'NodeClassScanner_dev');
    const metrics = createPowertoolsMetrics();

    // Act
    metrics.addMetric('ClustersScanned', MetricUnit.Count, 1);
    const document = metrics.serializeMetrics();

    // Assess
    expect(document._aws.CloudWatchMetrics[0]?.Namespace).toBe('NodeClassScanner_dev');
  });
});
