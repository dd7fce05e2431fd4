// Names the Lambdas publish under and the infrastructure reads back (Powertools service, EMF
// namespace and metric names, the state table's key schema). Declared once, here: the CDK
// construct imports them, so a renamed metric cannot leave an alarm watching nothing.

export const SERVICE_NAME = 'nodeclass-scanner';
export const METRICS_NAMESPACE = 'NodeClassScanner';

/** Tag on the findings topic naming its stack: `nodeclass-scan notify-test --stack` finds it. */
export const FINDINGS_TOPIC_TAG = 'nodeclass-scanner:findings-topic-of';

/**
 * A deployment's own namespace (the construct's `metricsNamespace`) reaches the Lambdas in
 * Powertools' own variable. Letters, digits and underscores only, so Metrics Insights and SEARCH
 * take it unquoted.
 */
export const METRICS_NAMESPACE_VARIABLE = 'POWERTOOLS_METRICS_NAMESPACE';
export const METRICS_NAMESPACE_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,254}$/;

/** The namespace a Lambda publishes under: its deployment's, or the default when unset. */
export function metricsNamespaceOf(env: Readonly<Record<string, string | undefined>>): string {
  const value = env[METRICS_NAMESPACE_VARIABLE];
  if (value === undefined || value === '') return METRICS_NAMESPACE;
  if (!METRICS_NAMESPACE_PATTERN.test(value)) {
    throw new Error(
      `${METRICS_NAMESPACE_VARIABLE}: "${value}" is not a namespace of letters, digits and underscores`
    );
  }
  return value;
}

export const METRIC_NAMES = [
  'OpenFindings',
  'ScanDuration',
  'ClustersScanned',
  'NodeClassesScanned',
  'SourceErrors',
  'AwsApiCalls',
  'EventsIgnored',
  'NotificationsSent',
  /** One per cluster scan that did not complete (thrown, or notifications not published). */
  'ScanFailures',
] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/**
 * The message of the log line written per open (and per just-resolved) finding after each cluster
 * scan (`lambda/app/finding-state-log.ts`); the dashboard's failing-resources table queries it.
 */
export const FINDING_STATE_LOG_MESSAGE = 'Finding state';

/** DynamoDB key schema and TTL attribute (the finding store's contract). */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
} as const;
