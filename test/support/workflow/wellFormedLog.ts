import { expect } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";

/**
 * Spec rule 2, read back from a log: a step_completed without next_step is
 * followed by workflow_completed written in the same batch (same `at`), a
 * final step_failed by workflow_failed, and nothing follows a terminal event.
 * Also: no step completes twice, and seqs run 1, 2, 3, … without gaps.
 */
export function expectWellFormed(events: readonly StoredEvent[], options: { repairedTerminal?: boolean } = {}): void {
  events.forEach((event, i) => {
    expect(event.seq).toBe(i + 1);
  });
  const completed = events.filter((e) => e.type === "step_completed").map((e) => e.payload.step);
  expect(new Set(completed).size, `a step completed twice: ${completed.join(", ")}`).toBe(completed.length);
  events.forEach((event, i) => {
    const next = events[i + 1];
    // A log planted without its terminal event (stuck_terminal) gets it later, from recovery.
    const sameBatch = options.repairedTerminal ? {} : { at: event.at };
    if (event.type === "step_completed" && event.payload.next_step === undefined) {
      expect(next).toMatchObject({ type: "workflow_completed", ...sameBatch });
    }
    if (event.type === "step_failed" && !event.payload.retryable) {
      expect(next).toMatchObject({ type: "workflow_failed", ...sameBatch });
    }
    if (event.type === "workflow_completed" || event.type === "workflow_failed") expect(next).toBeUndefined();
  });
}
