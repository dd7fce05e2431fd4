// One execution role per function, each with the policy generated from that function's declared
// actions, plus the topic key for the functions that publish to the encrypted topic.
import { Aws, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import {
  type CfnRole,
  ManagedPolicy,
  Policy,
  PolicyStatement,
  Role,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import type { Key } from 'aws-cdk-lib/aws-kms';
import type { Topic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { HANDLER_ACTIONS } from '../../lambda/adapters/aws/declared-actions.js';
import { RATE_BUDGET_PK } from '../../lambda/adapters/aws/table-rate-budget.js';
import type { HandlerName } from '../../lambda/shared/config.js';
import { HANDLER_METADATA_KEY, pascal, ROLE_CONSTRUCT_IDS } from '../handler-roles.js';
import { scannerPolicyStatements, wildcardReasons } from '../permissions.js';
import { TOPIC_KEY_PUBLISH_ACTIONS } from './alerts.js';

export interface RoleResources {
  readonly topic: Topic;
  readonly topicKey: Key;
  readonly table: Table;
  readonly scanQueue: Queue;
  readonly dryRunRoleArn?: string | undefined;
  /** Custom SSM parameter path prefixes the role may read, beyond /aws/service/. */
  readonly ssmParameterPrefixes?: readonly string[];
  /** The securityHub setting: grants the Security Hub actions the scanning functions declare. */
  readonly securityHub?: boolean;
  /** The iamBudgetTableArn setting: another deployment's table whose IAM budget is shared. */
  readonly iamBudgetTableArn?: string | undefined;
}

/**
 * The budget actions on another deployment's table, its `BUDGET` items only: sharing a budget
 * must not let this deployment read or change that deployment's findings.
 */
function sharedBudgetStatement(
  registry: (typeof HANDLER_ACTIONS)[HandlerName],
  tableArn: string | undefined
): PolicyStatement[] {
  const actions = 'iamBudget' in registry ? registry.iamBudget : undefined;
  if (tableArn === undefined || actions === undefined) return [];
  return [
    new PolicyStatement({
      actions: [...actions],
      resources: [tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [RATE_BUDGET_PK] } },
    }),
  ];
}

const DESCRIPTIONS: Readonly<Record<HandlerName, string>> = {
  dispatch: 'nodeclass-scanner dispatch: list clusters, enqueue scans',
  'scan-cluster': 'nodeclass-scanner scan-cluster: read-only scanning, its table and topic',
  'ami-event': 'nodeclass-scanner ami-event: read-only scanning, its table and topic',
  'iam-event': 'nodeclass-scanner iam-event: read-only scanning, its table and topic',
};

/** Whether the function's declared actions publish to the findings topic. */
function publishes(handler: HandlerName): boolean {
  return Object.values(HANDLER_ACTIONS[handler]).flat().includes('sns:Publish');
}

export function createHandlerRole(
  scope: Construct,
  handler: HandlerName,
  resources: RoleResources,
  options: { readonly inVpc: boolean }
): Role {
  const role = new Role(scope, ROLE_CONSTRUCT_IDS[handler], {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: DESCRIPTIONS[handler],
  });
  (role.node.defaultChild as CfnRole).addMetadata(HANDLER_METADATA_KEY, handler);
  const registry = HANDLER_ACTIONS[handler];
  const arns = {
    partition: Aws.PARTITION,
    account: Aws.ACCOUNT_ID,
    topicArn: resources.topic.topicArn,
    tableArn: resources.table.tableArn,
    queueArn: resources.scanQueue.queueArn,
    dryRunRoleArn: resources.dryRunRoleArn,
    ssmParameterPrefixes: resources.ssmParameterPrefixes ?? [],
    securityHub: resources.securityHub === true,
  };
  const statements = [
    ...scannerPolicyStatements(registry, arns),
    ...sharedBudgetStatement(registry, resources.iamBudgetTableArn),
  ];
  if (statements.length > 0) {
    const policy = new Policy(scope, `${pascal(handler)}Policy`, { statements });
    policy.attachToRole(role);
    // The same resources as cdk-nag prints them: pseudo parameters and attributes as <…>.
    const nagScope = {
      partition: '<AWS::Partition>',
      account: '<AWS::AccountId>',
      topicArn: `<${logicalId(resources.topic)}>`,
      tableArn: `<${logicalId(resources.table)}.Arn>`,
      queueArn: `<${logicalId(resources.scanQueue)}.Arn>`,
      dryRunRoleArn: resources.dryRunRoleArn,
      ssmParameterPrefixes: resources.ssmParameterPrefixes ?? [],
      securityHub: resources.securityHub === true,
      region: '<AWS::Region>',
    };
    for (const { resource, reason } of wildcardReasons(registry, nagScope)) {
      Validations.of(policy).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${resource}]`,
        reason,
      });
    }
  }
  if (publishes(handler)) {
    // Publishing to an SSE topic encrypts with its key (same stack: an identity-policy grant).
    resources.topicKey.grant(role, ...TOPIC_KEY_PUBLISH_ACTIONS);
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
      reason:
        'SNS encrypts each published message with a data key of the topic key (GenerateDataKey, GenerateDataKeyWithoutPlaintext); only that key',
    });
  }
  if (options.inVpc) {
    // Lambda creates its VPC network interfaces with the execution role: AWS's policy for exactly that.
    role.addManagedPolicy(
      ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole')
    );
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]',
      reason:
        'Only with a VPC configured: Lambda needs these ENI permissions to attach the function to the VPC',
    });
  }
  return role;
}

function logicalId(construct: Construct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}
