import { CfnOutput, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { Alarm, Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import {
  type AnnotationSuppression,
  annotationSuppressionIssues,
  annotationSuppressionProblems,
  annotationSuppressionText,
} from '../../lambda/core/annotation-policy.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { type ClusterSettingsMap, scopedIgnoreRules } from '../../lambda/core/cluster-settings.js';
import { type IgnoreRule, ignoreRulesSchema, issuePath } from '../../lambda/core/ignore-rules.js';
import { SCANNER_KUBERNETES_GROUP } from '../../lambda/core/scanner-access.js';
import {
  ANNOTATION_SUPPRESSION_MAX_CHARS,
  CONFIG_ENV_KEYS,
  type EnvKey,
  HANDLER_ENV_KEYS,
  HANDLER_NAMES,
  type HandlerName,
  IGNORE_RULES_MAX_CHARS,
} from '../../lambda/shared/config.js';
import { namedProblems, SETTINGS, valueProblems } from '../../lambda/shared/settings.js';
import {
  METRICS_NAMESPACE,
  METRICS_NAMESPACE_PATTERN,
  SERVICE_NAME,
  TABLE_SCHEMA,
} from '../../lambda/shared/telemetry.js';
import { ROLE_CONSTRUCT_IDS } from '../handler-roles.js';
import { createFindingsTopic, type SlackChannel, subscribe } from './alerts.js';
import { clusterEnvironmentsVariable, validClusterSettings } from './cluster-settings.js';
import { createMonitoring } from './monitoring.js';
import type { ScannerFunction } from './scanner-function.js';
import { createScanning, createScanQueue } from './scanning.js';
import {
  type PropSettingValues,
  propSettingValues,
  type SettingProps,
  settingVariables,
} from './setting-props.js';

export type { SlackChannel } from './alerts.js';

/**
 * The construct's props. Those of the settings table (`SettingProps`: `clusters`, `schedule`,
 * `alertEmails`, `scanConcurrency`, …) are named, defaulted and checked as README's Configuration
 * table says for the cdk.json key (durations are `Duration`s); synth fails naming a bad prop.
 */
export interface NodeClassScannerProps extends SettingProps {
  /** EKS clusters to scan: `name` (this stack's region) or `name@region`, each once. */
  readonly clusters: readonly string[];
  /**
   * Slack channel through Amazon Q Developer in chat applications (formerly AWS Chatbot).
   * @default none
   */
  readonly slack?: SlackChannel | undefined;
  /**
   * Accepted findings: each matching `fail`/`error` finding is reported as `suppressed` and no
   * longer alerts (an open one is closed with one `suppressed` message), until the rule's
   * `expires` date. Validated at synth against the check catalog.
   * @default none
   */
  readonly ignore?: readonly IgnoreRule[] | undefined;
  /**
   * Whether `ignore-check.nodeclass-scanner/<check>` annotations on cluster objects may suppress
   * findings: `allow`, `deny`, or the check ids (or globs such as `ami-*`) whose annotations may.
   * A trust decision: whoever can edit a NodeClass can otherwise accept its findings. Every
   * suppression of an open finding is alerted (`change=suppressed`); a refused annotation leaves
   * the finding open, saying so. @default 'allow'
   */
  readonly annotationSuppression?: AnnotationSuppression | undefined;
  /**
   * Per-cluster settings, keyed by an entry of `clusters` (or, with discovery, a cluster name):
   * `environment` and `alertMinSeverity` override the global ones for that cluster, and `ignore`
   * rules (`resource` a `Kind/name` glob) apply to that cluster only. @default none
   */
  readonly clusterSettings?: ClusterSettingsMap | undefined;
  /** VPC for clusters whose API endpoint is private (needs NAT or VPC endpoints). @default none */
  readonly vpc?: IVpc | undefined;
  /** Subnets in `vpc`. @default the VPC's private subnets */
  readonly vpcSubnets?: SubnetSelection | undefined;
  /**
   * Directory of the prebuilt Lambda bundles: `<handler>/index.mjs` for each handler (built by
   * `npm run build:lambdas`). @default the context key `nodeclass-scanner:lambdaBundlesDirectory`
   * if set, else the bundles shipped in the package (`dist/lambda`)
   */
  readonly lambdaBundlesDirectory?: string | undefined;
  /**
   * CloudWatch namespace of this deployment's metrics (letters, digits, underscores). Give each
   * deployment in one account and region its own, so their dashboards and alarms do not mix.
   * @default 'NodeClassScanner'
   */
  readonly metricsNamespace?: string | undefined;
  /**
   * Start of the dashboard's name (this, exactly) and each alarm's (`<namePrefix>-ScanErrors`),
   * so scripts and runbooks can name them. @default the stack's name
   */
  readonly namePrefix?: string | undefined;
}

/**
 * The whole scanner in one region: schedule → dispatch → SQS → per-cluster scans, event-driven
 * rescans for AMI and IAM changes, state in DynamoDB, alerts on an encrypted SNS topic (email,
 * Slack), and a dashboard with alarms. Each function runs as its own role. IAM events arrive only
 * in us-east-1; outside it, deploy an `IamEventForwarder` there too.
 */
export class NodeClassScanner extends Construct {
  public readonly topic: Topic;
  public readonly topicKey: Key;
  public readonly table: Table;
  public readonly scanQueue: Queue;
  public readonly scanDeadLetterQueue: Queue;
  public readonly eventDeadLetterQueue: Queue;
  /** Each function's execution role. */
  public readonly roles: Readonly<Record<HandlerName, Role>>;
  public readonly functions: Readonly<Record<HandlerName, ScannerFunction>>;
  public readonly dashboard: Dashboard;
  public readonly alarms: readonly Alarm[];
  private readonly deadLetterQueues: Queue[] = [];

  constructor(scope: Construct, id: string, props: NodeClassScannerProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const settings = propSettingValues(
      props as unknown as Readonly<Record<string, unknown>>,
      stack.region
    );
    const slack = validSlack(props.slack);
    const schedule = Duration.minutes(settings.scheduleMinutes ?? SETTINGS.scheduleMinutes.default);
    const metricsNamespace = props.metricsNamespace ?? METRICS_NAMESPACE;
    if (!METRICS_NAMESPACE_PATTERN.test(metricsNamespace)) {
      throw new Error(
        `NodeClassScanner: metricsNamespace "${metricsNamespace}" must be letters, digits and underscores, starting with a letter`
      );
    }
    const dryRunRoleArn = settings.dryRunRoleArn || undefined;

    ({ topic: this.topic, topicKey: this.topicKey } = createFindingsTopic(this));
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
    this.scanQueue = createScanQueue(this, this.scanDeadLetterQueue);

    ({ roles: this.roles, functions: this.functions } = createScanning(
      this,
      {
        clusters: settings.clusters ?? [],
        schedule,
        environment: this.functionEnvironment(props, settings),
        logRetention: (settings.logRetentionDays ??
          SETTINGS.logRetentionDays.default) as RetentionDays,
        scanConcurrency: settings.scanConcurrency ?? SETTINGS.scanConcurrency.default,
        reservedScanConcurrency: settings.reservedScanConcurrency,
        dryRunRoleArn,
        securityHub: settings.securityHub === true,
        ssmParameterPrefixes: settings.ssmParameterPrefixes ?? [],
        iamBudgetTableArn: settings.iamBudgetTableArn || undefined,
        vpc: props.vpc,
        vpcSubnets: props.vpcSubnets,
        accessEntries: settings.accessEntries === true,
        eksAdminViewPolicy: settings.eksAdminViewPolicy === true,
        lambdaBundlesDirectory: props.lambdaBundlesDirectory,
      },
      {
        topic: this.topic,
        topicKey: this.topicKey,
        table: this.table,
        scanQueue: this.scanQueue,
        eventDeadLetterQueue: this.eventDeadLetterQueue,
      }
    ));
    subscribe(
      this,
      this.topic,
      {
        alertEmails: settings.alertEmails,
        alertMinSeverity: settings.alertMinSeverity,
        slack,
        clusterSettings: props.clusterSettings,
      },
      (queueId) => this.deadLetterQueue(queueId)
    );
    const namePrefix = props.namePrefix ?? stack.stackName;
    ({ dashboard: this.dashboard, alarms: this.alarms } = createMonitoring(this, {
      schedule,
      topic: this.topic,
      functions: this.functions,
      deadLetterQueues: this.deadLetterQueues,
      metricsNamespace,
      namePrefix,
      metricsDetail: settings.metricsDetail ?? SETTINGS.metricsDetail.default,
    }));
    this.addOutputs(stack);
  }

  /**
   * The stack outputs README documents, under stable keys (`ScanClusterRoleArn`, not a hashed
   * logical id) for scripts (`aws cloudformation describe-stacks`, `notify-test`). A second
   * scanner in the same stack prefixes its keys with its construct id.
   */
  private addOutputs(stack: Stack): void {
    const prefix = STACKS_WITH_OUTPUTS.has(stack) ? this.node.id : '';
    STACKS_WITH_OUTPUTS.add(stack);
    const output = (key: string, value: string, description?: string) => {
      const created = new CfnOutput(this, key, {
        value,
        ...(description === undefined ? {} : { description }),
      });
      created.overrideLogicalId(`${prefix}${key}`);
    };
    output(
      SCANNER_OUTPUTS.topicArn,
      this.topic.topicArn,
      'The findings topic (alerts, notify-test)'
    );
    for (const handler of HANDLER_NAMES) {
      const scans = (SCANNING_HANDLERS as readonly string[]).includes(handler);
      output(
        `${ROLE_CONSTRUCT_IDS[handler]}Arn`,
        this.roles[handler].roleArn,
        scans
          ? `${handler} role: needs an EKS access entry (kubernetesGroups: ${SCANNER_KUBERNETES_GROUP})`
          : `${handler} role`
      );
    }
    output(
      SCANNER_OUTPUTS.stateTableArn,
      this.table.tableArn,
      'The state table (findings, and the IAM budget other deployments may share: iamBudgetTableArn)'
    );
    output(SCANNER_OUTPUTS.dashboardName, this.dashboard.dashboardName);
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

  /** Each function gets exactly the variables lambda/shared/config.ts reads for it. */
  private functionEnvironment(
    props: NodeClassScannerProps,
    settings: PropSettingValues
  ): (handler: HandlerName) => Record<string, string> {
    const clusterSettings = validClusterSettings({
      clusters: settings.clusters ?? [],
      discoverClusters: settings.discoverClusters,
      clusterSettings: props.clusterSettings,
    });
    const ignoreRules = ignoreRulesValue([
      ...(props.ignore ?? []),
      ...scopedIgnoreRules(clusterSettings),
    ]);
    // The table's settings, then the resources and the structured (`json`) settings.
    const values: Partial<Record<EnvKey, string>> = {
      ...settingVariables(settings),
      STATE_TABLE_NAME: this.table.tableName,
      FINDINGS_TOPIC_ARN: this.topic.topicArn,
      SCAN_QUEUE_URL: this.scanQueue.queueUrl,
      CLUSTER_ENVIRONMENTS: clusterEnvironmentsVariable(
        clusterSettings,
        IGNORE_RULES_MAX_CHARS - ignoreRules.length
      ),
      IGNORE_RULES: ignoreRules,
      ANNOTATION_SUPPRESSION: annotationSuppressionValue(
        props.annotationSuppression ?? SETTINGS.annotationSuppression.default
      ),
    };
    return (handler) => ({
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace ?? METRICS_NAMESPACE,
      ...Object.fromEntries(
        handlerEnvKeys(handler).map((key) => [key, values[key] ?? missingValue(key)])
      ),
    });
  }
}

/** Stacks holding a scanner's outputs: a second scanner there prefixes its output keys. */
const STACKS_WITH_OUTPUTS = new WeakSet<Stack>();

/** Output keys besides the roles' (`<Handler>RoleArn`), as README documents them. */
const SCANNER_OUTPUTS = {
  topicArn: 'TopicArn',
  stateTableArn: 'StateTableArn',
  dashboardName: 'DashboardName',
} as const;

/** The Slack ids, checked as the slackWorkspaceId / slackChannelId keys are. */
function validSlack(slack: SlackChannel | undefined): SlackChannel | undefined {
  if (slack === undefined) return undefined;
  const problems = [
    ...namedProblems(
      'slack.workspaceId',
      valueProblems(SETTINGS.slackWorkspaceId, slack.workspaceId)
    ),
    ...namedProblems('slack.channelId', valueProblems(SETTINGS.slackChannelId, slack.channelId)),
  ];
  if (problems.length > 0)
    throw new Error(`NodeClassScanner: invalid props:\n  - ${problems.join('\n  - ')}`);
  return slack;
}

/** Required keys of the handler plus every optional key; AWS_REGION is set by Lambda itself. */
function handlerEnvKeys(handler: HandlerName): EnvKey[] {
  const required = new Set(Object.values(HANDLER_ENV_KEYS).flat());
  const optional = CONFIG_ENV_KEYS.filter((key) => !required.has(key));
  return [...HANDLER_ENV_KEYS[handler], ...optional].filter((key) => key !== 'AWS_REGION');
}

/** The IGNORE_RULES variable: the rules as JSON, validated against the catalog and its budget. */
export function ignoreRulesValue(rules: readonly IgnoreRule[]): string {
  const parsed = ignoreRulesSchema(CHECKS.map((check) => check.id)).safeParse(rules);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `${issuePath('ignore', issue.path)}: ${issue.message}`
    );
    throw new Error(`NodeClassScanner: ${problems.join('; ')}`);
  }
  const value = JSON.stringify(parsed.data);
  if (value.length > IGNORE_RULES_MAX_CHARS) {
    throw new Error(
      `NodeClassScanner: the ignore rules take ${value.length} characters of the Lambdas' 4 KB ` +
        `environment; keep them under ${IGNORE_RULES_MAX_CHARS}`
    );
  }
  return value;
}

/** The ANNOTATION_SUPPRESSION variable: `allow`, `deny`, or check ids/globs, validated. */
export function annotationSuppressionValue(policy: AnnotationSuppression): string {
  const problems = annotationSuppressionProblems(
    policy,
    CHECKS.map((check) => check.id)
  );
  if (problems.length > 0) {
    throw new Error(
      `NodeClassScanner: ${annotationSuppressionIssues('annotationSuppression', problems).join('; ')} (allow, deny, or check ids)`
    );
  }
  const value = annotationSuppressionText(policy);
  if (value.length > ANNOTATION_SUPPRESSION_MAX_CHARS) {
    throw new Error(
      `NodeClassScanner: annotationSuppression takes ${value.length} characters of the Lambdas' 4 KB ` +
        `environment; keep it under ${ANNOTATION_SUPPRESSION_MAX_CHARS} (globs such as ami-*)`
    );
  }
  return value;
}

function missingValue(key: string): never {
  throw new Error(`NodeClassScanner has no value for the Lambda environment variable ${key}`);
}
