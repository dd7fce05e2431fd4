// What the deployment-simulation scenario files share: the example events, the alerts a scenario
// observed, and the schedule's path for one cluster.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './deployment-context.js';
import type { PublishedMessage, QueuedMessage } from './emulator/aws.js';
import type { Invocation } from './lambda-runner.js';
import type { Simulation } from './simulation.js';

export const event = (name: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'examples/events', `${name}.json`), 'utf8'));

interface Alert {
  readonly change: string;
  readonly cluster: string;
  readonly findingId: string;
}

/** The messages the scanner published (alarms and digests excluded). */
export function alertMessages(messages: readonly PublishedMessage[]): PublishedMessage[] {
  return messages.filter(
    (message) =>
      message.attributes.change !== 'digest' && message.publisher !== 'cloudwatch.amazonaws.com'
  );
}

/** `change cluster findingId` for every change notified (summaries expanded), sorted. */
export function alertsOf(messages: readonly PublishedMessage[]): string[] {
  return alertMessages(messages)
    .flatMap((message): Alert[] => {
      const body = JSON.parse(JSON.parse(message.message).default) as
        | {
            change: 'summary';
            omitted: number;
            changes: { change: string; findingId: string; resource: { cluster: string } }[];
          }
        | { change: string; finding: { id: string; resource: { cluster: string } } };
      if ('changes' in body) {
        expect(body.omitted).toBe(0);
        return body.changes.map((item) => ({
          change: item.change,
          cluster: item.resource.cluster,
          findingId: item.findingId,
        }));
      }
      return [
        { change: body.change, cluster: body.finding.resource.cluster, findingId: body.finding.id },
      ];
    })
    .map((alert) => `${alert.change} ${alert.cluster} ${alert.findingId}`)
    .sort();
}

/** Delivers `messages` until none fails (SQS redelivery after the visibility timeout), at most `times`. */
export async function redeliverScans(
  sim: Simulation,
  messages: readonly QueuedMessage[],
  times = 3
) {
  let pending = [...messages];
  for (let attempt = 0; attempt < times && pending.length > 0; attempt++) {
    pending = (await sim.deliverQueued(pending)).failed;
  }
  return pending;
}

/** Dispatches the schedule and returns the queued message for `cluster` (others stay unsent). */
export async function dispatchScanFor(sim: Simulation, cluster: string): Promise<QueuedMessage> {
  const dispatched = await sim.invoke('Dispatch', event('scheduled-event'));
  expect(dispatched.error).toBeUndefined();
  const messages = sim.aws.queued.splice(0);
  const message = messages.find((entry) => JSON.parse(entry.body).cluster === cluster);
  if (!message) throw new Error(`no scan request for ${cluster}`);
  return message;
}

/** Every structured log line of the invocations (Powertools: INFO on stdout, WARN and ERROR on stderr). */
export function logLinesOf(invocations: readonly Invocation[]): Record<string, unknown>[] {
  return invocations.flatMap((invocation) => [
    ...invocation.logLines,
    ...invocation.stderr.split('\n').flatMap((line): Record<string, unknown>[] => {
      try {
        const parsed: unknown = JSON.parse(line);
        return parsed !== null && typeof parsed === 'object'
          ? [parsed as Record<string, unknown>]
          : [];
      } catch {
        return [];
      }
    }),
  ]);
}
