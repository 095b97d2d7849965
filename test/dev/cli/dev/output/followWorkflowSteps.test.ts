import { describe, expect, it } from "vitest";
import type { RunEventView, WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import { createStepFollower } from "#src/dev/cli/dev/output/followWorkflowSteps.ts";

const t0 = 1_800_000_000_000;

/** A project's runs as the API lists and shows them; the list's `updatedAt` moves only at a run's start and end. */
function fakeApi() {
  const views = new Map<string, WorkflowRunView>();
  const listed = new Map<string, number>();
  const calls: string[] = [];
  return {
    calls,
    run(id: string, events: RunEventView[], status: WorkflowRunView["status"] = "running", reindex = false) {
      views.set(id, { id, workflowId: id, name: "long", status, createdAt: t0, updatedAt: events.at(-1)!.at, events });
      if (reindex || !listed.has(id)) listed.set(id, events.at(-1)!.at);
    },
    get: async <T>(pathAndQuery: string): Promise<T | null> => {
      calls.push(pathAndQuery);
      if (pathAndQuery.startsWith("/projects/app/workflows?"))
        return {
          runs: [...listed].map(([id, updatedAt]) => ({ ...views.get(id)!, updatedAt, events: undefined })),
        } as T;
      return (views.get(decodeURIComponent(pathAndQuery.split("/").pop()!)) as T) ?? null;
    },
  };
}

const created: RunEventView = {
  seq: 1,
  type: "workflow_created",
  payload: { workflowName: "long", writes: {} },
  at: t0,
};
const started = (seq: number, step: string, at: number): RunEventView => ({
  seq,
  type: "step_started",
  payload: { step, attempt: 1 },
  at,
});
const completed = (seq: number, step: string, next: string | undefined, at: number): RunEventView => ({
  seq,
  type: "step_completed",
  payload: { step, writes: {}, ...(next ? { next_step: next } : {}) },
  at,
  continuation: next ? { kind: "next_step", step: next } : { kind: "done" },
});

describe("createStepFollower", () => {
  it("prints a running run's steps on the tick after they happen, though the list's updatedAt stays put", async () => {
    const api = fakeApi();
    const lines: string[] = [];
    const follower = createStepFollower({ slug: "app", get: api.get, print: (l) => lines.push(l), active: () => true });
    await follower.tick(); // the first tick only learns what exists
    api.run("run-1", [created]);
    await follower.tick();
    expect(lines).toEqual(["run run-1: long started"]);
    api.run("run-1", [created, started(2, "a", t0 + 1), completed(3, "a", "b", t0 + 4)]);
    await follower.tick();
    expect(lines.at(-1)).toBe("run run-1: a#1 completed in 3 ms → b");
    api.run("run-1", [
      created,
      started(2, "a", t0 + 1),
      completed(3, "a", "b", t0 + 4),
      started(4, "b", t0 + 5),
      completed(5, "b", undefined, t0 + 9),
    ]);
    await follower.tick();
    expect(lines.at(-1)).toBe("run run-1: b#1 completed in 4 ms → done");
    expect(lines).toHaveLength(3);
  });

  it("reads a finished run only when its updatedAt moves, and nothing while the project has no workflows", async () => {
    const api = fakeApi();
    let active = false;
    const follower = createStepFollower({ slug: "app", get: api.get, print: () => {}, active: () => active });
    await follower.tick();
    expect(api.calls).toEqual([]);
    active = true;
    api.run("done-1", [created, completed(2, "a", undefined, t0 + 2)], "completed");
    await follower.tick();
    await follower.tick();
    await follower.tick();
    expect(api.calls.filter((c) => c.endsWith("/done-1"))).toEqual([]);
  });
});
