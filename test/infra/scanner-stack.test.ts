import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { handlerResources } from '../../infra/handler-roles.js';
import { SCANNING_HANDLERS } from '../../lambda/adapters/aws/declared-actions.js';
import { SCANNER_KUBERNETES_GROUP } from '../../lambda/core/scanner-access.js';
import { CONFIG_ENV_KEYS, HANDLER_ENV_KEYS, HANDLER_NAMES } from '../../lambda/shared/config.js';
import { SERVICE_NAME, TABLE_SCHEMA } from '../../lambda/shared/telemetry.js';
import { buildApp, FULL_CONTEXT, logicalIdOf, resourcesOf } from './support.js';

const shipped = buildApp();
const full = buildApp(FULL_CONTEXT);

function functionsOf(template = shipped.template) {
  return Object.entries(resourcesOf(template, 'AWS::Lambda::Function')).map(([id, resource]) => ({
    id,
    properties: resource.Properties as {
      Runtime: string;
      Architectures: string[];
      MemorySize: number;
      Timeout: number;
      Environment: { Variables: Record<string, unknown> };
      ReservedConcurrentExecutions?: number;
      LoggingConfig: { LogGroup: { Ref: string } };
      VpcConfig?: unknown;
    },
  }));
}

describe('ScannerStack: Lambdas', () => {
  it('creates the four handlers on the latest Node LTS, arm64, with explicit memory and timeout', () => {
    // Act
    const functions = functionsOf();

    // Assess
    expect(functions.map(({ id }) => id.replace(/Function\w+$/, '')).sort()).toEqual([
      'ScannerAmiEvent',
      'ScannerDispatch',
      'ScannerIamEvent',
      'ScannerScanCluster',
    ]);
    for (const { properties } of functions) {
      expect(properties.Runtime).toBe('nodejs24.x');
      expect(properties.Architectures).toEqual(['arm64']);
      expect(properties.MemorySize).toBeGreaterThanOrEqual(256);
      expect(properties.Timeout).toBeGreaterThan(0);
      // Source maps ship in the asset but are not enabled at start (cold start).
      expect(properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
    }
  });

  it('gives each function exactly the environment lambda/shared/config.ts reads for it', () => {
    // Prepare
    const runtimeKeys = ['NODE_OPTIONS', 'POWERTOOLS_SERVICE_NAME', 'POWERTOOLS_METRICS_NAMESPACE'];
    const requiredAnywhere = new Set(Object.values(HANDLER_ENV_KEYS).flat());
    const optional = CONFIG_ENV_KEYS.filter((key) => !requiredAnywhere.has(key));

    for (const handler of HANDLER_NAMES) {
      // Act
      const pascal = handler.replace(/(^|-)([a-z])/g, (_, _d: string, c: string) =>
        c.toUpperCase()
      );
      const fn = functionsOf().find(({ id }) => id.startsWith(`Scanner${pascal}Function`));
      const keys = Object.keys(fn?.properties.Environment.Variables ?? {}).filter(
        (key) => !runtimeKeys.includes(key)
      );

      // Assess: AWS_REGION is reserved; Lambda sets it.
      const expected = [...HANDLER_ENV_KEYS[handler], ...optional].filter(
        (key) => key !== 'AWS_REGION'
      );
      expect(keys.sort(), handler).toEqual([...new Set(expected)].sort());
    }
  });

  it('passes the configured clusters and intervals through', () => {
    // Act
    const dispatch = functionsOf(full.template).find(({ id }) => id.startsWith('ScannerDispatch'));

    // Assess
    expect(dispatch?.properties.Environment.Variables).toMatchObject({
      CLUSTERS: 'prod,staging',
      REMINDER_INTERVAL_HOURS: '24',
      RESOLVED_TTL_DAYS: '30',
      DIGEST: 'on-change',
      ALERT_BATCH_THRESHOLD: '5',
    });
  });

  it('writes each function to its own log group with the configured retention', () => {
    // Act
    const groups = resourcesOf(full.template, 'AWS::Logs::LogGroup');

    // Assess
    expect(Object.keys(groups)).toHaveLength(4);
    for (const { properties } of functionsOf(full.template)) {
      expect(groups[properties.LoggingConfig.LogGroup.Ref]?.Properties?.RetentionInDays).toBe(90);
    }
  });

  it('bounds concurrent scans with the queue maximum concurrency, reserving none by default', () => {
    // Prepare
    const { template } = shipped;
    const queueId = logicalIdOf(template, 'AWS::SQS::Queue', 'ScanQueue');
    const dlqId = logicalIdOf(template, 'AWS::SQS::Queue', 'ScanDeadLetters');

    // Assess: Lambda keeps 10 executions unreserved, so a default reservation fails small accounts.
    for (const { properties } of functionsOf()) {
      expect(properties.ReservedConcurrentExecutions).toBeUndefined();
    }
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 4 },
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 },
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 5400,
    });
  });

  it('reserves concurrency for the scan worker only when opted in', () => {
    // Act
    const optedIn = functionsOf(buildApp({ ...FULL_CONTEXT, reservedScanConcurrency: 6 }).template);

    // Assess
    const reserved = optedIn.filter(({ properties }) => properties.ReservedConcurrentExecutions);
    expect(reserved.map(({ id }) => id.replace(/Function\w+$/, ''))).toEqual([
      'ScannerScanCluster',
    ]);
    expect(reserved[0]?.properties.ReservedConcurrentExecutions).toBe(6);
  });

  it('tags each function with its handler name, so tools find its role and environment', () => {
    // Act
    const found = handlerResources(shipped.template.toJSON() as never);

    // Assess
    for (const handler of HANDLER_NAMES) {
      const { functionLogicalId, roleLogicalId, environment } = found[handler];
      expect(functionLogicalId).toMatch(/^Scanner[A-Za-z]+Function/);
      expect(roleLogicalId).toMatch(
        new RegExp(`^${functionLogicalId.replace(/Function.*$/, '')}Role`)
      );
      expect(environment.POWERTOOLS_SERVICE_NAME).toBe(SERVICE_NAME);
    }
    expect(new Set(Object.values(found).map(({ roleLogicalId }) => roleLogicalId)).size).toBe(4);
  });

  it('sends failed asynchronous invocations of the event-driven handlers to the event DLQ', () => {
    // Prepare
    const { template } = shipped;
    const dlqId = logicalIdOf(template, 'AWS::SQS::Queue', 'EventDeadLetters');

    // Act
    const configs = Object.values(resourcesOf(template, 'AWS::Lambda::EventInvokeConfig'));

    // Assess
    expect(configs).toHaveLength(3);
    for (const config of configs) {
      expect(config.Properties).toMatchObject({
        MaximumRetryAttempts: 2,
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [dlqId, 'Arn'] } } },
      });
    }
  });

  it('puts the scanning functions, not the dispatcher, in the configured VPC', () => {
    // Act
    const inVpc = functionsOf(full.template)
      .filter(({ properties }) => properties.VpcConfig !== undefined)
      .map(({ id }) => id.replace(/Function\w+$/, ''));

    // Assess
    expect(inVpc.sort()).toEqual(['ScannerAmiEvent', 'ScannerIamEvent', 'ScannerScanCluster']);
    full.template.hasResourceProperties('AWS::Lambda::Function', {
      VpcConfig: {
        SubnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
      },
    });
    expect(functionsOf().every(({ properties }) => properties.VpcConfig === undefined)).toBe(true);
  });
});

