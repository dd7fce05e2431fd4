/** A fake clock whose sleep advances time: no wall-clock waits, no timing assertions. */
export function fakeClock() {
  let now = 0;
  return {
    now: () => now,
    sleep: async (milliseconds: number) => {
      now += milliseconds;
    },
    /** Time passing outside any sleep (between calls). */
    advance: (milliseconds: number) => {
      now += milliseconds;
    },
  };
}
