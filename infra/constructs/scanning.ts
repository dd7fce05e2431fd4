// The functions and their wiring: scan queue, one role per function, schedule and event rules,
// and EKS access entries for the roles that read clusters. Created in the scanner's own scope so
// logical ids never move.
import { Aws, Duration, Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import {
  type ISecurityGroup,
  type IVpc,
  SecurityGroup,
  type SubnetSelection,
} from 'aws-cdk-lib/aws-ec2';
import { CfnAccessEntry } from 'aws-cdk-lib/aws-eks';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Role } from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import { SCANNER_KUBERNETES_GROUP } from '../../lambda/core/scanner-access.js';
import { HANDLER_NAMES, type HandlerName } from '../../lambda/shared/config.js';
import { AMI_STATE_CHANGE_PATTERN, IAM_CHANGE_PATTERN } from '../event-patterns.js';
import { FUNCTION_CONSTRUCT_IDS, HANDLER_METADATA_KEY } from '../handler-roles.js';
import { createHandlerRole } from './roles.js';
import {
  lambdaBundleDirectories,
  lambdaBundlesDirectoryOf,
  ScannerFunction,
  type ScannerFunctionProps,
} from './scanner-function.js';

export interface ScanningProps {
  readonly clusters: readonly string[];
  readonly schedule: Duration;
  readonly environment: (handler: HandlerName) => Record<string, string>;
  readonly logRetention: RetentionDays;
  readonly scanConcurrency: number;
  readonly reservedScanConcurrency?: number | undefined;
  readonly dryRunRoleArn?: string | undefined;
  /** Grant the scanning roles the Security Hub import and resolve actions. */
  readonly securityHub?: boolean | undefined;
  /** Custom SSM parameter prefixes the scanning roles may read (validated by the caller). */
  readonly ssmParameterPrefixes: readonly string[];
  /** Another deployment's state table whose IAM budget this one shares (validated by the caller). */
  readonly iamBudgetTableArn?: string | undefined;
  readonly vpc?: IVpc | undefined;
  readonly vpcSubnets?: SubnetSelection | undefined;
  readonly accessEntries: boolean;
  readonly eksAdminViewPolicy: boolean;
  /** Directory of the prebuilt bundles (`<handler>/index.mjs`). @default see NodeClassScanner */
  readonly lambdaBundlesDirectory?: string | undefined;
}

export interface ScanningResources {
  readonly topic: Topic;
  readonly topicKey: Key;
  readonly table: Table;
  readonly scanQueue: Queue;
  readonly eventDeadLetterQueue: Queue;
}

export interface Scanning {
  readonly roles: Readonly<Record<HandlerName, Role>>;
  readonly functions: Readonly<Record<HandlerName, ScannerFunction>>;
}

// IAM calls share the deployment's budget (iamCallsPerSecond, default 3/s, table-rate-budget.ts);
// a scan needs well under one per NodeClass: 15 minutes covers clusters of over 1,000 NodeClasses
// even with several scans sharing the budget.
const SCAN_TIMEOUT = Duration.minutes(15);

export function createScanQueue(scope: Construct, deadLetterQueue: Queue): Queue {
  return new Queue(scope, 'ScanQueue', {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    // AWS guidance for Lambda consumers: at least six times the function timeout.
    visibilityTimeout: Duration.minutes(SCAN_TIMEOUT.toMinutes() * 6),
    deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: 3 },
  });
}

type FunctionOptions = Pick<
  ScannerFunctionProps,
  'description' | 'memorySize' | 'timeout' | 'reservedConcurrentExecutions' | 'onFailure'
>;

