import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../lambda/shared/token-bucket.js';
import { fakeClock } from '../support/fake-clock.js';

describe('TokenBucket', () => {
  it('admits the burst, throttles the next call, and refills at the rate', () => {
    // Prepare
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 2, burst: 3, ...clock });

    // Act
    const burst = [bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()];
    clock.advance(499);
    const early = bucket.tryTake();
    clock.advance(1);
    const refilled = bucket.tryTake();

    // Assess
    expect(burst).toEqual([true, true, true, false]);
    expect(early).toBe(false);
    expect(refilled).toBe(true);
  });

  it('makes queued takes wait for the rate after the burst', async () => {
    // Prepare
    const clock = fakeClock();
    const bucket = new TokenBucket({ ratePerSecond: 4, burst: 2, ...clock });
    const takenAt: number[] = [];

    // Act
    await Promise.all(
      Array.from({ length: 5 }, () => bucket.take().then(() => takenAt.push(clock.now())))
    );

    // Assess
    expect(takenAt).toEqual([0, 0, 250, 500, 750]);
  });
});
