// A token bucket (EC2's own throttling model): `ratePerSecond` refill up to `burst`. Concurrent
// `take` calls queue, so the rate holds however many callers wait. Clock and sleep are injected.
// The benchmarks model AWS's server side with the same bucket (`tryTake`: admit or throttle).

export interface TokenBucketOptions {
  /** Tokens added per second. */
  readonly ratePerSecond?: number;
  readonly burst?: number;
  /** Milliseconds since any fixed origin. */
  readonly now: () => number;
  readonly sleep: (milliseconds: number) => Promise<void>;
}

/** A token bucket; concurrent `take` calls queue, so the rate holds however many callers wait. */
export class TokenBucket {
  private readonly rate: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  private queue: Promise<void> = Promise.resolve();

  public constructor(private readonly options: TokenBucketOptions) {
    this.rate = options.ratePerSecond ?? 1;
    this.burst = options.burst ?? 2;
    this.tokens = this.burst;
    this.last = options.now();
  }

  /** Takes a token if one is there, without waiting or queueing; false means none is left. */
  public tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits its turn behind earlier `take` calls, then for a token. */
  public take(): Promise<void> {
    const turn = this.queue.then(() => this.acquire());
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private refill(): void {
    const now = this.options.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
  }

  private async acquire(): Promise<void> {
    while (!this.tryTake()) {
      await this.options.sleep(Math.ceil(((1 - this.tokens) / this.rate) * 1000));
    }
  }
}
