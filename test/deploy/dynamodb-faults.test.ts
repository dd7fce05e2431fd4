// The deployed service under DynamoDB faults: the state table fails at every step of a scan in
// turn, and SQS redelivery must still deliver every alert exactly once (at least once in the one
// window where SNS accepted a publish and marking it failed). Its own file, so it runs beside the
// other scenarios (scenarios.test.ts) on its own simulated deployment. The account-wide IAM
// budget's requests (item BUDGET, their number depends on timing) are left out: a budget that
// fails paces locally instead (test/adapters/aws/table-rate-budget.test.ts).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_BUDGET_PK } from '../../lambda/adapters/aws/table-rate-budget.js';
import type { ReceivedRequest } from './emulator/aws.js';
import { alertsOf, dispatchScanFor, redeliverScans } from './scenario-support.js';
import { Simulation } from './simulation.js';
import { synthesizedAssembly } from './synthesized-assembly.js';

let sim: Simulation;

/** A request to the IAM budget's item (its key in the state table's JSON wire format). */
const budgetRequest = (request: ReceivedRequest) =>
  request.body.includes(`"pk":{"S":"${RATE_BUDGET_PK}"}`);

beforeAll(async () => {
  sim = await Simulation.start((await synthesizedAssembly()).directory);
});

afterAll(async () => {
  await sim?.close();
});

describe('failures and redelivery', () => {
  const cluster = 'prod-use1';
  const dispatchFor = (name: string) => dispatchScanFor(sim, name);
  const redeliver = (messages: Parameters<typeof redeliverScans>[1], times = 3) =>
    redeliverScans(sim, messages, times);

  it('DynamoDB failing at each step of a scan: after redelivery every alert arrives once', async () => {
    // Prepare: a clean scan shows the steps (DynamoDB calls) and the alerts to expect.
    await sim.resetState();
    const clean = await dispatchFor(cluster);
    const firstCall = sim.aws.calls.length;
    expect(await redeliver([clean], 1)).toEqual([]);
    const cleanCalls = sim.aws.calls.slice(firstCall);
    const dynamoCalls = cleanCalls.filter(
      (call) => call.service === 'dynamodb' && call.leadingKey !== RATE_BUDGET_PK
    );
    const expected = alertsOf(sim.aws.published);
    expect(expected.length).toBeGreaterThan(0);
    // The first request of every step (a run of one action), and the last request of the scan.
    const steps = dynamoCalls.flatMap((call, index) =>
      index === 0 ||
      dynamoCalls[index - 1]?.action !== call.action ||
      index === dynamoCalls.length - 1
        ? [index + 1]
        : []
    );
    const publishedAt = cleanCalls.findIndex((call) => call.action === 'sns:Publish');
    const dynamoBeforePublish = cleanCalls
      .slice(0, publishedAt)
      .filter((call) => call.service === 'dynamodb' && call.leadingKey !== RATE_BUDGET_PK).length;

    for (const [index, step] of steps.entries()) {
      // 500s and dropped connections, alternately (both are retried by the SDK, then fatal).
      const kind = index % 2 === 0 ? 'server-error' : 'reset';
      {
        // Act
        await sim.resetState();
        const message = { ...clean, messageId: randomUUID() };
        sim.aws.setFault('dynamodb', { kind, fromCall: step, except: budgetRequest });
        const { failed } = await sim.deliverQueued([message]);
        sim.aws.setFault('dynamodb', undefined);
        const left = await redeliver(failed);

        // Assess
        const label = `${kind} from DynamoDB request ${step} (${dynamoCalls[step - 1]?.action})`;
        expect(left, label).toEqual([]);
        const delivered = alertsOf(sim.aws.published);
        expect([...new Set(delivered)], `${label}: none lost`).toEqual(expected);
        // SNS accepted the messages but marking them published failed (on a first scan, the
        // UpdateItems after the publish are exactly those): the one window in which a
        // redelivery sends them again (at-least-once). Everywhere else: exactly once.
        const failedCall = dynamoCalls[step - 1]?.action;
        const clearingPending = step > dynamoBeforePublish && failedCall === 'dynamodb:UpdateItem';
        if (!clearingPending) expect(delivered, `${label}: none doubled`).toEqual(expected);
      }
    }
  });

  it('denied no call the faulted scans made', () => {
    expect(sim.aws.calls.filter((call) => !call.allowed)).toEqual([]);
  });
});
