const SHUTDOWN_DEADLINE_MS = 4_000;

/**
 * Resolves once Ctrl-C, SIGTERM or SIGHUP arrived and `stopAll` finished,
 * exiting with 1 if stopping takes longer than the deadline. Miniflare's own
 * signal hook exits at once and leaves workerd to die alone: the handlers are
 * taken over so shutdown awaits dispose().
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
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.removeAllListeners(signal);
      process.on(signal, () => void stop(signal));
    }
  });
}