describe('ScannerStack: EventBridge rules', () => {
  it('runs the dispatcher on the configured schedule, every 15 minutes by default', () => {
    shipped.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
      State: 'ENABLED',
    });
    full.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(30 minutes)',
    });
  });

  it('matches EC2 AMI State Change events exactly', () => {
    shipped.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.ec2'],
        'detail-type': ['EC2 AMI State Change'],
        detail: { State: ['available', 'failed', 'deregistered', 'disabled'] },
      },
    });
  });

  it('matches successful IAM role and instance-profile changes delivered through CloudTrail', () => {
    shipped.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.iam'],
        'detail-type': ['AWS API Call via CloudTrail'],
        detail: {
          eventSource: ['iam.amazonaws.com'],
          eventName: [
            'PutRolePolicy',
            'DeleteRolePolicy',
            'AttachRolePolicy',
            'DetachRolePolicy',
            'CreatePolicyVersion',
            'SetDefaultPolicyVersion',
            'DeletePolicyVersion',
            'PutRolePermissionsBoundary',
            'DeleteRolePermissionsBoundary',
            'UpdateAssumeRolePolicy',
            'AddRoleToInstanceProfile',
            'RemoveRoleFromInstanceProfile',
            'DeleteInstanceProfile',
            'DeleteRole',
          ],
          errorCode: [{ exists: false }],
        },
      },
    });
  });

  it('targets each rule at its handler with a DLQ and bounded retries', () => {
    // Prepare
    const { template } = shipped;
    const dlqId = logicalIdOf(template, 'AWS::SQS::Queue', 'EventDeadLetters');

    // Act
    const rules = Object.values(resourcesOf(template, 'AWS::Events::Rule'));

    // Assess
    expect(rules).toHaveLength(3);
    for (const rule of rules) {
      expect(rule.Properties?.Targets).toEqual([
        expect.objectContaining({
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [dlqId, 'Arn'] } },
          RetryPolicy: { MaximumEventAgeInSeconds: 7200, MaximumRetryAttempts: 2 },
        }),
      ]);
    }
  });
});

