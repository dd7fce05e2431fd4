// An EC2-style token bucket on a virtual clock, for simulating API rate limits in benchmarks.

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  public constructor(
    private readonly capacity: number,
    private readonly refillPerSecond: number,
    private readonly clock: Clock = realClock
  ) {
    this.tokens = capacity;
    this.updatedAt = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(
      this.capacity,
      this.tokens + ((now - this.updatedAt) / 1000) * this.refillPerSecond
    );
    this.updatedAt = now;
  }

  /** Takes a token if one is there; false means the call would be throttled. */
  public tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is available. */
  public waitTime(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.refillPerSecond) * 1000;
  }
}
