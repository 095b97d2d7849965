import { describe, expect, it } from "vitest";
import type { WorkflowRunView } from "../../../../src/engine/describeRun.ts";
import { formatRunList, formatRunTimeline } from "../../../../src/dev/cli/workflow/formatTimeline.ts";

const t0 = Date.UTC(2026, 10, 22, 10, 0, 0);

const retried: WorkflowRunView = {
  id: "run-1",
  workflowId: "order-42",
  name: "checkout",
  status: "completed",
  result: { ok: true },
  createdAt: t0,
  updatedAt: t0 + 1_250,
  events: [
    {
      seq: 1,
      type: "workflow_created",
      payload: { workflowName: "checkout", writes: { data: { order: 42 } } },
      at: t0,
    },
    { seq: 2, type: "step_started", payload: { step: "start", attempt: 1 }, at: t0 + 5 },
    {
      seq: 3,
      type: "step_failed",
      payload: { step: "start", attempt: 1, reason: "card declined", retryable: true },
      at: t0 + 35,
    },
    { seq: 4, type: "step_started", payload: { step: "start", attempt: 2 }, at: t0 + 1_035 },
    {
      seq: 5,
      type: "step_completed",
      payload: { step: "start", writes: { charged: true }, next_step: "ship" },
      at: t0 + 1_100,
    },
    { seq: 6, type: "step_started", payload: { step: "ship", attempt: 1 }, at: t0 + 1_101 },
    { seq: 7, type: "step_completed", payload: { step: "ship", writes: {} }, at: t0 + 1_250 },
    { seq: 8, type: "workflow_completed", payload: { result: { ok: true } }, at: t0 + 1_250 },
  ],
};

describe("formatRunTimeline", () => {
  const text = formatRunTimeline(retried);
  const line = (seq: number) => text.split("\n").find((l) => l.startsWith(`${seq} `))!;

  it("heads the timeline with the run, its workflow id and its outcome", () => {
    expect(text.split("\n")[0]).toBe('Run run-1 of "checkout" (workflow id order-42), completed in 1250 ms');
  });

  it.each([
    [2, ["step_started", "start", "1"]],
    [3, ["step_failed", "start", "1", "30 ms", "card declined (will retry)"]],
    [4, ["step_started", "start", "2", "retry after waiting 1000 ms"]],
    [5, ["step_completed", "start", "65 ms", "next: ship, wrote charged"]],
    [8, ["workflow_completed", 'result {"ok":true}']],
  ])("shows event %i with its step, attempt, duration and detail", (seq, parts) => {
    for (const part of parts) expect(line(seq)).toContain(part);
  });

  it("says why a failed run failed", () => {
    const failed: WorkflowRunView = {
      ...retried,
      status: "failed",
      result: undefined,
      error: "card declined",
      events: [
        ...retried.events.slice(0, 3),
        {
          seq: 4,
          type: "workflow_failed",
          payload: { reason: "card declined", cause: "attempts_exhausted" },
          at: t0 + 35,
        },
      ],
      updatedAt: t0 + 35,
    };
    const out = formatRunTimeline(failed);
    expect(out.split("\n")[0]).toContain("failed after 35 ms: card declined");
    expect(out).toContain("card declined (attempts_exhausted)");
  });
});

describe("formatRunList", () => {
  it("prints one row per run and says so when nothing matches", () => {
    expect(formatRunList([])).toBe("No workflow runs match.\n");
    const out = formatRunList([
      { id: "run-1", workflowId: "w", name: "checkout", status: "running", createdAt: t0, updatedAt: t0 },
    ]);
    expect(out).toContain("run-1");
    expect(out).toContain("running");
  });
});