export function createScanning(
  scope: Construct,
  props: ScanningProps,
  resources: ScanningResources
): Scanning {
  const inVpc = (handler: HandlerName) =>
    props.vpc !== undefined && (SCANNING_HANDLERS as readonly string[]).includes(handler);
  const roles = Object.fromEntries(
    HANDLER_NAMES.map((handler) => [
      handler,
      createHandlerRole(
        scope,
        handler,
        {
          ...resources,
          dryRunRoleArn: props.dryRunRoleArn,
          ssmParameterPrefixes: props.ssmParameterPrefixes,
          iamBudgetTableArn: props.iamBudgetTableArn,
          securityHub: props.securityHub === true,
        },
        { inVpc: inVpc(handler) }
      ),
    ])
  ) as Record<HandlerName, Role>;

  const vpcProps = networking(scope, props.vpc, props.vpcSubnets);
  const onFailure = new SqsDestination(resources.eventDeadLetterQueue);
  const bundles = lambdaBundleDirectories(
    lambdaBundlesDirectoryOf(scope, props.lambdaBundlesDirectory)
  );
  const options: Record<HandlerName, FunctionOptions> = {
    dispatch: {
      description: 'nodeclass-scanner: enqueue one scan per target cluster',
      memorySize: 256,
      timeout: Duration.minutes(1),
      onFailure,
    },
    'scan-cluster': {
      description: 'nodeclass-scanner: scan one cluster (SQS worker)',
      memorySize: 1024,
      timeout: SCAN_TIMEOUT,
      // Off by default: Lambda keeps 10 executions unreserved, so small accounts cannot reserve.
      reservedConcurrentExecutions: props.reservedScanConcurrency,
    },
    // A controller-role change re-evaluates every NodeClass of its cluster.
    'ami-event': {
      description: 'nodeclass-scanner: re-evaluate NodeClasses an AMI change affects',
      timeout: SCAN_TIMEOUT,
      onFailure,
    },
    'iam-event': {
      description: 'nodeclass-scanner: re-evaluate NodeClasses an IAM change affects',
      timeout: SCAN_TIMEOUT,
      onFailure,
    },
  };
  const functions = Object.fromEntries(
    HANDLER_NAMES.map((handler) => {
      const fn = new ScannerFunction(scope, FUNCTION_CONSTRUCT_IDS[handler], {
        bundleDirectory: bundles[handler],
        role: roles[handler],
        environment: props.environment(handler),
        logRetention: props.logRetention,
        ...options[handler],
        ...(inVpc(handler) ? { vpcProps } : {}),
      });
      (fn.function.node.defaultChild as CfnFunction).addMetadata(HANDLER_METADATA_KEY, handler);
      fn.logGroup.grantWrite(roles[handler]);
      return [handler, fn];
    })
  ) as Record<HandlerName, ScannerFunction>;

  // The event source mapping bounds concurrent scans (EC2/IAM rate limits shared with Karpenter).
  functions['scan-cluster'].function.addEventSource(
    new SqsEventSource(resources.scanQueue, {
      batchSize: 1,
      reportBatchItemFailures: true,
      maxConcurrency: props.scanConcurrency,
    })
  );
  createRules(scope, props.schedule, functions, resources.eventDeadLetterQueue);
  if (props.accessEntries) createAccessEntries(scope, props, roles);
  return { roles, functions };
}

function networking(scope: Construct, vpc: IVpc | undefined, vpcSubnets?: SubnetSelection) {
  if (vpc === undefined) return undefined;
  const securityGroup: ISecurityGroup = new SecurityGroup(scope, 'ScannerSecurityGroup', {
    vpc,
    description: 'nodeclass-scanner Lambdas: egress to EKS API endpoints and AWS APIs only',
    allowAllOutbound: true,
  });
  return {
    vpc,
    ...(vpcSubnets === undefined ? {} : { vpcSubnets }),
    securityGroups: [securityGroup],
  };
}

function createRules(
  scope: Construct,
  schedule: Duration,
  functions: Record<HandlerName, ScannerFunction>,
  deadLetterQueue: Queue
): void {
  const target = (handler: HandlerName) =>
    new LambdaFunction(functions[handler].function, {
      deadLetterQueue,
      retryAttempts: 2,
      maxEventAge: Duration.hours(2),
    });
  new Rule(scope, 'ScheduleRule', {
    description: 'nodeclass-scanner: periodic full scan',
    schedule: Schedule.rate(schedule),
    targets: [target('dispatch')],
  });
  // Also receives the AMI events AmiEventForwarder forwards from the other regions it scans.
  new Rule(scope, 'AmiStateChangeRule', {
    description: 'nodeclass-scanner: AMI state changes in this account',
    eventPattern: AMI_STATE_CHANGE_PATTERN,
    targets: [target('ami-event')],
  });
  // IAM events are delivered in us-east-1 and forwarded here by IamEventForwarder.
  new Rule(scope, 'IamChangeRule', {
    description: 'nodeclass-scanner: IAM changes to roles and instance profiles (via CloudTrail)',
    eventPattern: IAM_CHANGE_PATTERN,
    targets: [target('iam-event')],
  });
}

/** Every role that reads the Kubernetes API needs an access entry in each cluster. */
function createAccessEntries(
  scope: Construct,
  props: ScanningProps,
  roles: Record<HandlerName, Role>
): void {
  const accessPolicies = props.eksAdminViewPolicy
    ? [
        {
          policyArn: `arn:${Aws.PARTITION}:eks::aws:cluster-access-policy/AmazonEKSAdminViewPolicy`,
          accessScope: { type: 'cluster' },
        },
      ]
    : undefined;
  const region = Stack.of(scope).region;
  for (const entry of props.clusters) {
    const [cluster = entry, clusterRegion = region] = entry.split('@');
    if (clusterRegion !== region) {
      throw new Error(
        `NodeClassScanner: an access entry for ${entry} must be created in ${clusterRegion}, not ${region}`
      );
    }
    for (const handler of SCANNING_HANDLERS) {
      new CfnAccessEntry(scope, `AccessEntry-${cluster}-${FUNCTION_CONSTRUCT_IDS[handler]}`, {
        clusterName: cluster,
        principalArn: roles[handler].roleArn,
        type: 'STANDARD',
        kubernetesGroups: [SCANNER_KUBERNETES_GROUP],
        ...(accessPolicies === undefined ? {} : { accessPolicies }),
      });
    }
  }
}
