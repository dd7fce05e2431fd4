// Bounded concurrency for fan-out over AWS and Kubernetes APIs: callers share account-wide rate
// buckets, so no caller bursts every request at once.

function assertLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
  }
}

/**
 * Maps over items with at most `limit` calls in flight, keeping input order in the output.
 * Rejects with the first failure and starts no further calls after it.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>
): Promise<R[]> {
  assertLimit(limit);
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** A FIFO limiter: `run` starts the task when fewer than `limit` are running. */
export function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  assertLimit(limit);
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = (): void => {
    running--;
    waiting.shift()?.();
  };
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      release();
    }
  };
}