describe('ScannerStack: alerts', () => {
  it('encrypts the findings topic with a rotating customer key and requires TLS to publish', () => {
    // Prepare
    const { template } = shipped;
    const keyId = logicalIdOf(template, 'AWS::KMS::Key', 'FindingsKey');

    // Assess
    template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
    });
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('lets CloudWatch, EventBridge and AWS Chatbot use the topic key', () => {
    shipped.template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: {
              Service: [
                'cloudwatch.amazonaws.com',
                'events.amazonaws.com',
                'chatbot.amazonaws.com',
              ],
            },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
  });

  it('subscribes each email with a filter on severities at or above the minimum, plus alarms', () => {
    // Act
    const subscriptions = Object.values(resourcesOf(full.template, 'AWS::SNS::Subscription'));

    // Assess
    expect(subscriptions.map((s) => s.Properties?.Endpoint).sort()).toEqual([
      'oncall@example.com',
      'platform@example.com',
    ]);
    for (const subscription of subscriptions) {
      expect(subscription.Properties).toMatchObject({
        Protocol: 'email',
        FilterPolicy: { severity: ['critical', 'high', 'medium', { exists: false }] },
        RedrivePolicy: { deadLetterTargetArn: expect.anything() },
      });
    }
    expect(resourcesOf(shipped.template, 'AWS::SNS::Subscription')).toEqual({});
  });

  it('configures the Slack channel through AWS Chatbot only when both ids are given', () => {
    full.template.hasResourceProperties('AWS::Chatbot::SlackChannelConfiguration', {
      SlackWorkspaceId: 'T0123ABCD',
      SlackChannelId: 'C0123ABCD',
      SnsTopicArns: [{ Ref: logicalIdOf(full.template, 'AWS::SNS::Topic', 'Findings') }],
    });
    shipped.template.resourceCountIs('AWS::Chatbot::SlackChannelConfiguration', 0);
  });
});

describe('ScannerStack: state, EKS access', () => {
  it('keeps state in an encrypted table with point-in-time recovery and TTL', () => {
    shipped.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      Properties: {
        KeySchema: [
          { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' },
          { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
        SSESpecification: { SSEEnabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.ttlAttribute, Enabled: true },
      },
    });
  });

  it('creates an access entry per cluster for each role that reads clusters, in the read-only group', () => {
    // Prepare
    const roles = handlerResources(full.template.toJSON() as never);
    const scanningRoles = SCANNING_HANDLERS.map((handler) => ({
      'Fn::GetAtt': [roles[handler].roleLogicalId, 'Arn'],
    }));

    // Act
    const entries = Object.values(resourcesOf(full.template, 'AWS::EKS::AccessEntry'));

    // Assess
    for (const cluster of ['prod', 'staging']) {
      const principals = entries
        .filter((entry) => entry.Properties?.ClusterName === cluster)
        .map((entry) => entry.Properties?.PrincipalArn);
      expect(principals).toHaveLength(scanningRoles.length);
      expect(principals).toEqual(expect.arrayContaining(scanningRoles));
    }
    for (const entry of entries) {
      expect(entry.Properties).toEqual({
        ClusterName: expect.any(String),
        PrincipalArn: expect.anything(),
        Type: 'STANDARD',
        KubernetesGroups: [SCANNER_KUBERNETES_GROUP],
      });
    }
    shipped.template.resourceCountIs('AWS::EKS::AccessEntry', 0);
  });

  it('associates AmazonEKSAdminViewPolicy only when explicitly opted in', () => {
    // Act
    const optedIn = buildApp({ ...FULL_CONTEXT, eksAdminViewPolicy: true });

    // Assess
    optedIn.template.hasResourceProperties('AWS::EKS::AccessEntry', {
      AccessPolicies: [
        {
          PolicyArn: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':eks::aws:cluster-access-policy/AmazonEKSAdminViewPolicy',
              ],
            ],
          },
          AccessScope: { Type: 'cluster' },
        },
      ],
    });
    expect(JSON.stringify(full.template.toJSON())).not.toContain('AmazonEKSAdminViewPolicy');
  });
});

