// The construct's props are checked as their cdk.json keys are (one settings table), and what it
// deploys has names scripts can use: fixed output keys, a dashboard and alarms named after the stack.
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DISABLE_ASSET_STAGING_CONTEXT } from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { parseScannerConfig } from '../../infra/config.js';
import { LAMBDA_BUNDLES_CONTEXT_KEY } from '../../infra/constructs/scanner-function.js';
import { NodeClassScanner, type NodeClassScannerProps } from '../../infra/index.js';
import { RATE_BUDGET_PK } from '../../lambda/adapters/aws/table-rate-budget.js';
import { LOG_RETENTION_DAYS } from '../../lambda/shared/settings.js';
import { FINDINGS_TOPIC_TAG } from '../../lambda/shared/telemetry.js';
import {
  buildApp,
  CDK_JSON_CONTEXT,
  SHIPPED_CDK_JSON_CONTEXT,
  STUB_LAMBDA_BUNDLES,
} from './support.js';

function scannerIn(props: NodeClassScannerProps, region?: string): NodeClassScanner {
  const app = new App({
    context: {
      [LAMBDA_BUNDLES_CONTEXT_KEY]: STUB_LAMBDA_BUNDLES,
      [DISABLE_ASSET_STAGING_CONTEXT]: true,
    },
  });
  const stack = new Stack(app, 'Consumer', region === undefined ? {} : { env: { region } });
  return new NodeClassScanner(stack, 'Scanner', props);
}

describe('NodeClassScanner props: validated as the cdk.json keys are', () => {
  it.each([
    [{ clusters: [] }, /clusters: name at least one cluster to scan .*or set discoverClusters/],
    [{ clusters: ['bad name!'] }, /clusters\[0\]: "bad name!" is not an EKS cluster name/],
    [
      { clusters: ['prod@not-a-region'] },
      /clusters\[0\]: "not-a-region" is not an AWS region name/,
    ],
    [
      { clusters: ['prod', 'prod@eu-west-1'] },
      /clusters: "prod@eu-west-1" and "prod" are the same cluster/,
    ],
    [{ clusters: ['dr@us-west-2', 'dr@us-west-2'] }, /clusters: .*are the same cluster/],
    [
      { clusters: ['prod'], alertEmails: ['ops'] },
      /alertEmails\[0\]: "ops" is not an email address/,
    ],
    [
      { clusters: ['prod'], scanConcurrency: 1000 },
      /scanConcurrency: must be an integer from 2 to 100, got 1000/,
    ],
    [
      { clusters: ['prod'], alertBatchThreshold: 0 },
      /alertBatchThreshold: must be an integer from 1 to 1000/,
    ],
    [
      { clusters: ['prod'], schedule: Duration.days(1) },
      /schedule: must be an integer from 1 to 720, got 1440/,
    ],
    [
      { clusters: ['prod'], discoveryRegions: ['eu-west'] },
      /discoveryRegions\[0\]: .*did you mean "eu-west-1"/,
    ],
    [
      { clusters: ['prod'], slack: { workspaceId: 't-lower', channelId: 'C0123ABCD' } },
      /slack\.workspaceId: "t-lower" is not a Slack workspace id/,
    ],
  ] as const)('refuses %j, naming the prop', (props, message) => {
    expect(() => scannerIn(props as NodeClassScannerProps, 'eu-west-1')).toThrow(message);
  });

  it('names every bad prop in one error', () => {
    expect(() =>
      scannerIn({ clusters: ['ok', 'bad name!'], alertEmails: ['ops'], digest: 'daily' as never })
    ).toThrow(
      /clusters\[1\]:.*\n.*alertEmails\[0\]:.*\n.*digest: must be one of on-change, always, never/
    );
  });

  it('accepts discovery instead of clusters, and a cluster of the same name in another region', () => {
    expect(() => scannerIn({ clusters: [], discoverClusters: '*' })).not.toThrow();
    expect(() => scannerIn({ clusters: ['prod', 'prod@us-west-2'] }, 'eu-west-1')).not.toThrow();
  });
});

