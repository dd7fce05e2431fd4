// One call budget shared by every Lambda environment of a deployment, kept in the state table: IAM's
// request rate is the account's (unpublished, and it cannot be raised:
// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html,
// https://repost.aws/knowledge-center/iam-sts-throttling-error), so per-environment limiters
// would let `scanConcurrency` concurrent scans send that many times the share and throttle the
// customer's own pipelines.
//
// Why a token bucket in DynamoDB, not a bounded concurrency for the IAM phase: IAM calls are spread
// over the scan (role and profile reads while facts are collected, simulations while permissions
// are), so there is no one phase to lease; a lease bounds concurrency, not rate; and a lease held
// by an environment that died must expire. The bucket bounds the rate itself and holds no state a
// crash can leak.
//
//   pk = BUDGET  sk = <name>  tat (epoch microseconds, an integer: exact in JS and DynamoDB alike)
// `tat` is the bucket as GCRA keeps it (the "theoretical arrival time"): the bucket is full when
// `tat <= now`, and a take of `n` calls conforms when max(tat, now) + n·T <= now + burst·T
// (T = 1/rate, rounded up to a whole microsecond): a token bucket of `burst` tokens refilled at
// `rate`. One conditional UpdateItem takes: `SET tat = tat + n·T` while calls are being paced, or
// `SET tat = now + n·T` when the bucket is full. Both are atomic in DynamoDB, so concurrent takers
// can never exceed the budget over any window; a taker that loses the condition reads `tat` and
// tries again, or waits until the next token (plus jitter, so waiters do not wake together).
// Each environment sends one request at a time and takes as many tokens as it has callers waiting.
// Environments' clocks (Lambda's, NTP-synchronised) stand in for one clock: a `tat` more than
// MAX_CLOCK_SKEW_MS beyond what any correct clock can write is overwritten, not waited for.
//
// The table failing (throttled, unavailable, denied) must not stop a scan: the budget then paces
// locally at its fallback rate (the share divided by the scan's concurrency) for FALLBACK_MS,
// says so through `onFallback`, and tries the table again.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TokenBucket } from '../../shared/token-bucket.js';
import type { DocumentSender } from './dynamodb-batch.js';
import type { SharedRateLimit } from './rate-limit.js';

export const tableRateBudgetActions = ['dynamodb:UpdateItem', 'dynamodb:GetItem'] as const;

export const RATE_BUDGET_PK = 'BUDGET';
/** How far ahead of its own clock an environment may find `tat` before it counts as corrupt. */
const MAX_CLOCK_SKEW_MS = 5_000;
/** How long the budget paces locally after the table failed, before it tries the table again. */
export const FALLBACK_MS = 60_000;

export interface TableRateBudgetOptions {
  readonly tableName: string;
  /** The budget's item (`sk`): one per coordinated service, e.g. `iam`. */
  readonly name: string;
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Epoch milliseconds: every environment's clock must agree (see the header). */
  readonly now: () => number;
  readonly sleep: (milliseconds: number) => Promise<void>;
  /** In [0, 1): the jitter of waits. */
  readonly random?: () => number;
  /** Local pacing while the table cannot be used. */
  readonly fallback: { readonly ratePerSecond: number; readonly burst: number };
  /** Called once each time the budget falls back to local pacing. */
  readonly onFallback: (error: unknown) => void;
}

function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

export class TableRateBudget implements SharedRateLimit {
  /** T in microseconds. */
  private readonly interval: number;
  private readonly burst: number;
  private readonly waiting: (() => void)[] = [];
  private pumping = false;
  /** The last `tat` seen (undefined: none seen, or the item does not exist). */
  private knownTat: number | undefined;
  private localUntil = Number.NEGATIVE_INFINITY;
  private readonly local: TokenBucket;

  public constructor(
    private readonly client: DocumentSender,
    private readonly options: TableRateBudgetOptions
  ) {
    if (!(options.ratePerSecond > 0) || !(options.burst >= 1)) {
      throw new Error(`rate budget ${options.name}: rate must be > 0 and burst >= 1`);
    }
    this.interval = Math.ceil(1_000_000 / options.ratePerSecond);
    this.burst = Math.floor(options.burst);
    this.local = new TokenBucket({
      ratePerSecond: options.fallback.ratePerSecond,
      burst: Math.max(1, options.fallback.burst),
      now: options.now,
      sleep: options.sleep,
    });
  }

