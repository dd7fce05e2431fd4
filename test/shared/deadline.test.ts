import { describe, expect, it } from 'vitest';
import {
  clusterReadDeadline,
  deadlineAfter,
  lambdaReadBudgetMs,
} from '../../lambda/shared/deadline.js';

describe('lambdaReadBudgetMs', () => {
  it('keeps a fifth of the remaining time to store and publish, within 10 s and 2 minutes', () => {
    expect(lambdaReadBudgetMs(100_000)).toBe(80_000);
    // 15 minutes: the reserve stops at 2 minutes.
    expect(lambdaReadBudgetMs(900_000)).toBe(780_000);
    // 30 s: the reserve is at least 10 s.
    expect(lambdaReadBudgetMs(30_000)).toBe(20_000);
    expect(lambdaReadBudgetMs(5_000)).toBe(0);
  });

  it('never reads longer than the cap', () => {
    expect(lambdaReadBudgetMs(900_000, 60_000)).toBe(60_000);
  });
});

describe('clusterReadDeadline', () => {
  const request = deadlineAfter(900, 'the request deadline', 1_000);

  it('splits what is left of the request evenly among the clusters still to read', () => {
    expect(clusterReadDeadline(request, 3, 1_000).at).toBe(1_300);
    // The first took its whole share: the next two split the 600 ms left.
    expect(clusterReadDeadline(request, 2, 1_300).at).toBe(1_600);
    // The second finished early: the last one has everything left.
    expect(clusterReadDeadline(request, 1, 1_400)).toBe(request);
  });

  it('names the request deadline and the share in the label', () => {
    expect(clusterReadDeadline(request, 3, 1_000).label).toBe(
      'the request deadline, of which this cluster had 300 ms (900 ms left for 3 clusters)'
    );
  });

  it('gives no time once the request deadline has passed, and never reaches past it', () => {
    const late = clusterReadDeadline(request, 2, 2_500);
    expect(late.at).toBe(2_500);
    for (const [left, now] of [
      [2, 1_000],
      [5, 1_899],
      [7, 1_333],
    ] as const)
      expect(clusterReadDeadline(request, left, now).at).toBeLessThanOrEqual(request.at);
  });
});
