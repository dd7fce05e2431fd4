// Dashboard and alarms. Every alarm notifies the findings topic, on ALARM and on OK.
import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { HandlerName } from '../../lambda/shared/config.js';
import type { ScannerFunction } from './scanner-function.js';
import { metricQuery, serviceMetric } from './scanner-metrics.js';

export interface MonitoringProps {
  readonly schedule: Duration;
  readonly topic: Topic;
  readonly functions: Readonly<Record<HandlerName, ScannerFunction>>;
  readonly deadLetterQueues: readonly Queue[];
}

interface AlarmSpec {
  readonly description: string;
  readonly metric: IMetric;
  readonly threshold: number;
  readonly comparison: ComparisonOperator;
  readonly evaluationPeriods?: number;
  readonly missing: TreatMissingData;
}

export function createMonitoring(
  scope: Construct,
  props: MonitoringProps
): { dashboard: Dashboard; alarms: Alarm[] } {
  const { schedule } = props;
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
      alarmDescription: spec.description,
      metric: spec.metric,
      threshold: spec.threshold,
      comparisonOperator: spec.comparison,
      evaluationPeriods: spec.evaluationPeriods ?? 1,
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
    alarm(
      'SourceErrorsAlarm',
      above(
        'A scan could not read a source (cluster, AWS API).',
        metricQuery('SUM', 'SourceErrors', { label: 'Source errors', period: alarmPeriod }),
        TreatMissingData.IGNORE
      )
    ),
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

  const dashboard = new Dashboard(scope, 'Dashboard', { defaultInterval: Duration.days(1) });
  const graph = (title: string, left: IMetric[], width = 12) =>
    new GraphWidget({ title, left, width, height: 6 });
  const each = { period: schedule };
  dashboard.addWidgets(
    new TextWidget({
      markdown:
        '# nodeclass-scanner\nOpen findings come from the latest scan of each cluster. ' +
        'Alarms notify the findings topic.',
      width: 24,
      height: 2,
    })
  );
  dashboard.addWidgets(
    graph('Open findings by severity', [
      metricQuery('MAX', 'OpenFindings', {
        ...each,
        label: 'Open findings',
        groupBy: ['Severity'],
      }),
    ]),
    graph('Open findings by cluster and severity', [
      metricQuery('MAX', 'OpenFindings', {
        ...each,
        label: 'Open findings',
        groupBy: ['Cluster', 'Severity'],
      }),
    ])
  );
  dashboard.addWidgets(
    graph(
      'Scan duration (ms)',
      [
        metricQuery('MAX', 'ScanDuration', { ...each, label: 'max' }),
        metricQuery('AVG', 'ScanDuration', { ...each, label: 'average' }),
      ],
      8
    ),
    graph(
      'Clusters scanned and failed, NodeClasses scanned',
      [
        metricQuery('SUM', 'ClustersScanned', { ...each, label: 'clusters scanned' }),
        metricQuery('SUM', 'ScanFailures', { ...each, label: 'cluster scans failed' }),
        metricQuery('SUM', 'NodeClassesScanned', { ...each, label: 'NodeClasses' }),
      ],
      8
    ),
    graph(
      'Source errors and ignored events',
      [
        metricQuery('SUM', 'SourceErrors', { ...each, label: 'source errors' }),
        metricQuery('SUM', 'EventsIgnored', { ...each, label: 'events ignored' }),
      ],
      8
    )
  );
  dashboard.addWidgets(
    graph(
      'AWS API calls and notifications',
      [
        metricQuery('SUM', 'AwsApiCalls', { ...each, label: 'API calls' }),
        metricQuery('SUM', 'NotificationsSent', { ...each, label: 'notifications sent' }),
      ],
      8
    ),
    graph('Dead-letter queue depth', props.deadLetterQueues.map(dlqDepth), 8),
    graph('Lambda errors', [errors(Duration.minutes(5))], 8)
  );
  dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
  return { dashboard, alarms };
}
