/**
 * When each run of the local backend executes: a zero-delay timer per kick (the local stand-in for a
 * queue), a later one for a wake-up, and never two executions of one run at a time: a kick during an
 * execution runs it again once that one ends.
 */
export function createLocalRunScheduler(execute: (runId: string) => Promise<void>, signal: AbortSignal) {
  const running = new Map<string, Promise<void>>();
  const kickedWhileRunning = new Set<string>();
  const timers = new Map<string, ReturnType<typeof setTimeout>>();

  function schedule(runId: string, delayMS: number): void {
    if (signal.aborted) return;
    const pending = timers.get(runId);
    if (pending !== undefined) clearTimeout(pending);
    timers.set(
      runId,
      setTimeout(
        () => {
          timers.delete(runId);
          drive(runId);
        },
        Math.max(0, delayMS),
      ),
    );
  }

  function kick(runId: string): void {
    if (signal.aborted) return;
    if (running.has(runId)) kickedWhileRunning.add(runId);
    else schedule(runId, 0);
  }

  function drive(runId: string): void {
    if (signal.aborted) return;
    if (running.has(runId)) {
      kickedWhileRunning.add(runId);
      return;
    }
    const execution = execute(runId).finally(() => {
      running.delete(runId);
      if (kickedWhileRunning.delete(runId)) schedule(runId, 0);
    });
    running.set(runId, execution);
  }

  return {
    schedule,
    kick,
    isRunning: (runId: string): boolean => running.has(runId),
    hasTimer: (runId: string): boolean => timers.has(runId),
    /** Drops the run's pending timer: nothing is left for it to wake. */
    clearTimer(runId: string): void {
      const pending = timers.get(runId);
      if (pending !== undefined) clearTimeout(pending);
      timers.delete(runId);
    },
    /** Drops every timer at once, then waits up to `graceMS` for the executions under way. */
    async close(graceMS: number): Promise<void> {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled([...running.values()]),
        new Promise((resolve) => {
          grace = setTimeout(resolve, graceMS);
        }),
      ]);
      if (grace !== undefined) clearTimeout(grace);
    },
  };
}
