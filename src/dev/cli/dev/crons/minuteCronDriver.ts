/** The timer a minute cron driver waits on: the real one, or a test's. */
export interface MinuteClock {
  now(): number;
  setTimeout(run: () => void, delayMS: number): unknown;
  clearTimeout(handle: unknown): void;
}

const SYSTEM_CLOCK: MinuteClock = {
  now: () => Date.now(),
  setTimeout: (run, delayMS) => setTimeout(run, delayMS),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Local crons never fire by themselves (Miniflare fires none): calls
 * `runScheduled` on each minute, as Cloudflare fires a deployed worker's cron
 * triggers. Used by `platform dev` and `platform up` alike.
 */
export function driveMinuteCron(
  runScheduled: (scheduledTime: Date) => Promise<void>,
  onError: (error: unknown) => void,
  clock: MinuteClock = SYSTEM_CLOCK,
): { stop(): void } {
  let timer: unknown;
  let stopped = false;
  let delivered = 0;
  const schedule = () => {
    // Each minute once, even if a timer fires a hair early.
    const minute = new Date(Math.max(Math.floor(clock.now() / 60_000) + 1, delivered + 1) * 60_000);
    delivered = minute.getTime() / 60_000;
    timer = clock.setTimeout(async () => {
      try {
        // The minute it was set for, as a cron trigger's scheduledTime: a late timer still delivers its minute.
        await runScheduled(minute);
      } catch (error) {
        onError(error);
      }
      if (!stopped) schedule();
    }, minute.getTime() - clock.now());
  };
  schedule();
  return {
    stop: () => {
      stopped = true;
      clock.clearTimeout(timer);
    },
  };
}
