// Names the Lambdas publish under and the infrastructure reads back (Powertools service, EMF
// namespace and metric names, the state table's key schema). Declared once, here: the CDK
// construct imports them, so a renamed metric cannot leave an alarm watching nothing.

export const SERVICE_NAME = 'nodeclass-scanner';
export const METRICS_NAMESPACE = 'NodeClassScanner';

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
