const SHUTDOWN_DEADLINE_MS = 4_000;
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Resolves once Ctrl-C, SIGTERM or SIGHUP arrived and `stopAll` finished,
 * exiting with 1 if stopping takes longer than the deadline. Miniflare's own
 * signal hook exits at once and leaves workerd to die alone: the handlers are
 * taken over so shutdown awaits dispose().
 *
 * Ours are added before the others are removed. A signal that arrived while
 * start-up's last synchronous steps ran is queued for the process's signal
 * handle, and Node closes that handle when a signal's last listener goes: with
 * removeAllListeners() first, the queued signal went with it and the process
 * kept running (a SIGTERM sent right at "Ready on …").
 */
export function untilSignalled(stopAll: () => Promise<void>): Promise<void> {
  return new Promise<void>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`\n${signal}: stopping…`);
      const force = setTimeout(() => process.exit(1), SHUTDOWN_DEADLINE_MS);
      try {
        await stopAll();
      } catch (error) {
        console.error("Stopping failed:", error);
      }
      clearTimeout(force);
      resolve();
    };
    for (const signal of SIGNALS) {
      const others = process.listeners(signal);
      process.on(signal, () => void stop(signal));
      for (const other of others) process.removeListener(signal, other);
    }
  });
}
