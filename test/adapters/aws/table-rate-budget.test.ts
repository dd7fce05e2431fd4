// The account-wide call budget on a real DynamoDB implementation (dynalite): several environments
// (budget instances) with concurrent callers each, and the table's conditional updates alone keep
// them within one budget.
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import type { DocumentSender } from '../../../lambda/adapters/aws/dynamodb-batch.js';
import {
  FALLBACK_MS,
  RATE_BUDGET_PK,
  TableRateBudget,
  type TableRateBudgetOptions,
} from '../../../lambda/adapters/aws/table-rate-budget.js';
import { useDynaliteTable } from '../../support/dynalite-table.js';
import { fakeClock } from '../../support/fake-clock.js';

const dynamo = useDynaliteTable();

/** A successful take as the table decided it: the `now` its condition used, and its tokens. */
interface Take {
  readonly at: number;
  readonly tokens: number;
}

/** The document client, recording each UpdateItem the table accepted (times in microseconds). */
function recordingClient(takes: Take[], interval: number): DocumentSender {
  return {
    send: (async (command: unknown) => {
      const response = await dynamo.documents.send(command as never);
      if (command instanceof UpdateCommand) {
        const values = command.input.ExpressionAttributeValues ?? {};
        const now = Number(values[':now']);
        // A refill takes (next - now) / T tokens, a drain cost / T.
        const cost =
          values[':cost'] === undefined ? Number(values[':next']) - now : values[':cost'];
        takes.push({ at: now, tokens: Math.round(Number(cost) / interval) });
      }
      return response;
    }) as DocumentSender['send'],
  };
}

function budget(
  client: DocumentSender,
  options: Partial<TableRateBudgetOptions> & Pick<TableRateBudgetOptions, 'ratePerSecond' | 'burst'>
): TableRateBudget {
  return new TableRateBudget(client, {
    tableName: dynamo.name,
    name: 'iam',
    now: () => Date.now(),
    sleep: (milliseconds) => new Promise((resolve) => setTimeout(resolve, milliseconds)),
    fallback: { ratePerSecond: 1, burst: 1 },
    onFallback: (error) => {
      throw new Error(`unexpected fallback: ${String(error)}`);
    },
    ...options,
  });
}

/** The most tokens taken in any window of the takes' times, less what the budget allows there. */
function worstExcess(takes: readonly Take[], rate: number, burst: number): number {
  const sorted = [...takes].sort((a, b) => a.at - b.at);
  let worst = Number.NEGATIVE_INFINITY;
  for (let start = 0; start < sorted.length; start++) {
    let tokens = 0;
    for (let end = start; end < sorted.length; end++) {
      tokens += sorted[end]?.tokens ?? 0;
      const seconds = ((sorted[end]?.at ?? 0) - (sorted[start]?.at ?? 0)) / 1_000_000;
      worst = Math.max(worst, tokens - (burst + rate * seconds));
    }
  }
  return worst;
}

