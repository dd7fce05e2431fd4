import { CfnOutput, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { Alarm, Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import { ssmPrefixProblem } from '../../lambda/core/ami/ssm-scope.js';
import {
  type AnnotationSuppression,
  annotationSuppressionIssues,
  annotationSuppressionProblems,
  annotationSuppressionText,
} from '../../lambda/core/annotation-policy.js';
import { CHECKS } from '../../lambda/core/checks/index.js';
import { type ClusterSettingsMap, scopedIgnoreRules } from '../../lambda/core/cluster-settings.js';
import { type IgnoreRule, ignoreRulesSchema, issuePath } from '../../lambda/core/ignore-rules.js';
import type { Severity } from '../../lambda/core/model.js';
import { SCANNER_KUBERNETES_GROUP } from '../../lambda/core/scanner-access.js';
import {
  ANNOTATION_SUPPRESSION_MAX_CHARS,
  CONFIG_ENV_KEYS,
  type EnvKey,
  HANDLER_ENV_KEYS,
  HANDLER_NAMES,
  type HandlerName,
  IGNORE_RULES_MAX_CHARS,
  SSM_PARAMETER_PREFIXES_MAX_CHARS,
} from '../../lambda/shared/config.js';
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

export type { SlackChannel } from './alerts.js';

export interface NodeClassScannerProps {
  /** EKS clusters to scan: `name` (this stack's region) or `name@region`. */
  readonly clusters: readonly string[];
  /**
   * Also scan clusters discovered on each schedule: `*` for every cluster, or tag filters
   * `key=value,key2` (any value). @default no discovery
   */
  readonly discoverClusters?: string | undefined;
  /** Regions to discover clusters in. @default this stack's region */
  readonly discoveryRegions?: readonly string[] | undefined;
  /** How often the full scan runs (the backstop for events that never fire). @default 15 minutes */
  readonly schedule?: Duration | undefined;
  /** Email addresses to alert (each confirms its subscription). @default none */
  readonly alertEmails?: readonly string[] | undefined;
  /** The least severe finding emailed. @default 'high' */
  readonly alertMinSeverity?: Severity | undefined;
  /** Slack channel through AWS Chatbot. @default none */
  readonly slack?: SlackChannel | undefined;
  /** Re-notify a finding still failing after this long. @default 24 hours */
  readonly reminderInterval?: Duration | undefined;
  /** How long a resolved finding's state is kept (DynamoDB TTL). @default 30 days */
  readonly resolvedRetention?: Duration | undefined;
  /**
   * How long a permission simulation's verdict is reused by later scans while the controller
   * role's policies and the request are unchanged (bounds changes no event shows, such as SCPs).
   * Zero: every scan simulates. @default 24 hours
   */
  readonly simulationCache?: Duration | undefined;
  /** When the per-scan digest is published. @default 'on-change' */
  readonly digest?: 'on-change' | 'always' | 'never' | undefined;
  /**
   * More changes than this in one cluster scan are sent as one summary message instead of one
   * message each (a cluster's first scan always is). @default 5
   */
  readonly alertBatchThreshold?: number | undefined;
  /** `non-production` lowers AMI-pinning findings to info. @default 'production' */
  readonly scanEnvironment?: 'production' | 'non-production' | undefined;
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
  /**
   * DryRun mode: the role the scanner assumes to dry-run EC2 launches. The scanner's own roles
   * never get EC2 mutation rights. @default DryRun mode off
   */
  readonly dryRunRoleArn?: string | undefined;
  /**
   * Also import findings into Security Hub (AWS Security Finding Format) under the account's
   * default product, and mark resolved ones RESOLVED. Security Hub must be enabled in the account
   * and region. @default false
   */
  readonly securityHub?: boolean | undefined;
  /**
   * Path prefixes (`/platform/ami/`) of the custom SSM parameters amiSelectorTerms may name. The
   * scanning roles may read public /aws/service/ parameters and these only; a term naming any
   * other is an `error` finding, and SSM is not asked. @default none
   */
  readonly ssmParameterPrefixes?: readonly string[] | undefined;
  /** VPC for clusters whose API endpoint is private (needs NAT or VPC endpoints). @default none */
  readonly vpc?: IVpc | undefined;
  /** Subnets in `vpc`. @default the VPC's private subnets */
  readonly vpcSubnets?: SubnetSelection | undefined;
  /** @default one month */
  readonly logRetention?: RetentionDays | undefined;
  /** Concurrent cluster scans: the scan queue's maximum concurrency (2–1000). @default 4 */
  readonly scanConcurrency?: number | undefined;
  /**
   * Also reserve this much concurrency for the scan worker. Lambda keeps at least 10 executions
   * of the account unreserved, so this fails in accounts with a low quota. @default none
   */
  readonly reservedScanConcurrency?: number | undefined;
  /** Create an EKS access entry for each scanning role in each named cluster. @default false */
  readonly accessEntries?: boolean | undefined;
  /**
   * Also associate `AmazonEKSAdminViewPolicy` (read of everything, Secrets included) instead of
   * relying on the narrow ClusterRole in `infra/cluster-rbac.yaml`. @default false
   */
  readonly eksAdminViewPolicy?: boolean | undefined;
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
    const schedule = props.schedule ?? Duration.minutes(15);
    const scanConcurrency = props.scanConcurrency ?? 4;
    if (scanConcurrency < 2 || scanConcurrency > 1000) {
      throw new Error('NodeClassScanner: scanConcurrency must be 2–1000 (SQS maximum concurrency)');
    }
    const metricsNamespace = props.metricsNamespace ?? METRICS_NAMESPACE;
    if (!METRICS_NAMESPACE_PATTERN.test(metricsNamespace)) {
      throw new Error(
        `NodeClassScanner: metricsNamespace "${metricsNamespace}" must be letters, digits and underscores, starting with a letter`
      );
    }

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
        clusters: props.clusters,
        schedule,
        environment: this.functionEnvironment(props),
        logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
        scanConcurrency,
        reservedScanConcurrency: props.reservedScanConcurrency,
        dryRunRoleArn: props.dryRunRoleArn,
        securityHub: props.securityHub === true,
        ssmParameterPrefixes: props.ssmParameterPrefixes ?? [],
        vpc: props.vpc,
        vpcSubnets: props.vpcSubnets,
        accessEntries: props.accessEntries === true,
        eksAdminViewPolicy: props.eksAdminViewPolicy === true,
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
    subscribe(this, this.topic, props, (queueId) => this.deadLetterQueue(queueId));
    ({ dashboard: this.dashboard, alarms: this.alarms } = createMonitoring(this, {
      schedule,
      topic: this.topic,
      functions: this.functions,
      deadLetterQueues: this.deadLetterQueues,
      metricsNamespace,
    }));

    new CfnOutput(this, 'TopicArn', { value: this.topic.topicArn });
    for (const handler of HANDLER_NAMES) {
      const scans = (SCANNING_HANDLERS as readonly string[]).includes(handler);
      new CfnOutput(this, `${ROLE_CONSTRUCT_IDS[handler]}Arn`, {
        value: this.roles[handler].roleArn,
        description: scans
          ? `${handler} role: needs an EKS access entry (kubernetesGroups: ${SCANNER_KUBERNETES_GROUP})`
          : `${handler} role`,
      });
    }
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboardName });
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
    props: NodeClassScannerProps
  ): (handler: HandlerName) => Record<string, string> {
    const clusterSettings = validClusterSettings(props);
    const ignoreRules = ignoreRulesValue([
      ...(props.ignore ?? []),
      ...scopedIgnoreRules(clusterSettings),
    ]);
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
      SIMULATION_CACHE_HOURS: String((props.simulationCache ?? Duration.hours(24)).toHours()),
      DIGEST: props.digest ?? 'on-change',
      ALERT_BATCH_THRESHOLD: String(props.alertBatchThreshold ?? 5),
      SCAN_ENVIRONMENT: props.scanEnvironment ?? 'production',
      CLUSTER_ENVIRONMENTS: clusterEnvironmentsVariable(
        clusterSettings,
        IGNORE_RULES_MAX_CHARS - ignoreRules.length
      ),
      IGNORE_RULES: ignoreRules,
      ANNOTATION_SUPPRESSION: annotationSuppressionValue(props.annotationSuppression ?? 'allow'),
      SSM_PARAMETER_PREFIXES: ssmParameterPrefixesValue(props.ssmParameterPrefixes ?? []),
      SECURITY_HUB: props.securityHub === true ? 'true' : 'false',
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

/** The SSM_PARAMETER_PREFIXES variable: the prefixes, validated, comma-separated. */
export function ssmParameterPrefixesValue(prefixes: readonly string[]): string {
  const problems = prefixes.flatMap((prefix) => ssmPrefixProblem(prefix) ?? []);
  if (problems.length > 0) {
    throw new Error(`NodeClassScanner: ssmParameterPrefixes: ${problems.join('; ')}`);
  }
  const value = prefixes.join(',');
  if (value.length > SSM_PARAMETER_PREFIXES_MAX_CHARS) {
    throw new Error(
      `NodeClassScanner: ssmParameterPrefixes take ${value.length} characters of the Lambdas' 4 KB ` +
        `environment; keep them under ${SSM_PARAMETER_PREFIXES_MAX_CHARS}`
    );
  }
  return value;
}

function missingValue(key: string): never {
  throw new Error(`NodeClassScanner has no value for the Lambda environment variable ${key}`);
}
