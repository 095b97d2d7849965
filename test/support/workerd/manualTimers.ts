/**
 * Timers on a clock only the test moves: the Gateway relay's and the fake
 * Gateway's (heartbeats, backoffs, deadlines) run when `advance` passes
 * their time, never on the wall clock.
 */
export function manualClock(start = 0) {
  let now = start;
  let nextId = 0;
  const pending = new Map<number, { at: number; run: () => void }>();
  return {
    now: () => now,
    timers: {
      set(run: () => void, ms: number) {
        const id = ++nextId;
        pending.set(id, { at: now + ms, run });
        return id;
      },
      clear(handle: unknown) {
        pending.delete(handle as number);
      },
    },
    /** Runs the timers due within `ms`, in order, letting socket traffic through after each. */
    async advance(ms: number, afterEach: () => Promise<void>) {
      const until = now + ms;
      for (;;) {
        const due = [...pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        pending.delete(due[0]);
        now = due[1].at;
        due[1].run();
        await afterEach();
      }
      now = until;
    },
  };
}

/** Lets queued socket messages and promise chains run (no wall-clock assertion depends on it). */
export async function flushSockets(rounds = 5) {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}
