// Dashboard and alarms. Every alarm notifies the findings topic, on ALARM and on OK.
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import type { MetricsDetail } from '../../lambda/adapters/metrics.js';
import { SEVERITIES } from '../../lambda/core/model.js';
import type { HandlerName } from '../../lambda/shared/config.js';
import { FINDING_STATE_LOG_MESSAGE, METRICS_NAMESPACE } from '../../lambda/shared/telemetry.js';
import type { ScannerFunction } from './scanner-function.js';
import { scannerMetrics } from './scanner-metrics.js';

/**
 * Logs Insights over the scanning Lambdas' "Finding state" lines (lambda/app/finding-state-log.ts):
 * each finding's latest line, kept when it says open. A scan logs every open finding of its
 * cluster and every finding it closed, so a fixed one leaves the table at the next scan. `cluster`
 * is the cluster's label (`name@region` outside the home region), so same-named clusters of two
 * regions keep rows of their own.
 */
export const FAILING_RESOURCES_QUERY: readonly string[] = [
  `filter message = "${FINDING_STATE_LOG_MESSAGE}"`,
  'stats latest(state) as current, latest(severity) as sev, latest(severityRank) as rank, ' +
    'latest(findingStatus) as status, max(@timestamp) as lastScan by cluster, kind, name, checkId',
  'filter current = "open"',
  'sort rank asc',
  'limit 1000',
];

export interface MonitoringProps {
  readonly schedule: Duration;
  readonly topic: Topic;
  readonly functions: Readonly<Record<HandlerName, ScannerFunction>>;
  readonly deadLetterQueues: readonly Queue[];
  /** The deployment's metrics namespace. @default METRICS_NAMESPACE */
  readonly metricsNamespace?: string;
  /** The dashboard's name, and the start of each alarm's (`<namePrefix>-<Alarm>`). */
  readonly namePrefix: string;
  /** What the Lambdas' metrics carry (the `metricsDetail` setting): per-cluster graphs or not. */
  readonly metricsDetail: MetricsDetail;
}

/** `NodeClassScanner-ScanErrors` for the construct id `ScanErrorsAlarm`: README's alarm names. */
function alarmNameOf(namePrefix: string, id: string): string {
  return `${namePrefix}-${id.replace(/Alarm$/, '')}`;
}

interface AlarmSpec {
  readonly description: string;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly comparison: ComparisonOperator;
  readonly evaluationPeriods?: number;
  /** Breaching periods (of `evaluationPeriods`) that raise the alarm; all of them when not given. */
  readonly datapointsToAlarm?: number;
  readonly missing: TreatMissingData;
}

