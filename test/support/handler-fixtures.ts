// Shared set-up for handler tests: environment, example events, an in-memory plan, SNS capture.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PublishBatchCommand, SNSClient } from '@aws-sdk/client-sns';
import { mockClient } from 'aws-sdk-client-mock';
import { expect } from 'vitest';
import type { ScanPlan } from '../../lambda/app/run-scan.js';
import type { PlanFactory } from '../../lambda/app/scan-and-publish.js';
import { aNodeClassEntry } from './builders.js';

const TOPIC = 'arn:aws:sns:eu-west-1:111122223333:NodeClassScanner-Findings';

export const SERVICE_ENV = {
  AWS_REGION: 'eu-west-1',
  STATE_TABLE_NAME: 'NodeClassScanner-State',
  FINDINGS_TOPIC_ARN: TOPIC,
};

export function exampleEvent<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(
    readFileSync(join(import.meta.dirname, '../../examples/events', name), 'utf8')
  ) as T;
}

/** Scans the given objects per cluster; a cluster named in `failing` throws. */
export function objectsPlan(
  world: ReadonlyMap<string, readonly Record<string, unknown>[]>,
  failing: ReadonlySet<string> = new Set()
): PlanFactory {
  return ({ cluster }): ScanPlan => {
    if (failing.has(cluster)) throw new Error(`connect ETIMEDOUT ${cluster}`);
    return {
      objects: {
        load: async () => ({
          clusters: [{ name: cluster, partition: 'aws', region: 'eu-west-1' }],
          nodeClasses: (world.get(cluster) ?? []).map((raw) => aNodeClassEntry(raw, cluster)),
          nodePools: [],
          inputs: [],
          inputErrors: [],
        }),
      },
    };
  };
}

/**
 * The stored state of a finding resolved in an earlier scan of `cluster`: the cluster is known, so
 * its changes go out one message each (a cluster with no stored state gets one summary).
 */
export function earlierFindingItem(cluster: string): Record<string, unknown> {
  const at = '2026-10-01T00:00:00.000Z';
  return {
    pk: `CLUSTER#${cluster}`,
    sk: 'FINDING#earlier',
    type: 'finding',
    id: 'earlier',
    checkId: 'imds-v2-required',
    cluster,
    resourceKind: 'EC2NodeClass',
    resourceName: 'retired',
    status: 'resolved',
    findingStatus: 'fail',
    severity: 'high',
    message: 'IMDSv1 was allowed.',
    firstSeen: at,
    lastSeen: at,
    lastNotified: at,
    resolvedAt: at,
    revision: 2,
  };
}

export interface PublishedMessage {
  readonly subject?: string | undefined;
  readonly attributes: Record<string, string | undefined>;
  readonly bodies: { default: string; email: string; https: string };
}

/** SNS that accepts everything and remembers each entry. */
export function capturingSns() {
  const sns = mockClient(SNSClient);
  sns.on(PublishBatchCommand).callsFake((input) => ({
    Successful: (input.PublishBatchRequestEntries as { Id: string }[]).map((entry) => ({
      Id: entry.Id,
      MessageId: `msg-${entry.Id}`,
    })),
    Failed: [],
  }));
  const published = (): PublishedMessage[] =>
    sns.commandCalls(PublishBatchCommand).flatMap((call) => {
      expect(call.args[0].input.TopicArn).toBe(TOPIC);
      return (call.args[0].input.PublishBatchRequestEntries ?? []).map((entry) => ({
        subject: entry.Subject,
        attributes: Object.fromEntries(
          Object.entries(entry.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue])
        ),
        bodies: JSON.parse(entry.Message ?? '{}') as PublishedMessage['bodies'],
      }));
    });
  return { sns, published };
}