describe('ScannerStack: dashboard and alarms', () => {
  it('draws findings, scan duration, source errors, API calls and DLQ depth', () => {
    // Act
    const [dashboard] = Object.values(resourcesOf(shipped.template, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard?.Properties?.DashboardBody);

    // Assess
    for (const expected of [
      // metricsDetail account (the shipped default): one series per severity, no Cluster dimension.
      'Open findings by severity (worst cluster)',
      "SEARCH('{NodeClassScanner,Severity,service} MetricName=",
      'Failing NodeClasses and NodePools',
      'SELECT MAX(ScanDuration) FROM NodeClassScanner',
      'SUM(SourceErrors)',
      'SUM(AwsApiCalls)',
      'ClustersScanned',
      'SUM(NodeClassesScanned)',
      'SUM(EventsIgnored)',
      'SUM(ScanFailures)',
      'SUM(NotificationsSent)',
      'Dead-letter queue depth',
      'ApproximateNumberOfMessagesVisible',
      'FROM NodeClassScanner',
    ]) {
      expect(body).toContain(expected);
    }
  });

  it('alarms on the email delivery DLQ too when emails are configured', () => {
    expect(
      Object.keys(resourcesOf(full.template, 'AWS::CloudWatch::Alarm')).filter((id) =>
        id.includes('NotEmpty')
      ).length
    ).toBe(3);
  });

  it('alarms on scan errors, missing scans, non-empty DLQs and critical findings, notifying the topic', () => {
    // Prepare
    const topic = { Ref: logicalIdOf(shipped.template, 'AWS::SNS::Topic', 'Findings') };

    // Act
    const alarms = resourcesOf(shipped.template, 'AWS::CloudWatch::Alarm');
    const byName = (fragment: string) =>
      Object.entries(alarms).find(([id]) => id.includes(fragment))?.[1].Properties;

    // Assess
    expect(Object.keys(alarms)).toHaveLength(7);
    for (const alarm of Object.values(alarms)) {
      expect(alarm.Properties).toMatchObject({ AlarmActions: [topic], OKActions: [topic] });
    }
    expect(byName('ScanErrors')).toMatchObject({
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
      Metrics: expect.arrayContaining([
        expect.objectContaining({
          // A function that did not run adds 0 instead of making the sum missing.
          Expression: 'FILL(e0, 0) + FILL(e1, 0) + FILL(e2, 0) + FILL(e3, 0)',
        }),
      ]),
    });
    expect(byName('NoSuccessfulScan')).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 2,
      TreatMissingData: 'breaching',
      Metrics: [
        expect.objectContaining({
          MetricStat: {
            Metric: {
              Namespace: 'NodeClassScanner',
              MetricName: 'ClustersScanned',
              // Powertools' default dimension: the only one ClustersScanned carries.
              Dimensions: [{ Name: 'service', Value: SERVICE_NAME }],
            },
            Period: 900,
            Stat: 'Sum',
          },
        }),
      ],
    });
    expect(byName('ScanFailures')).toMatchObject({
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      TreatMissingData: 'notBreaching',
      Metrics: [
        expect.objectContaining({ Expression: 'SELECT SUM(ScanFailures) FROM NodeClassScanner' }),
      ],
    });
    for (const dlq of ['ScanDeadLetters', 'EventDeadLetters']) {
      const alarm = byName(`${dlq}NotEmpty`);
      expect(alarm).toMatchObject({ ComparisonOperator: 'GreaterThanThreshold', Threshold: 0 });
      expect(JSON.stringify(alarm)).toContain('ApproximateNumberOfMessagesVisible');
      expect(JSON.stringify(alarm)).toContain(
        logicalIdOf(shipped.template, 'AWS::SQS::Queue', dlq)
      );
    }
    expect(byName('CriticalFinding')).toMatchObject({
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      Metrics: [
        expect.objectContaining({
          Expression: "SELECT MAX(OpenFindings) FROM NodeClassScanner WHERE Severity = 'critical'",
        }),
      ],
    });
    // A persistent fault pages, one blip does not: two breaching periods of two.
    expect(byName('SourceErrors')).toMatchObject({
      EvaluationPeriods: 2,
      DatapointsToAlarm: 2,
      AlarmDescription: expect.stringContaining('two consecutive periods'),
      Metrics: [
        expect.objectContaining({ Expression: 'SELECT SUM(SourceErrors) FROM NodeClassScanner' }),
      ],
    });
  });
});