  public take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (!this.pumping) void this.pump();
    });
  }

  /** Grants waiting callers, one table request at a time, until none waits. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      // Callers arriving together (Promise.all) are taken in one request.
      await Promise.resolve();
      while (this.waiting.length > 0) {
        if (this.options.now() < this.localUntil) {
          await this.local.take();
          this.waiting.shift()?.();
          continue;
        }
        let granted: number;
        try {
          granted = await this.takeFromTable(Math.min(this.waiting.length, this.burst));
        } catch (error) {
          this.localUntil = this.options.now() + FALLBACK_MS;
          this.knownTat = undefined;
          try {
            this.options.onFallback(error);
          } catch {
            // A failing log line must not leave the callers waiting.
          }
          continue;
        }
        for (let grant = 0; grant < granted; grant++) this.waiting.shift()?.();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Takes between 1 and `wanted` tokens from the table (waiting while it has none): how many. */
  private async takeFromTable(wanted: number): Promise<number> {
    const { burst } = this;
    for (;;) {
      const now = Math.round(this.options.now() * 1000);
      const tat = this.knownTat;
      const full = tat === undefined || tat <= now || tat > this.ceiling(now);
      const available = full ? burst : Math.floor((now - tat) / this.interval) + burst;
      if (available < 1) {
        const untilToken = (tat ?? now) - (burst - 1) * this.interval - now;
        const jitter = (this.options.random ?? Math.random)() * this.interval * 0.5;
        await this.options.sleep(Math.max(1, Math.ceil((untilToken + jitter) / 1000)));
        continue;
      }
      const count = Math.min(wanted, available);
      const taken = full ? await this.refill(now, count) : await this.drain(now, count);
      if (taken !== undefined) {
        this.knownTat = taken;
        return count;
      }
      // Another environment moved the bucket since: look again.
      this.knownTat = await this.read();
    }
  }

  /** The latest `tat` a correct clock can have written. */
  private ceiling(now: number): number {
    return now + this.burst * this.interval + MAX_CLOCK_SKEW_MS * 1000;
  }

  /** The bucket is full (or `tat` is corrupt): start pacing from now. */
  private refill(now: number, count: number): Promise<number | undefined> {
    return this.update({
      UpdateExpression: 'SET #tat = :next, #type = :type',
      ConditionExpression:
        'attribute_not_exists(#tat) OR NOT attribute_type(#tat, :number) OR #tat <= :now OR #tat > :ceiling',
      ExpressionAttributeValues: {
        ':next': now + count * this.interval,
        ':type': 'rate-budget',
        ':number': 'N',
        ':now': now,
        ':ceiling': this.ceiling(now),
      },
    });
  }

  /** Calls are being paced: take `count` more if the bucket holds them. */
  private drain(now: number, count: number): Promise<number | undefined> {
    return this.update({
      UpdateExpression: 'SET #tat = #tat + :cost',
      ConditionExpression: '#tat > :now AND #tat <= :limit',
      ExpressionAttributeValues: {
        ':cost': count * this.interval,
        ':now': now,
        ':limit': now + (this.burst - count) * this.interval,
      },
    });
  }

  /** The new `tat`, or undefined when the condition failed. */
  private async update(
    expression: Pick<
      ConstructorParameters<typeof UpdateCommand>[0],
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues'
    >
  ): Promise<number | undefined> {
    try {
      const response = await this.client.send(
        new UpdateCommand({
          TableName: this.options.tableName,
          Key: this.key(),
          ...expression,
          ExpressionAttributeNames: {
            '#tat': 'tat',
            ...(expression.UpdateExpression?.includes('#type') ? { '#type': 'type' } : {}),
          },
          ReturnValues: 'UPDATED_NEW',
        })
      );
      const tat = response?.Attributes?.tat;
      if (typeof tat !== 'number') throw new Error('UpdateItem returned no tat');
      return tat;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  private async read(): Promise<number | undefined> {
    const response = await this.client.send(
      new GetCommand({
        TableName: this.options.tableName,
        Key: this.key(),
        ConsistentRead: true,
        ProjectionExpression: '#tat',
        ExpressionAttributeNames: { '#tat': 'tat' },
      })
    );
    const tat = response?.Item?.tat;
    return typeof tat === 'number' ? tat : undefined;
  }

  private key() {
    return { pk: RATE_BUDGET_PK, sk: this.options.name };
  }
}
