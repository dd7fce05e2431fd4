import {
  Aws,
  type CfnElement,
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import { SlackChannelConfiguration } from 'aws-cdk-lib/aws-chatbot';
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
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import {
  type ISecurityGroup,
  type IVpc,
  SecurityGroup,
  type SubnetSelection,
} from 'aws-cdk-lib/aws-ec2';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import {
  ManagedPolicy,
  Policy,
  PolicyStatement,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { SubscriptionFilter, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DECLARED_ACTIONS } from '../../lambda/adapters/aws/declared-actions.js';
import type { Severity } from '../../lambda/core/model.js';
import { SCANNER_KUBERNETES_GROUP } from '../../lambda/core/scanner-access.js';
import {
  CONFIG_ENV_KEYS,
  type EnvKey,
  HANDLER_ENV_KEYS,
  type HandlerName,
} from '../../lambda/shared/config.js';
import { severitiesAtOrAbove } from '../config.js';
import { AMI_STATE_CHANGE_PATTERN, IAM_CHANGE_PATTERN } from '../event-patterns.js';
import { scannerPolicyStatements, wildcardReasons } from '../permissions.js';
import { handlerEntry, ScannerFunction } from './scanner-function.js';

/** CloudWatch namespace and Powertools service name of the scanner's EMF metrics. */
export const METRICS_NAMESPACE = 'NodeClassScanner';
export const SERVICE_NAME = 'nodeclass-scanner';

/** DynamoDB key schema and TTL attribute (the finding store's contract). */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'expiresAt',
} as const;

export interface SlackChannel {
  /** AWS Chatbot workspace id (configure the workspace once in the Chatbot console). */
  readonly workspaceId: string;
  readonly channelId: string;
}

export interface NodeClassScannerProps {
  /** EKS clusters to scan: `name` (this stack's region) or `name@region`. */
  readonly clusters: readonly string[];
  /**
   * Also scan clusters discovered on each schedule: `*` for every cluster, or tag filters
   * `key=value,key2` (any value). @default no discovery
   */
  readonly discoverClusters?: string;
  /** Regions to discover clusters in. @default this stack's region */
  readonly discoveryRegions?: readonly string[];
  /** How often the full scan runs (the backstop for events that never fire). @default 15 minutes */
  readonly schedule?: Duration;
  /** Email addresses to alert (each confirms its subscription). @default none */
  readonly alertEmails?: readonly string[];
  /** The least severe finding emailed. @default 'high' */
  readonly alertMinSeverity?: Severity;
  /** Slack channel through AWS Chatbot. @default none */
  readonly slack?: SlackChannel;
  /** Re-notify a finding still failing after this long. @default 24 hours */
  readonly reminderInterval?: Duration;
  /** How long a resolved finding's state is kept (DynamoDB TTL). @default 30 days */
  readonly resolvedRetention?: Duration;
  /** When the per-scan digest is published. @default 'on-change' */
  readonly digest?: 'on-change' | 'always' | 'never';
  /** `non-production` lowers AMI-pinning findings to info. @default 'production' */
  readonly scanEnvironment?: 'production' | 'non-production';
  /**
   * DryRun mode: the role the scanner assumes to dry-run EC2 launches. The scanner's own role never
   * gets EC2 mutation rights. @default DryRun mode off
   */
  readonly dryRunRoleArn?: string;
  /** VPC for clusters whose API endpoint is private (needs NAT or VPC endpoints). @default none */
  readonly vpc?: IVpc;
  /** Subnets in `vpc`. @default the VPC's private subnets */
  readonly vpcSubnets?: SubnetSelection;
  /** @default one month */
  readonly logRetention?: RetentionDays;
  /** Concurrent cluster scans (reserved concurrency of the worker). @default 4 */
  readonly scanConcurrency?: number;
  /** Create an EKS access entry for the scanner role in each named cluster. @default false */
  readonly accessEntries?: boolean;
  /**
   * Also associate `AmazonEKSAdminViewPolicy` (read of everything, Secrets included) instead of
   * relying on the narrow ClusterRole in `infra/cluster-rbac.yaml`. @default false
   */
  readonly eksAdminViewPolicy?: boolean;
  /** Directory of the handler sources (`<name>.ts`). @default this repository's lambda/handlers */
  readonly handlersDirectory?: string;
}

/**
 * The whole scanner in one region: schedule → dispatch → SQS → per-cluster scans, event-driven
 * rescans for AMI and IAM changes, state in DynamoDB, alerts on an encrypted SNS topic (email,
 * Slack), and a dashboard with alarms. IAM events arrive only in us-east-1; outside it, deploy an
 * `IamEventForwarder` there too.
 */
export class NodeClassScanner extends Construct {
  public readonly topic: Topic;
  public readonly topicKey: Key;
  public readonly table: Table;
  public readonly scanQueue: Queue;
  public readonly scanDeadLetterQueue: Queue;
  public readonly eventDeadLetterQueue: Queue;
  public readonly role: Role;
  public readonly functions: Readonly<Record<HandlerName, ScannerFunction>>;
  public readonly dashboard: Dashboard;
  public readonly alarms: readonly Alarm[];
  private readonly deadLetterQueues: Queue[] = [];

  constructor(scope: Construct, id: string, props: NodeClassScannerProps) {
    super(scope, id);
    const schedule = props.schedule ?? Duration.minutes(15);
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    this.topicKey = this.createTopicKey();
    this.topic = new Topic(this, 'Findings', {
      displayName: 'nodeclass-scanner findings',
      masterKey: this.topicKey,
      enforceSSL: true,
    });
    this.table = new Table(this, 'State', {
      partitionKey: { name: TABLE_SCHEMA.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_SCHEMA.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      encryption: TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_SCHEMA.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.scanDeadLetterQueue = this.deadLetterQueue('ScanDeadLetters');
    this.eventDeadLetterQueue = this.deadLetterQueue('EventDeadLetters');
    // Permission simulations run at IAM's conservative 5/s (rate-limit.ts), about six per
    // NodeClass: 15 minutes covers clusters of over 1,000 NodeClasses.
    const scanTimeout = Duration.minutes(15);
    this.scanQueue = new Queue(this, 'ScanQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // AWS guidance for Lambda consumers: at least six times the function timeout.
      visibilityTimeout: Duration.minutes(scanTimeout.toMinutes() * 6),
      deadLetterQueue: { queue: this.scanDeadLetterQueue, maxReceiveCount: 3 },
    });

    this.role = new Role(this, 'ScannerRole', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'nodeclass-scanner Lambdas: read-only scanning, its own queue, table and topic',
    });
    this.attachScannerPolicy(props.dryRunRoleArn);

    const environment = this.functionEnvironment(props);
    const vpcProps = this.vpcProps(props.vpc, props.vpcSubnets);
    const onFailure = new SqsDestination(this.eventDeadLetterQueue);
    const scanConcurrency = props.scanConcurrency ?? 4;
    const make = (name: HandlerName, description: string, extra: ScannerFunctionOptions) =>
      new ScannerFunction(this, pascal(name), {
        entry: handlerEntry(name, props.handlersDirectory),
        description,
        role: this.role,
        environment: environment(name),
        logRetention,
        ...extra,
      });
    this.functions = {
      dispatch: make('dispatch', 'nodeclass-scanner: enqueue one scan per target cluster', {
        memorySize: 256,
        timeout: Duration.minutes(1),
        onFailure,
      }),
      'scan-cluster': make('scan-cluster', 'nodeclass-scanner: scan one cluster (SQS worker)', {
        memorySize: 1024,
        timeout: scanTimeout,
        reservedConcurrentExecutions: scanConcurrency,
        vpcProps,
      }),
      'ami-event': make(
        'ami-event',
        'nodeclass-scanner: re-evaluate NodeClasses an AMI change affects',
        {
          // A controller-role change re-evaluates every NodeClass of its cluster.
          timeout: scanTimeout,
          onFailure,
          vpcProps,
        }
      ),
      'iam-event': make(
        'iam-event',
        'nodeclass-scanner: re-evaluate NodeClasses an IAM change affects',
        {
          // A controller-role change re-evaluates every NodeClass of its cluster.
          timeout: scanTimeout,
          onFailure,
          vpcProps,
        }
      ),
    };
    for (const fn of Object.values(this.functions)) fn.logGroup.grantWrite(this.role);
    this.functions['scan-cluster'].function.addEventSource(
      new SqsEventSource(this.scanQueue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: scanConcurrency,
      })
    );

    this.createRules(schedule);
    this.subscribe(props);
    if (props.accessEntries === true) this.createAccessEntries(props);

    const { dashboard, alarms } = this.monitor(schedule);
    this.dashboard = dashboard;
    this.alarms = alarms;

    new CfnOutput(this, 'TopicArn', { value: this.topic.topicArn });
    new CfnOutput(this, 'ScannerRoleArn', {
      value: this.role.roleArn,
      description: `Principal for EKS access entries (kubernetesGroups: ${SCANNER_KUBERNETES_GROUP})`,
    });
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboardName });
  }

  private createTopicKey(): Key {
    const key = new Key(this, 'FindingsKey', {
      description: 'nodeclass-scanner findings topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    // Services that publish to (or read from) the encrypted topic need the key; SNS decrypts for
    // email/HTTPS delivery. CloudWatch alarms, EventBridge rules and AWS Chatbot per their docs.
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowAwsServicesToUseTheFindingsTopic',
        principals: [
          new ServicePrincipal('cloudwatch.amazonaws.com'),
          new ServicePrincipal('events.amazonaws.com'),
          new ServicePrincipal('chatbot.amazonaws.com'),
        ],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      })
    );
    return key;
  }

  private deadLetterQueue(id: string): Queue {
    const queue = new Queue(this, id, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself a dead-letter queue; its depth has an alarm.',
    });
    this.deadLetterQueues.push(queue);
    return queue;
  }

  private attachScannerPolicy(dryRunRoleArn: string | undefined): void {
    const scope = {
      partition: Aws.PARTITION,
      account: Aws.ACCOUNT_ID,
      topicArn: this.topic.topicArn,
      tableArn: this.table.tableArn,
      queueArn: this.scanQueue.queueArn,
      dryRunRoleArn,
    };
    const statements = scannerPolicyStatements(DECLARED_ACTIONS, scope);
    if (statements.length === 0) return;
    const policy = new Policy(this, 'ScannerPolicy', { statements });
    policy.attachToRole(this.role);
    // The same resources as cdk-nag prints them: pseudo parameters and attributes as <…>.
    const nagScope = {
      partition: '<AWS::Partition>',
      account: '<AWS::AccountId>',
      topicArn: `<${logicalId(this.topic)}>`,
      tableArn: `<${logicalId(this.table)}.Arn>`,
      queueArn: `<${logicalId(this.scanQueue)}.Arn>`,
      dryRunRoleArn,
    };
    for (const { resource, reason } of wildcardReasons(DECLARED_ACTIONS, nagScope)) {
      Validations.of(policy).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${resource}]`,
        reason,
      });
    }
  }

  /** Each function gets exactly the variables lambda/shared/config.ts reads for it. */
  private functionEnvironment(
    props: NodeClassScannerProps
  ): (handler: HandlerName) => Record<string, string> {
    const values: Partial<Record<EnvKey, string>> = {
      STATE_TABLE_NAME: this.table.tableName,
      FINDINGS_TOPIC_ARN: this.topic.topicArn,
      SCAN_QUEUE_URL: this.scanQueue.queueUrl,
      CLUSTERS: props.clusters.join(','),
      DISCOVER_CLUSTERS: props.discoverClusters ?? '',
      DISCOVERY_REGIONS: (props.discoveryRegions ?? []).join(','),
      DRY_RUN_ROLE_ARN: props.dryRunRoleArn ?? '',
      REMINDER_INTERVAL_HOURS: String((props.reminderInterval ?? Duration.hours(24)).toHours()),
      RESOLVED_TTL_DAYS: String((props.resolvedRetention ?? Duration.days(30)).toDays()),
      DIGEST: props.digest ?? 'on-change',
      SCAN_ENVIRONMENT: props.scanEnvironment ?? 'production',
    };
    return (handler) => ({
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      ...Object.fromEntries(
        handlerEnvKeys(handler).map((key) => [key, values[key] ?? missingValue(key)])
      ),
    });
  }

  private vpcProps(vpc: IVpc | undefined, vpcSubnets: SubnetSelection | undefined) {
    if (vpc === undefined) return undefined;
    // Lambda creates its VPC network interfaces with the execution role: AWS's policy for exactly that.
    const vpcAccess = ManagedPolicy.fromAwsManagedPolicyName(
      'service-role/AWSLambdaVPCAccessExecutionRole'
    );
    this.role.addManagedPolicy(vpcAccess);
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      reason:
        'Only with a VPC configured: Lambda needs these ENI permissions to attach the functions to the VPC',
    });
    const securityGroup: ISecurityGroup = new SecurityGroup(this, 'ScannerSecurityGroup', {
      vpc,
      description: 'nodeclass-scanner Lambdas: egress to EKS API endpoints and AWS APIs only',
      allowAllOutbound: true,
    });
    return { vpc, vpcSubnets, securityGroups: [securityGroup] };
  }

  private createRules(schedule: Duration): void {
    const eventTarget = (handler: HandlerName) =>
      new LambdaFunction(this.functions[handler].function, {
        deadLetterQueue: this.eventDeadLetterQueue,
        retryAttempts: 2,
        maxEventAge: Duration.hours(2),
      });
    new Rule(this, 'ScheduleRule', {
      description: 'nodeclass-scanner: periodic full scan',
      schedule: Schedule.rate(schedule),
      targets: [eventTarget('dispatch')],
    });
    new Rule(this, 'AmiStateChangeRule', {
      description: 'nodeclass-scanner: AMI state changes in this account',
      eventPattern: AMI_STATE_CHANGE_PATTERN,
      targets: [eventTarget('ami-event')],
    });
    // IAM events are delivered in us-east-1 and forwarded here by IamEventForwarder.
    new Rule(this, 'IamChangeRule', {
      description: 'nodeclass-scanner: IAM changes to roles and instance profiles (via CloudTrail)',
      eventPattern: IAM_CHANGE_PATTERN,
      targets: [eventTarget('iam-event')],
    });
  }

  private subscribe(props: NodeClassScannerProps): void {
    const emails = props.alertEmails ?? [];
    if (emails.length > 0) {
      const deliveryFailures = this.deadLetterQueue('EmailDeliveryDeadLetters');
      // Findings carry a `severity` attribute; alarm notifications carry none and always go out.
      const severity = new SubscriptionFilter([
        ...severitiesAtOrAbove(props.alertMinSeverity ?? 'high'),
        { exists: false },
      ]);
      for (const email of emails) {
        this.topic.addSubscription(
          new EmailSubscription(email, {
            filterPolicy: { severity },
            deadLetterQueue: deliveryFailures,
          })
        );
      }
    }
    if (props.slack !== undefined) {
      new SlackChannelConfiguration(this, 'Slack', {
        slackChannelConfigurationName: `${Stack.of(this).stackName}-findings`.slice(0, 128),
        slackWorkspaceId: props.slack.workspaceId,
        slackChannelId: props.slack.channelId,
        notificationTopics: [this.topic],
        // Notifications only: channel members get no more than CloudWatch read access.
        guardrailPolicies: [ManagedPolicy.fromAwsManagedPolicyName('CloudWatchReadOnlyAccess')],
      });
    }
  }

  private createAccessEntries(props: NodeClassScannerProps): void {
    const accessPolicies =
      props.eksAdminViewPolicy === true
        ? [
            {
              policyArn: `arn:${Aws.PARTITION}:eks::aws:cluster-access-policy/AmazonEKSAdminViewPolicy`,
              accessScope: { type: 'cluster' },
            },
          ]
        : undefined;
    const region = Stack.of(this).region;
    for (const entry of props.clusters) {
      const [cluster = entry, clusterRegion = region] = entry.split('@');
      if (clusterRegion !== region) {
        throw new Error(
          `NodeClassScanner: an access entry for ${entry} must be created in ${clusterRegion}, not ${region}`
        );
      }
      new CfnAccessEntry(this, `AccessEntry-${cluster}`, {
        clusterName: cluster,
        principalArn: this.role.roleArn,
        type: 'STANDARD',
        kubernetesGroups: [SCANNER_KUBERNETES_GROUP],
        accessPolicies,
      });
    }
  }

  private monitor(schedule: Duration): { dashboard: Dashboard; alarms: Alarm[] } {
    const alarmPeriod = Duration.minutes(Math.min(schedule.toMinutes(), 60));
    const insights = (label: string, query: string, period = alarmPeriod) =>
      new MathExpression({ label, expression: query, period, usingMetrics: {} });
    const fns = Object.entries(this.functions);
    const errors = (period: Duration) =>
      new MathExpression({
        label: 'Lambda errors (all scanner functions)',
        expression: fns.map((_, index) => `e${index}`).join(' + '),
        usingMetrics: Object.fromEntries(
          fns.map(([, fn], index) => [`e${index}`, fn.function.metricErrors({ period })])
        ),
        period,
      });
    const scans = this.functions['scan-cluster'].function;
    const successfulScans = new MathExpression({
      label: 'Successful cluster scans',
      expression: 'invocations - errors',
      usingMetrics: {
        invocations: scans.metricInvocations({ period: schedule }),
        errors: scans.metricErrors({ period: schedule }),
      },
      period: schedule,
    });
    const dlqDepth = (queue: Queue) =>
      queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        label: queue.node.id,
      });

    const alarm = (id: string, description: string, props: AlarmSpec) => {
      const created = new Alarm(this, id, {
        alarmDescription: description,
        metric: props.metric,
        threshold: props.threshold,
        comparisonOperator: props.comparison,
        evaluationPeriods: props.evaluationPeriods ?? 1,
        treatMissingData: props.missing,
      });
      created.addAlarmAction(new SnsAction(this.topic));
      created.addOkAction(new SnsAction(this.topic));
      return created;
    };
    const alarms = [
      alarm('ScanErrorsAlarm', 'A scanner Lambda failed (see its log group).', {
        metric: errors(Duration.minutes(5)),
        threshold: 0,
        comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
        missing: TreatMissingData.NOT_BREACHING,
      }),
      alarm('SourceErrorsAlarm', 'A scan could not read a source (cluster, AWS API).', {
        metric: insights('Source errors', `SELECT SUM(SourceErrors) FROM ${METRICS_NAMESPACE}`),
        threshold: 0,
        comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
        missing: TreatMissingData.IGNORE,
      }),
      alarm('NoSuccessfulScanAlarm', 'No cluster scan succeeded for two schedule periods.', {
        metric: successfulScans,
        threshold: 1,
        comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 2,
        missing: TreatMissingData.BREACHING,
      }),
      ...this.deadLetterQueues.map((queue) =>
        alarm(
          `${queue.node.id}NotEmptyAlarm`,
          `${queue.node.id} holds failed work to inspect (see README, "Dashboard and alarms").`,
          {
            metric: dlqDepth(queue),
            threshold: 0,
            comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
            missing: TreatMissingData.NOT_BREACHING,
          }
        )
      ),
      alarm('CriticalFindingAlarm', 'At least one critical finding is open.', {
        metric: insights(
          'Open critical findings',
          `SELECT MAX(OpenFindings) FROM ${METRICS_NAMESPACE} WHERE Severity = 'critical'`
        ),
        threshold: 1,
        comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        missing: TreatMissingData.IGNORE,
      }),
    ];

    const dashboard = new Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.days(1),
    });
    const graph = (title: string, left: IMetric[], width = 12) =>
      new GraphWidget({ title, left, width, height: 6 });
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
        insights(
          'Open findings',
          `SELECT MAX(OpenFindings) FROM ${METRICS_NAMESPACE} GROUP BY Severity`,
          schedule
        ),
      ]),
      graph('Open findings by cluster and severity', [
        insights(
          'Open findings',
          `SELECT MAX(OpenFindings) FROM ${METRICS_NAMESPACE} GROUP BY Cluster, Severity`,
          schedule
        ),
      ])
    );
    dashboard.addWidgets(
      graph(
        'Scan duration (ms)',
        [
          insights('max', `SELECT MAX(ScanDuration) FROM ${METRICS_NAMESPACE}`, schedule),
          insights('average', `SELECT AVG(ScanDuration) FROM ${METRICS_NAMESPACE}`, schedule),
        ],
        8
      ),
      graph(
        'Clusters and NodeClasses scanned',
        [
          insights('clusters', `SELECT SUM(ClustersScanned) FROM ${METRICS_NAMESPACE}`, schedule),
          insights(
            'NodeClasses',
            `SELECT SUM(NodeClassesScanned) FROM ${METRICS_NAMESPACE}`,
            schedule
          ),
        ],
        8
      ),
      graph(
        'Source errors and ignored events',
        [
          insights('source errors', `SELECT SUM(SourceErrors) FROM ${METRICS_NAMESPACE}`, schedule),
          insights(
            'events ignored',
            `SELECT SUM(EventsIgnored) FROM ${METRICS_NAMESPACE}`,
            schedule
          ),
        ],
        8
      )
    );
    dashboard.addWidgets(
      graph(
        'AWS API calls',
        [insights('API calls', `SELECT SUM(AwsApiCalls) FROM ${METRICS_NAMESPACE}`, schedule)],
        8
      ),
      graph('Dead-letter queue depth', this.deadLetterQueues.map(dlqDepth), 8),
      graph('Lambda errors', [errors(Duration.minutes(5))], 8)
    );
    dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
    return { dashboard, alarms };
  }
}

interface AlarmSpec {
  readonly metric: IMetric;
  readonly threshold: number;
  readonly comparison: ComparisonOperator;
  readonly evaluationPeriods?: number;
  readonly missing: TreatMissingData;
}

type ScannerFunctionOptions = Pick<
  import('./scanner-function.js').ScannerFunctionProps,
  'memorySize' | 'timeout' | 'reservedConcurrentExecutions' | 'onFailure' | 'vpcProps'
>;

function logicalId(construct: Construct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}

/** `scan-cluster` → `ScanCluster` (construct ids). */
function pascal(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, _dash: string, letter: string) => letter.toUpperCase());
}

/** Required keys of the handler plus every optional key; AWS_REGION is set by Lambda itself. */
export function handlerEnvKeys(handler: HandlerName): EnvKey[] {
  const required = new Set(Object.values(HANDLER_ENV_KEYS).flat());
  const optional = CONFIG_ENV_KEYS.filter((key) => !required.has(key));
  return [...HANDLER_ENV_KEYS[handler], ...optional].filter((key) => key !== 'AWS_REGION');
}

function missingValue(key: string): never {
  throw new Error(`NodeClassScanner has no value for the Lambda environment variable ${key}`);
}
