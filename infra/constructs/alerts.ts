// The findings topic: encrypted with a customer key, TLS only, open to CloudWatch alarms, and its
// email and Slack subscriptions. Created in the scanner's own scope so logical ids never move.
import { Aws, Duration, RemovalPolicy, Stack, Tags } from 'aws-cdk-lib';
import { SlackChannelConfiguration } from 'aws-cdk-lib/aws-chatbot';
import { ManagedPolicy, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { SubscriptionFilter, Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  type ClusterSettingsMap,
  clusterAlertMinimums,
} from '../../lambda/core/cluster-settings.js';
import { isAtOrAbove, SEVERITIES, type Severity } from '../../lambda/core/model.js';
import { FINDINGS_TOPIC_TAG } from '../../lambda/shared/telemetry.js';

export interface SlackChannel {
  /** AWS Chatbot workspace id (configure the workspace once in the Chatbot console). */
  readonly workspaceId: string;
  readonly channelId: string;
}

export interface AlertProps {
  readonly alertEmails?: readonly string[] | undefined;
  readonly alertMinSeverity?: Severity | undefined;
  readonly slack?: SlackChannel | undefined;
  /** Clusters with their own `alertMinSeverity` get their own branch of the email filter. */
  readonly clusterSettings?: ClusterSettingsMap | undefined;
}

/** Severities an email subscriber with this minimum receives, most severe first. */
export function severitiesAtOrAbove(minimum: Severity): Severity[] {
  return SEVERITIES.filter((severity) => isAtOrAbove(severity, minimum));
}

/** SNS's limit on a filter policy's combinations of values. */
export const FILTER_POLICY_MAX_COMBINATIONS = 150;

type FilterValue = string | Readonly<Record<string, unknown>>;
type FilterBranch = Readonly<Record<string, readonly FilterValue[]>>;
/** A filter policy on message attributes: one branch, or `$or` of several. */
export type EmailFilterPolicy = FilterBranch | { readonly $or: readonly FilterBranch[] };

/**
 * The email subscriptions' filter policy over the message attributes every finding message
 * carries (`severity`, `cluster`: lambda/core/notify/message.ts). Alarm notifications carry no
 * `severity` and always pass. Without per-cluster minimums it is the single `severity` list;
 * with them, one `$or` branch per minimum (its clusters), one for every other cluster at the
 * global minimum, and one for messages without a cluster. Filtering in SNS rather than in the
 * Lambda keeps one published message per change for every subscriber (Slack gets them all) and
 * the claim-then-publish bookkeeping unchanged.
 */
export function emailFilterPolicy(
  globalMinimum: Severity,
  clusterMinimums: ReadonlyMap<string, Severity>
): EmailFilterPolicy {
  const alarms = { severity: [{ exists: false }] };
  if (clusterMinimums.size === 0) {
    return { severity: [...severitiesAtOrAbove(globalMinimum), { exists: false }] };
  }
  const clustersByMinimum = new Map<Severity, string[]>();
  for (const [cluster, minimum] of clusterMinimums) {
    clustersByMinimum.set(minimum, [...(clustersByMinimum.get(minimum) ?? []), cluster]);
  }
  const global = severitiesAtOrAbove(globalMinimum);
  return {
    $or: [
      alarms,
      ...[...clustersByMinimum].map(([minimum, clusters]) => ({
        cluster: clusters,
        severity: severitiesAtOrAbove(minimum),
      })),
      { cluster: [{ 'anything-but': [...clusterMinimums.keys()] }], severity: global },
      { cluster: [{ exists: false }], severity: global },
    ],
  };
}

/** Combinations of values, as SNS counts them: per branch the product of its lists, summed. */
export function filterPolicyCombinations(policy: EmailFilterPolicy): number {
  const branches = '$or' in policy ? (policy.$or as readonly FilterBranch[]) : [policy];
  return branches.reduce(
    (sum, branch) =>
      sum + Object.values(branch).reduce((product, values) => product * values.length, 1),
    0
  );
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
  // `nodeclass-scan notify-test --stack NAME` finds the topic by this tag.
  Tags.of(topic).add(FINDINGS_TOPIC_TAG, Aws.STACK_NAME);
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
    const policy = emailFilterPolicy(
      props.alertMinSeverity ?? 'high',
      clusterAlertMinimums(props.clusterSettings ?? {})
    );
    const combinations = filterPolicyCombinations(policy);
    if (combinations > FILTER_POLICY_MAX_COMBINATIONS) {
      throw new Error(
        `NodeClassScanner: the email filter policy has ${combinations} combinations of values ` +
          `(SNS allows ${FILTER_POLICY_MAX_COMBINATIONS}); give fewer clusters their own alertMinSeverity`
      );
    }
    // CDK renders each key's conditions as given, so `$or` takes its branches as conditions.
    const filterPolicy = Object.fromEntries(
      Object.entries(policy).map(([key, conditions]) => [
        key,
        new SubscriptionFilter([...(conditions as readonly unknown[])]),
      ])
    );
    for (const email of emails) {
      topic.addSubscription(
        new EmailSubscription(email, { filterPolicy, deadLetterQueue: deliveryFailures })
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
