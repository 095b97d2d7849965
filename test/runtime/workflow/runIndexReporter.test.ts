import { describe, expect, it } from "vitest";
import type { RunReport } from "#src/engine/store.ts";
import { createRunIndexReporter, type RunIndexRecorder } from "#src/runtime/workflow/runIndexReporter.ts";

const summary = (id: string): RunReport => ({
  id,
  workflowId: id,
  name: "checkout",
  status: "running",
  step: "start",
  lastSeq: 1,
  createdAt: 1,
  updatedAt: 1,
});

/** An index client that records each call's batch and fails the calls it is told to. */
function fakeIndex(failing: Set<number> = new Set()) {
  const calls: string[][] = [];
  const client: RunIndexRecorder = {
    record: async (summaries) => {
      calls.push(summaries.map((s) => s.id));
      if (failing.has(calls.length)) throw new Error("index unavailable");
    },
  };
  return { calls, client };
}

describe("createRunIndexReporter", () => {
  it("sends a report at once when no call is under way, and the reports made meanwhile together in the next call", async () => {
    const { calls, client } = fakeIndex();
    const reporter = createRunIndexReporter(() => client);
    await Promise.all(["a", "b", "c"].map((id) => reporter.report(summary(id))));
    await reporter.report(summary("d"));
    expect(calls).toEqual([["a"], ["b", "c"], ["d"]]);
  });

  it("rejects every report of a call that failed, and sends the next ones afresh", async () => {
    const { calls, client } = fakeIndex(new Set([2]));
    const reporter = createRunIndexReporter(() => client);
    const reports = ["a", "b", "c"].map((id) => reporter.report(summary(id)));
    await expect(reports[0]).resolves.toBeUndefined();
    for (const report of reports.slice(1)) await expect(report).rejects.toThrow("index unavailable");
    await expect(reporter.report(summary("d"))).resolves.toBeUndefined();
    expect(calls).toEqual([["a"], ["b", "c"], ["d"]]);
  });

  it("asks for the index client only when a batch is sent", async () => {
    let asked = 0;
    const { client } = fakeIndex();
    const reporter = createRunIndexReporter(() => {
      asked++;
      return client;
    });
    expect(asked).toBe(0);
    await reporter.report(summary("a"));
    expect(asked).toBe(1);
  });
});
