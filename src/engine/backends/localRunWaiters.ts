/**
 * Callers of the local backend waiting for a run to end (`waitForTerminal`): told when it ends in
 * this process, or found ended by a poll each `pollIntervalMS` (another process sharing the store may
 * end it).
 */
import { describeRun, type WorkflowRunView } from "../execution/describeRun.ts";
import { isLiveStatus, type WorkflowEventStore } from "../storage/store.ts";

interface Waiter {
  resolve(view: WorkflowRunView): void;
  reject(error: unknown): void;
}

export function createLocalRunWaiters(store: Pick<WorkflowEventStore, "events">, pollIntervalMS: number) {
  const waiters = new Map<string, Set<Waiter>>();
  const pollers = new Map<string, ReturnType<typeof setInterval>>();

  /** Answers the run's waiters if it has ended. */
  function settle(runId: string): void {
    const pending = waiters.get(runId);
    if (!pending) return;
    const view = describeRun(store.events(runId));
    if (!view || isLiveStatus(view.status)) return;
    waiters.delete(runId);
    const poller = pollers.get(runId);
    if (poller !== undefined) clearInterval(poller);
    pollers.delete(runId);
    for (const waiter of pending) waiter.resolve(view);
  }

  return {
    settle,
    /** The view of a live run once it has ended. */
    wait(runId: string): Promise<WorkflowRunView> {
      return new Promise<WorkflowRunView>((resolve, reject) => {
        const set = waiters.get(runId) ?? new Set<Waiter>();
        set.add({ resolve, reject });
        waiters.set(runId, set);
        // Another process sharing the store may finish the run; look every second, as `run.result()` polls.
        if (!pollers.has(runId))
          pollers.set(
            runId,
            setInterval(() => settle(runId), pollIntervalMS),
          );
      });
    },
    /** Stops polling and rejects every waiter with `error`. */
    close(error: () => unknown): void {
      for (const poller of pollers.values()) clearInterval(poller);
      pollers.clear();
      for (const [, pending] of waiters) for (const waiter of pending) waiter.reject(error());
      waiters.clear();
    },
  };
}
