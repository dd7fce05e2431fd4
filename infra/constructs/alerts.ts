// The findings topic: encrypted with a customer key, TLS only, open to CloudWatch alarms, and its
// email and Slack subscriptions. Created in the scanner's own scope so logical ids never move.
import { Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { SlackChannelConfiguration } from 'aws-cdk-lib/aws-chatbot';
import { ManagedPolicy, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { SubscriptionFilter, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { Severity } from '../../lambda/core/model.js';
import { severitiesAtOrAbove } from '../config.js';

export interface SlackChannel {
  /** AWS Chatbot workspace id (configure the workspace once in the Chatbot console). */
  readonly workspaceId: string;
  readonly channelId: string;
}

export interface AlertProps {
  readonly alertEmails?: readonly string[];
  readonly alertMinSeverity?: Severity;
  readonly slack?: SlackChannel;
}

/** Actions a publisher needs on the topic's key (SNS server-side encryption). */
export const TOPIC_KEY_PUBLISH_ACTIONS = ['kms:GenerateDataKey*', 'kms:Decrypt'] as const;

export function createFindingsTopic(scope: Construct): { topic: Topic; topicKey: Key } {
  const topicKey = new Key(scope, 'FindingsKey', {
    description: 'nodeclass-scanner findings topic',
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  });
  // Services that publish to (or read from) the encrypted topic need the key; SNS decrypts for
  // email/HTTPS delivery. CloudWatch alarms, EventBridge rules and AWS Chatbot per their docs.
  topicKey.addToResourcePolicy(
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
  const topic = new Topic(scope, 'Findings', {
    displayName: 'nodeclass-scanner findings',
    masterKey: topicKey,
    enforceSSL: true,
  });
  // enforceSSL writes a topic policy, which replaces the default one: alarms must be let back in.
  // The Lambdas publish through their own identity policies (same account).
  topic.addToResourcePolicy(
    new PolicyStatement({
      sid: 'AllowCloudWatchAlarmsToPublish',
      principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      // Confused-deputy guard: only alarms of this account.
      conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID } },
    })
  );
  return { topic, topicKey };
}

/** Email (filtered by severity; alarms always pass) and Slack through AWS Chatbot. */
export function subscribe(
  scope: Construct,
  topic: Topic,
  props: AlertProps,
  deadLetterQueue: (id: string) => Queue
): void {
  const emails = props.alertEmails ?? [];
  if (emails.length > 0) {
    const deliveryFailures = deadLetterQueue('EmailDeliveryDeadLetters');
    // Findings carry a `severity` attribute; alarm notifications carry none and always go out.
    const severity = new SubscriptionFilter([
      ...severitiesAtOrAbove(props.alertMinSeverity ?? 'high'),
      { exists: false },
    ]);
    for (const email of emails) {
      topic.addSubscription(
        new EmailSubscription(email, {
          filterPolicy: { severity },
          deadLetterQueue: deliveryFailures,
        })
      );
    }
  }
  if (props.slack !== undefined) {
    new SlackChannelConfiguration(scope, 'Slack', {
      slackChannelConfigurationName: `${Stack.of(scope).stackName}-findings`.slice(0, 128),
      slackWorkspaceId: props.slack.workspaceId,
      slackChannelId: props.slack.channelId,
      notificationTopics: [topic],
      // Notifications only: channel members get no more than CloudWatch read access.
      guardrailPolicies: [ManagedPolicy.fromAwsManagedPolicyName('CloudWatchReadOnlyAccess')],
    });
  }
}