export function createMonitoring(
  scope: Construct,
  props: MonitoringProps
): { dashboard: Dashboard; alarms: Alarm[] } {
  const { schedule } = props;
  const { metricQuery, metricSearch, serviceMetric } = scannerMetrics(
    props.metricsNamespace ?? METRICS_NAMESPACE
  );
  // Metrics Insights alarms evaluate at most the last three hours.
  const alarmPeriod = Duration.minutes(Math.min(schedule.toMinutes(), 60));
  const fns = Object.values(props.functions);
  // FILL: a function that did not run has no datapoints, and a sum with a missing term is missing.
  const errors = (period: Duration) =>
    new MathExpression({
      label: 'Lambda errors (all scanner functions)',
      expression: fns.map((_, index) => `FILL(e${index}, 0)`).join(' + '),
      usingMetrics: Object.fromEntries(
        fns.map((fn, index) => [`e${index}`, fn.function.metricErrors({ period })])
      ),
      period,
    });
  const dlqDepth = (queue: Queue) =>
    queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(5),
      label: queue.node.id,
    });

  const alarm = (id: string, spec: AlarmSpec) => {
    const created = new Alarm(scope, id, {
      alarmName: alarmNameOf(props.namePrefix, id),
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: spec.comparison,
      evaluationPeriods: spec.evaluationPeriods ?? 1,
      ...(spec.datapointsToAlarm === undefined
        ? {}
        : { datapointsToAlarm: spec.datapointsToAlarm }),
      treatMissingData: spec.missing,
    });
    created.addAlarmAction(new SnsAction(props.topic));
    created.addOkAction(new SnsAction(props.topic));
    return created;
  };
  const above = (description: string, metric: IMetric, missing: TreatMissingData): AlarmSpec => ({
    description,
    metric,
    threshold: 0,
    comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
    missing,
  });
  const alarms = [
    alarm(
      'ScanErrorsAlarm',
      above(
        'A scanner Lambda failed (see its log group).',
        errors(Duration.minutes(5)),
        TreatMissingData.NOT_BREACHING
      )
    ),
    // A read fault never changes an alert (docs/faults.md), so a fault that persists is
    // reported here: two periods in a row, never one blip.
    alarm('SourceErrorsAlarm', {
      ...above(
        'Scans could not read a source (cluster, AWS API) in two consecutive periods: a fault that persists, not a blip. Alerts of what the source feeds are kept as they were until it reads again (see docs/faults.md).',
        metricQuery('SUM', 'SourceErrors', { label: 'Source errors', period: alarmPeriod }),
        TreatMissingData.IGNORE
      ),
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
    }),
    // Counts only scans that completed, whatever the Lambda or SQS saw; no data is no scan.
    alarm('NoSuccessfulScanAlarm', {
      description: 'No cluster scan succeeded for two schedule periods.',
      metric: serviceMetric('ClustersScanned', {
        label: 'Successful cluster scans',
        period: schedule,
        statistic: 'Sum',
      }),
      threshold: 1,
      comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 2,
      missing: TreatMissingData.BREACHING,
    }),
    // Includes SQS partial-batch failures, which Lambda never counts as Errors.
    alarm(
      'ScanFailuresAlarm',
      above(
        'A cluster scan failed (see the scan-cluster, ami-event or iam-event log group).',
        metricQuery('SUM', 'ScanFailures', { label: 'Failed cluster scans', period: alarmPeriod }),
        TreatMissingData.NOT_BREACHING
      )
    ),
    ...props.deadLetterQueues.map((queue) =>
      alarm(
        `${queue.node.id}NotEmptyAlarm`,
        above(
          `${queue.node.id} holds failed work to inspect (see README, "Dashboard and alarms").`,
          dlqDepth(queue),
          TreatMissingData.NOT_BREACHING
        )
      )
    ),
    alarm('CriticalFindingAlarm', {
      description: 'At least one critical finding is open.',
      metric: metricQuery('MAX', 'OpenFindings', {
        label: 'Open critical findings',
        period: alarmPeriod,
        where: { Severity: 'critical' },
      }),
      threshold: 1,
      comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      missing: TreatMissingData.IGNORE,
    }),
  ];

  const dashboard = new Dashboard(scope, 'Dashboard', {
    dashboardName: props.namePrefix,
    defaultInterval: Duration.days(1),
  });
  // One Metrics Insights query per graph at most: a GetMetricData request carries only one, so a
  // graph with two draws nothing. Graphs with several lines use SEARCH or plain metrics.
  const graph = (
    title: string,
    left: IMetric[],
    width: number,
    extra: { stacked?: boolean } = {}
  ) => new GraphWidget({ title, left, width, height: 6, period: schedule, ...extra });
  const each = { period: schedule };
  dashboard.addWidgets(
    new TextWidget({
      markdown:
        '# nodeclass-scanner\nOpen findings come from the latest scan of each cluster; the table ' +
        'lists what is failing now. A cluster outside the home region is shown as name@region. ' +
        'Alarms notify the findings topic.',
      width: 24,
      height: 2,
    })
  );
  // Alarms above read Metrics Insights over every dimension set: they hold in both modes. The
  // graphs below follow the dimensions the Lambdas write.
  const perCluster = props.metricsDetail === 'cluster';
  dashboard.addWidgets(
    ...(perCluster
      ? [
          // Per severity: each cluster's latest gauge in the period (MAX), summed across clusters.
          graph(
            'Open findings by severity (all clusters)',
            SEVERITIES.map((severity) =>
              metricSearch('OpenFindings', {
                label: severity,
                period: schedule,
                statistic: 'Maximum',
                dimensions: ['Cluster', 'Severity'],
                where: { Severity: severity },
                total: true,
              })
            ),
            12,
            { stacked: true }
          ),
          graph(
            'Open findings by cluster and severity',
            [
              metricQuery('MAX', 'OpenFindings', {
                ...each,
                label: 'Open findings',
                groupBy: ['Cluster', 'Severity'],
              }),
            ],
            12
          ),
        ]
      : [
          // One series per severity, a datapoint per cluster scan: MAX is the worst cluster.
          graph(
            'Open findings by severity (worst cluster)',
            SEVERITIES.map((severity) =>
              metricSearch('OpenFindings', {
                label: severity,
                period: schedule,
                statistic: 'Maximum',
                dimensions: ['Severity'],
                where: { Severity: severity },
              })
            ),
            24
          ),
        ])
  );
  dashboard.addWidgets(
    new LogQueryWidget({
      title: 'Failing NodeClasses and NodePools (latest scan of each cluster)',
      logGroupNames: SCANNING_HANDLERS.map(
        (handler) => props.functions[handler].logGroup.logGroupName
      ),
      queryLines: [...FAILING_RESOURCES_QUERY],
      view: LogQueryVisualizationType.TABLE,
      width: 24,
      height: 8,
    })
  );
  dashboard.addWidgets(
    graph(
      perCluster ? 'Scan duration by cluster (ms)' : 'Scan duration, slowest cluster (ms)',
      [
        metricQuery('MAX', 'ScanDuration', {
          ...each,
          label: 'Scan duration',
          ...(perCluster ? { groupBy: ['Cluster'] } : {}),
        }),
      ],
      12
    ),
    perCluster
      ? graph(
          'AWS API calls by cluster',
          [
            metricSearch('AwsApiCalls', {
              // biome-ignore lint/suspicious/noTemplateCurlyInString: a CloudWatch dynamic label
              label: "${PROP('Dim.Cluster')}",
              period: schedule,
              statistic: 'Sum',
              dimensions: ['Cluster'],
            }),
          ],
          12
        )
      : graph(
          'AWS API calls',
          [
            serviceMetric('AwsApiCalls', {
              label: 'API calls',
              period: schedule,
              statistic: 'Sum',
            }),
          ],
          12
        )
  );
  dashboard.addWidgets(
    graph(
      'Cluster scans',
      [
        serviceMetric('ClustersScanned', {
          label: 'completed',
          period: schedule,
          statistic: 'Sum',
        }),
        metricQuery('SUM', 'ScanFailures', { ...each, label: 'failed' }),
      ],
      6
    ),
    graph(
      'NodeClasses scanned',
      [metricQuery('SUM', 'NodeClassesScanned', { ...each, label: 'NodeClasses' })],
      6
    ),
    graph(
      perCluster ? 'Source errors by cluster' : 'Source errors',
      [
        metricQuery('SUM', 'SourceErrors', {
          ...each,
          label: 'source errors',
          ...(perCluster ? { groupBy: ['Cluster'] } : {}),
        }),
      ],
      6
    ),
    graph(
      'Events ignored by reason',
      [metricQuery('SUM', 'EventsIgnored', { ...each, label: 'ignored', groupBy: ['Reason'] })],
      6
    )
  );
  dashboard.addWidgets(
    graph(
      'AWS API calls (all)',
      [metricQuery('SUM', 'AwsApiCalls', { ...each, label: 'API calls' })],
      6
    ),
    graph(
      'Notifications sent',
      [metricQuery('SUM', 'NotificationsSent', { ...each, label: 'notifications sent' })],
      6
    ),
    graph('Dead-letter queue depth', props.deadLetterQueues.map(dlqDepth), 6),
    graph('Lambda errors', [errors(Duration.minutes(5))], 6)
  );
  dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
  return { dashboard, alarms };
}
