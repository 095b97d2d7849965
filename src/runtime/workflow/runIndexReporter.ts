import type { RunSummary } from "../../engine/store.ts";

/**
 * Hands run summaries to the project's run index actor in batches: every
 * summary reported before the next turn of this isolate goes in one RPC
 * (which the index writes in one transaction). Starting many runs at once
 * then costs a few calls to the one index actor rather than one per run.
 * Each report resolves once its batch is written, and rejects if that failed.
 */
export interface RunIndexReporter {
  report(summary: RunSummary): Promise<void>;
}

/** What the reporter needs of the run index actor's client. */
export interface RunIndexRecorder {
  record(summaries: RunSummary[]): Promise<void>;
}

export function createRunIndexReporter(index: () => RunIndexRecorder): RunIndexReporter {
  let pending: RunSummary[] = [];
  let batch: Promise<void> | null = null;
  return {
    report(summary) {
      pending.push(summary);
      batch ??= new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => {
        const summaries = pending;
        pending = [];
        batch = null;
        return index().record(summaries);
      });
      return batch;
    },
  };
}
