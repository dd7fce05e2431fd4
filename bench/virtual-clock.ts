// A discrete-event clock: `sleep` resolves in virtual time, so a scan that would spend an hour
// waiting on AWS rate limits is simulated in seconds, deterministically. Time advances only when
// every promise chain is idle (after a macrotask turn), to the earliest pending timer.

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/** Time as the benchmarks see it: virtual (VirtualClock) so rate-limit waits cost no real time. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

export class VirtualClock implements Clock {
  private time = 0;
  private seq = 0;
  private readonly heap: Timer[] = [];

  public now(): number {
    return this.time;
  }

  public sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.push({ at: this.time + Math.max(0, ms), seq: this.seq++, resolve });
    });
  }

  /** Runs `work` to completion, advancing virtual time whenever nothing else can make progress. */
  public async run<T>(work: () => Promise<T>): Promise<T> {
    let settled = false;
    const result = work().finally(() => {
      settled = true;
    });
    result.catch(() => undefined);
    while (!settled) {
      await macrotask();
      if (settled) break;
      const next = this.pop();
      if (next === undefined) continue; // waiting on real I/O (none in the benches), spin
      this.time = next.at;
      next.resolve();
      while (this.heap.length > 0 && (this.heap[0] as Timer).at <= this.time) this.pop()?.resolve();
    }
    return result;
  }

  private less(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!this.less(heap[index] as Timer, heap[parent] as Timer)) break;
      [heap[index], heap[parent]] = [heap[parent] as Timer, heap[index] as Timer];
      index = parent;
    }
  }

  private pop(): Timer | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      const right = left + 1;
      let smallest = index;
      if (left < heap.length && this.less(heap[left] as Timer, heap[smallest] as Timer))
        smallest = left;
      if (right < heap.length && this.less(heap[right] as Timer, heap[smallest] as Timer))
        smallest = right;
      if (smallest === index) return top;
      [heap[index], heap[smallest]] = [heap[smallest] as Timer, heap[index] as Timer];
      index = smallest;
    }
  }
}