describe('the app without a cluster', () => {
  it('ships a cdk.json that names none, so synth fails naming the setting', () => {
    expect(SHIPPED_CDK_JSON_CONTEXT.clusters).toBeUndefined();
    expect(() => parseScannerConfig(SHIPPED_CDK_JSON_CONTEXT)).toThrow(
      /context key "clusters": name at least one cluster to scan \(cdk.json "clusters", or -c clusters=prod,dr@us-west-2\), or set discoverClusters/
    );
    expect(() =>
      parseScannerConfig({ ...SHIPPED_CDK_JSON_CONTEXT, discoverClusters: '*' })
    ).not.toThrow();
  });
});

describe('deployed names scripts can use', () => {
  const { template } = buildApp(CDK_JSON_CONTEXT);

  it('gives the outputs the keys README documents', () => {
    expect(Object.keys(template.toJSON().Outputs).sort()).toEqual(
      [
        'TopicArn',
        'DispatchRoleArn',
        'ScanClusterRoleArn',
        'AmiEventRoleArn',
        'IamEventRoleArn',
        'StateTableArn',
        'DashboardName',
      ].sort()
    );
  });

  it('names the dashboard after the stack, and each alarm after the stack and itself', () => {
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: 'NodeClassScanner',
    });
    const alarmNames = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (alarm) => (alarm as { Properties: { AlarmName: string } }).Properties.AlarmName
    );
    expect(alarmNames).toContain('NodeClassScanner-ScanErrors');
    expect(alarmNames).toContain('NodeClassScanner-CriticalFinding');
    for (const name of alarmNames) expect(name).toMatch(/^NodeClassScanner-[A-Za-z]+$/);
  });

  it("tags the findings topic with its stack's name, for notify-test", () => {
    template.hasResourceProperties('AWS::SNS::Topic', {
      Tags: [{ Key: FINDINGS_TOPIC_TAG, Value: { Ref: 'AWS::StackName' } }],
    });
  });
});

describe('iamBudgetTableArn: one IAM budget for several deployments of an account', () => {
  const shared = 'arn:aws:dynamodb:us-east-1:123456789012:table/Home-StateTable0A1B2C3D';
  const budgetStatements = (scanner: NodeClassScanner) =>
    Object.values(Template.fromStack(Stack.of(scanner)).findResources('AWS::IAM::Policy')).flatMap(
      (policy) =>
        (
          policy as {
            Properties: { PolicyDocument: { Statement: { Resource: unknown }[] } };
          }
        ).Properties.PolicyDocument.Statement.filter((statement) => statement.Resource === shared)
    );

  it("grants each scanning role the budget's two actions on the shared table's BUDGET items only", () => {
    const statements = budgetStatements(
      scannerIn({ clusters: ['prod'], iamBudgetTableArn: shared }, 'eu-west-1')
    );
    expect(statements).toHaveLength(3);
    for (const statement of statements) {
      expect(statement).toMatchObject({
        Effect: 'Allow',
        Action: ['dynamodb:UpdateItem', 'dynamodb:GetItem'],
        Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [RATE_BUDGET_PK] } },
      });
    }
  });

  it('grants nothing on another table without it, and refuses a value that is not a table ARN', () => {
    expect(budgetStatements(scannerIn({ clusters: ['prod'] }, 'eu-west-1'))).toEqual([]);
    expect(() =>
      scannerIn({ clusters: ['prod'], iamBudgetTableArn: 'Home-StateTable' }, 'eu-west-1')
    ).toThrow(/iamBudgetTableArn.*DynamoDB table ARN/);
  });
});

describe('the settings table and the CDK agree', () => {
  it("lists exactly CloudWatch Logs' retention values (CDK's RetentionDays, not INFINITE)", () => {
    const cdkValues = Object.values(RetentionDays).filter(
      (days): days is number =>
        typeof days === 'number' && days > 0 && days !== RetentionDays.INFINITE
    );
    expect([...LOG_RETENTION_DAYS].sort((a, b) => a - b)).toEqual(cdkValues.sort((a, b) => a - b));
  });
});