describe('TableRateBudget', () => {
  it('concurrent environments, several callers each, never take more than the budget over any window', async () => {
    // Prepare: 4 environments × 3 concurrent callers × 5 calls at 100/s, bursts of 5
    const rate = 100;
    const burst = 5;
    const takes: Take[] = [];
    const environments = Array.from({ length: 4 }, () =>
      budget(recordingClient(takes, 1_000_000 / rate), { ratePerSecond: rate, burst })
    );
    let granted = 0;

    // Act
    const started = Date.now();
    await Promise.all(
      environments.flatMap((environment) =>
        Array.from({ length: 3 }, async () => {
          for (let call = 0; call < 5; call++) {
            await environment.take();
            granted += 1;
          }
        })
      )
    );
    const elapsed = Date.now() - started;

    // Assess: every call was granted by exactly one take of the table, within the budget
    expect(granted).toBe(60);
    expect(takes.reduce((sum, take) => sum + take.tokens, 0)).toBe(60);
    expect(worstExcess(takes, rate, burst)).toBeLessThanOrEqual(0);
    // 55 calls beyond the burst at 100/s: at least 0.55 s, and not starved either.
    expect(elapsed).toBeGreaterThanOrEqual(540);
    expect(elapsed).toBeLessThan(5000);
  });

  it('grants the burst at once, then one call per interval, waiting (with jitter) while empty', async () => {
    // Prepare: virtual time, no jitter; the bucket starts full
    const clock = fakeClock();
    clock.advance(1_000_000);
    const grantedAt: number[] = [];
    const requests: string[] = [];
    const client: DocumentSender = {
      send: ((command: { constructor: { name: string } }) => {
        requests.push(command.constructor.name);
        return dynamo.documents.send(command as never);
      }) as DocumentSender['send'],
    };
    const pacer = budget(client, {
      ratePerSecond: 5,
      burst: 5,
      now: clock.now,
      // Time passes once the callers granted so far have run (as it would on a real clock).
      sleep: async (milliseconds) => {
        await new Promise((resolve) => setImmediate(resolve));
        clock.advance(milliseconds);
      },
      random: () => 0,
    });

    // Act
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        await pacer.take();
        grantedAt.push(clock.now() - 1_000_000);
      })
    );

    // Assess: 5 at once (one request for the five callers waiting), then every 200 ms
    expect(grantedAt).toEqual([0, 0, 0, 0, 0, 200, 400, 600]);
    expect(requests.filter((name) => name === 'UpdateCommand')).toHaveLength(4);
  });

  it('overwrites a budget item no correct clock could have written, instead of waiting for it', async () => {
    // Prepare: a `tat` an hour ahead, and one that is not a number
    for (const tat of [Date.now() + 3_600_000, 'garbage']) {
      await dynamo.documents.send(
        new PutCommand({
          TableName: dynamo.name,
          Item: { pk: RATE_BUDGET_PK, sk: 'iam', tat: typeof tat === 'number' ? tat * 1000 : tat },
        })
      );
      const clock = fakeClock();
      clock.advance(Date.now());
      const pacer = budget(dynamo.documents, {
        ratePerSecond: 5,
        burst: 5,
        now: clock.now,
        sleep: clock.sleep,
      });
      const before = clock.now();

      // Act
      await pacer.take();

      // Assess
      expect(clock.now() - before, String(tat)).toBe(0);
    }
  });

  it('the table failing: paces locally at the fallback rate, says so once, then uses the table again', async () => {
    // Prepare
    const clock = fakeClock();
    clock.advance(1_000_000);
    let failing = true;
    const sent: string[] = [];
    const client: DocumentSender = {
      send: (async (command: { constructor: { name: string } }) => {
        sent.push(command.constructor.name);
        if (failing) {
          throw Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
            name: 'ThrottlingException',
          });
        }
        return dynamo.documents.send(command as never);
      }) as DocumentSender['send'],
    };
    const fallbacks: unknown[] = [];
    const pacer = budget(client, {
      ratePerSecond: 8,
      burst: 8,
      now: clock.now,
      sleep: clock.sleep,
      fallback: { ratePerSecond: 2, burst: 1 },
      onFallback: (error) => fallbacks.push(error),
    });
    const grantedAt: number[] = [];

    // Act: four calls while the table fails
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        await pacer.take();
        grantedAt.push(clock.now() - 1_000_000);
      })
    );
    const sentWhileFailing = sent.length;
    failing = false;
    clock.advance(FALLBACK_MS);
    await pacer.take();

    // Assess: one failed request, one log, the local share (2/s, bursts of 1); later the table
    expect(fallbacks).toHaveLength(1);
    expect((fallbacks[0] as Error).name).toBe('ThrottlingException');
    expect(sentWhileFailing).toBe(1);
    expect(grantedAt).toEqual([0, 500, 1000, 1500]);
    expect(sent.slice(sentWhileFailing)).toEqual(['UpdateCommand']);
  });
});
