import type { RunReport } from "../../engine/store.ts";

/**
 * Hands run summaries to the project's run index actor, one call at a time:
 * a report made while no call is under way is sent at once (a run started on
 * its own waits for nothing else), and the reports made while one is under
 * way go together in the next (runs started at once cost a few calls to the
 * one index actor rather than one each, each written in one transaction).
 * Each report resolves once its summary is written, and rejects if that failed.
 */
export interface RunIndexReporter {
  report(summary: RunReport): Promise<void>;
}

/** What the reporter needs of the run index actor's client. */
export interface RunIndexRecorder {
  record(summaries: RunReport[]): Promise<void>;
}

interface Pending {
  summary: RunReport;
  settle: (error?: unknown) => void;
}

export function createRunIndexReporter(index: () => RunIndexRecorder): RunIndexReporter {
  let queued: Pending[] = [];
  let sending = false;

  const send = async () => {
    sending = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        await index().record(batch.map((pending) => pending.summary));
        for (const pending of batch) pending.settle();
      } catch (error) {
        for (const pending of batch) pending.settle(error ?? new Error("The run index refused the report"));
      }
    }
    sending = false;
  };

  return {
    report(summary) {
      return new Promise<void>((resolve, reject) => {
        queued.push({ summary, settle: (error) => (error === undefined ? resolve() : reject(error)) });
        if (!sending) void send();
      });
    },
  };
}
