import { describe, expect, it } from 'vitest';
import { createLimiter, mapLimited } from '../../lambda/shared/concurrency.js';

/** A task that records how many of its kind run at once. */
function peakRecorder() {
  let running = 0;
  const recorder = {
    peak: 0,
    async run<T>(value: T): Promise<T> {
      running++;
      recorder.peak = Math.max(recorder.peak, running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      running--;
      return value;
    },
  };
  return recorder;
}

describe('mapLimited', () => {
  it('keeps input order', async () => {
    expect(await mapLimited([3, 1, 2], 2, async (value) => value * 2)).toEqual([6, 2, 4]);
    expect(await mapLimited([], 4, async (value: number) => value)).toEqual([]);
  });

  it('never runs more than the limit at once', async () => {
    // Prepare
    const recorder = peakRecorder();
    const items = Array.from({ length: 10 }, (_, index) => index);

    // Act
    const results = await mapLimited(items, 3, (item) => recorder.run(item));

    // Assess
    expect(results).toEqual(items);
    expect(recorder.peak).toBe(3);
  });

  it('rejects with the first failure and starts nothing after it', async () => {
    // Prepare
    const started: number[] = [];
    let slowDone!: () => void;
    const slowFinished = new Promise<void>((resolve) => {
      slowDone = resolve;
    });

    // Act
    const mapped = mapLimited([1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      if (item === 1) throw new Error('boom 1');
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (item === 2) slowDone();
      return item;
    });

    // Assess: the worker still busy with item 2 takes no new item once item 1 failed.
    await expect(mapped).rejects.toThrow('boom 1');
    await slowFinished;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toEqual([1, 2]);
  });

  it('rejects a non-positive limit', async () => {
    await expect(mapLimited([1], 0, async (value) => value)).rejects.toThrow(RangeError);
  });
});

describe('createLimiter', () => {
  it('never runs more than the limit at once', async () => {
    const limit = createLimiter(2);
    const recorder = peakRecorder();
    await Promise.all(Array.from({ length: 10 }, (_, index) => limit(() => recorder.run(index))));
    expect(recorder.peak).toBe(2);
  });

  it('rejects a non-positive limit', () => {
    expect(() => createLimiter(0)).toThrow(RangeError);
  });
});
