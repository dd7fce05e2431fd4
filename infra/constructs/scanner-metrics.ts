// The only way infrastructure refers to the scanner's own EMF metrics: names come from the
// Lambdas' telemetry module, so a widget or alarm on a metric nobody emits cannot be written.
import type { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  METRIC_NAMES,
  METRICS_NAMESPACE,
  type MetricName,
  SERVICE_NAME,
} from '../../lambda/shared/telemetry.js';

export type Aggregate = 'SUM' | 'MAX' | 'AVG';

export interface QueryOptions {
  /** The deployment's namespace (`metricsNamespace`). @default METRICS_NAMESPACE */
  readonly namespace?: string;
  readonly label: string;
  readonly period: Duration;
  /** Equality filters on dimensions, e.g. `{ Severity: 'critical' }`. */
  readonly where?: Readonly<Record<string, string>>;
  readonly groupBy?: readonly string[];
}

function checked(name: MetricName): MetricName {
  if (!(METRIC_NAMES as readonly string[]).includes(name)) {
    throw new Error(`${name} is not one of the scanner's metrics (lambda/shared/telemetry.ts)`);
  }
  return name;
}

const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * Metrics Insights over every dimension set of a metric: for metrics whose dimensions (Cluster,
 * Severity, Reason) are only known at run time.
 */
export function metricQuery(
  aggregate: Aggregate,
  name: MetricName,
  options: QueryOptions
): MathExpression {
  const filters = Object.entries(options.where ?? {}).map(([dimension, value]) => {
    if (!IDENTIFIER.test(dimension) || value.includes("'")) {
      throw new Error(`unsupported Metrics Insights filter ${dimension}=${value}`);
    }
    return `${dimension} = '${value}'`;
  });
  const query = [
    `SELECT ${aggregate}(${checked(name)}) FROM ${options.namespace ?? METRICS_NAMESPACE}`,
    ...(filters.length > 0 ? [`WHERE ${filters.join(' AND ')}`] : []),
    ...(options.groupBy?.length ? [`GROUP BY ${options.groupBy.join(', ')}`] : []),
  ].join(' ');
  return new MathExpression({
    label: options.label,
    expression: query,
    period: options.period,
    usingMetrics: {},
  });
}

/**
 * A metric written with Powertools' default dimensions only (`service`): an ordinary metric, so
 * alarms on it may span more than the three hours Metrics Insights alarms evaluate.
 */
export function serviceMetric(
  name: MetricName,
  options: {
    readonly namespace?: string;
    readonly label: string;
    readonly period: Duration;
    readonly statistic: 'Sum';
  }
): Metric {
  return new Metric({
    namespace: options.namespace ?? METRICS_NAMESPACE,
    metricName: checked(name),
    dimensionsMap: { service: SERVICE_NAME },
    statistic: options.statistic,
    period: options.period,
    label: options.label,
  });
}

/**
 * The dimensions every metric with its own dimension set carries besides its own: Powertools adds
 * its default dimension (`service`) to each EMF document (lambda/adapters/metrics.ts).
 */
const DEFAULT_DIMENSIONS = ['service'] as const;

export interface SearchOptions {
  /** The deployment's namespace (`metricsNamespace`). @default METRICS_NAMESPACE */
  readonly namespace?: string;
  readonly label: string;
  readonly period: Duration;
  readonly statistic: 'Sum' | 'Maximum';
  /** The metric's own dimensions: the search matches exactly this set (plus `service`). */
  readonly dimensions: readonly string[];
  /** Equality filters on those dimensions, e.g. `{ Severity: 'critical' }`. */
  readonly where?: Readonly<Record<string, string>>;
  /** `SUM` of every series found (e.g. a total across clusters); one line per series otherwise. */
  readonly total?: boolean;
}

/**
 * A metric math `SEARCH` over one exact dimension set: unlike Metrics Insights it may sit with
 * other queries in one graph (a request holds one Insights query) and reads beyond three hours,
 * and the schema keeps apart the series of one metric written with different dimension sets
 * (`AwsApiCalls` per cluster and the invocation's remainder).
 */
export function metricSearch(name: MetricName, options: SearchOptions): MathExpression {
  const filters = Object.entries(options.where ?? {});
  for (const [dimension, value] of [
    ...options.dimensions.map((dimension) => [dimension, ''] as const),
    ...filters,
  ]) {
    if (!IDENTIFIER.test(dimension) || /['"\\]/.test(value)) {
      throw new Error(`unsupported SEARCH dimension ${dimension}=${value}`);
    }
  }
  const unknown = filters.filter(([dimension]) => !options.dimensions.includes(dimension));
  if (unknown.length > 0) {
    throw new Error(`SEARCH filter on ${unknown[0]?.[0]}, which is not in the dimension set`);
  }
  const schema = [
    options.namespace ?? METRICS_NAMESPACE,
    ...[...options.dimensions, ...DEFAULT_DIMENSIONS].sort(),
  ];
  const terms = [
    `{${schema.join(',')}}`,
    `MetricName="${checked(name)}"`,
    ...filters.map(([dimension, value]) => `${dimension}="${value}"`),
  ].join(' ');
  const search = `SEARCH('${terms}', '${options.statistic}', ${options.period.toSeconds()})`;
  return new MathExpression({
    label: options.label,
    expression: options.total ? `SUM(${search})` : search,
    period: options.period,
    usingMetrics: {},
  });
}

/**
 * The three builders bound to one deployment's namespace, so that deployments sharing an account
 * and region never read each other's metrics.
 */
export function scannerMetrics(namespace: string) {
  return {
    metricQuery: (aggregate: Aggregate, name: MetricName, options: QueryOptions) =>
      metricQuery(aggregate, name, { ...options, namespace }),
    serviceMetric: (name: MetricName, options: Parameters<typeof serviceMetric>[1]) =>
      serviceMetric(name, { ...options, namespace }),
    metricSearch: (name: MetricName, options: SearchOptions) =>
      metricSearch(name, { ...options, namespace }),
  };
}
