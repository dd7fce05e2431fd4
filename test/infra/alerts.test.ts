import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { metricQuery, serviceMetric } from '../../infra/constructs/scanner-metrics.js';
import { handlerResources } from '../../infra/handler-roles.js';
import type { MetricName } from '../../lambda/shared/telemetry.js';
import { METRIC_NAMES, METRICS_NAMESPACE } from '../../lambda/shared/telemetry.js';
import { buildApp, FULL_CONTEXT, logicalIdOf, resourcesOf } from './support.js';

const { template } = buildApp(FULL_CONTEXT);
type Statement = {
  Effect: string;
  Principal?: unknown;
  Action: string | string[];
  Resource?: unknown;
  Condition?: unknown;
};
const actions = (statement: Statement) => [statement.Action].flat();
const statementsIn = (document: unknown): Statement[] =>
  (document as { Statement?: Statement[] } | undefined)?.Statement ?? [];

function topicPolicy(): Statement[] {
  const [policy] = Object.values(resourcesOf(template, 'AWS::SNS::TopicPolicy'));
  return statementsIn(policy?.Properties?.PolicyDocument);
}

describe('findings topic: who may publish', () => {
  const topicRef = { Ref: logicalIdOf(template, 'AWS::SNS::Topic', 'Findings') };

  it('admits CloudWatch alarms of this account (the topic policy replaces the default one)', () => {
    // Act
    const cloudwatch = topicPolicy().filter(
      (statement) =>
        statement.Effect === 'Allow' &&
        JSON.stringify(statement.Principal) ===
          JSON.stringify({ Service: 'cloudwatch.amazonaws.com' })
    );

    // Assess
    expect(cloudwatch).toEqual([
      expect.objectContaining({
        Action: 'sns:Publish',
        Resource: topicRef,
        Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
      }),
    ]);
  });

  it('still denies publishing without TLS', () => {
    expect(topicPolicy()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Effect: 'Deny',
          Principal: '*',
          Action: 'sns:Publish',
          Resource: topicRef,
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ])
    );
  });

  it('lets CloudWatch encrypt with the topic key', () => {
    // Act
    const [key] = Object.values(resourcesOf(template, 'AWS::KMS::Key'));
    const statements = statementsIn(key?.Properties?.KeyPolicy);
    const cloudwatch = statements.filter(
      (statement) =>
        statement.Effect === 'Allow' &&
        JSON.stringify(statement.Principal).includes('cloudwatch.amazonaws.com')
    );

    // Assess
    expect(cloudwatch.flatMap(actions).sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey*']);
  });

  it('lets every role that may publish use the topic key, by the key ARN', () => {
    // Prepare
    const keyArn = { 'Fn::GetAtt': [logicalIdOf(template, 'AWS::KMS::Key', 'FindingsKey'), 'Arn'] };
    const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy'));

    for (const { roleLogicalId } of Object.values(handlerResources(template.toJSON() as never))) {
      // Act
      const statements = policies
        .filter((policy) => JSON.stringify(policy.Properties?.Roles).includes(`"${roleLogicalId}"`))
        .flatMap((policy) => statementsIn(policy.Properties?.PolicyDocument));
      const publishes = statements.some((statement) => actions(statement).includes('sns:Publish'));
      const keyGrants = statements.filter(
        (statement) => JSON.stringify(statement.Resource) === JSON.stringify(keyArn)
      );

      // Assess
      if (!publishes) continue;
      expect(keyGrants.flatMap(actions).sort(), roleLogicalId).toEqual([
        'kms:Decrypt',
        'kms:GenerateDataKey*',
      ]);
    }
  });
});

describe('alarms and dashboard', () => {
  const alarms = Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm'));

  it('sends every alarm and its recovery to the findings topic', () => {
    // Prepare
    const topicRef = { Ref: logicalIdOf(template, 'AWS::SNS::Topic', 'Findings') };

    // Assess
    expect(alarms.length).toBeGreaterThan(5);
    for (const alarm of alarms) {
      expect(alarm.Properties).toMatchObject({ AlarmActions: [topicRef], OKActions: [topicRef] });
    }
  });

  it('refers only to metrics the Lambdas emit (lambda/shared/telemetry.ts)', () => {
    // Act
    const text = JSON.stringify(template.toJSON());
    const queried = [...text.matchAll(/SELECT [A-Z]+\((\w+)\) FROM (\w+)/g)];
    const plain = alarms.flatMap(
      (alarm) =>
        JSON.stringify(alarm.Properties).match(
          new RegExp(`"MetricName":"(\\w+)","Namespace":"${METRICS_NAMESPACE}"`, 'g')
        ) ?? []
    );

    // Assess
    expect(queried.length).toBeGreaterThan(5);
    for (const [, name, namespace] of queried) {
      expect(namespace).toBe(METRICS_NAMESPACE);
      expect(METRIC_NAMES).toContain(name);
    }
    expect(plain).toEqual([`"MetricName":"ClustersScanned","Namespace":"${METRICS_NAMESPACE}"`]);
  });

  it('cannot build a metric the Lambdas do not emit', () => {
    const period = Duration.minutes(5);
    const unknown = 'ClusterScans' as MetricName;
    expect(() => metricQuery('SUM', unknown, { label: 'x', period })).toThrow(/not one of/);
    expect(() => serviceMetric(unknown, { label: 'x', period, statistic: 'Sum' })).toThrow(
      /not one of/
    );
  });
});
