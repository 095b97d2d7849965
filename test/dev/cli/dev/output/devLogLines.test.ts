import { describe, expect, it } from "vitest";
import type { RunEventView } from "#src/engine/execution/describeRun.ts";
import {
  formatRequestLine,
  formatStepLines,
  isIdleRecoveryLine,
  parseMiniflareRequestLine,
  shortRunId,
  spokenDuration,
} from "#src/dev/cli/dev/output/devLogLines.ts";

describe("request lines", () => {
  it.each([
    [{ method: "GET", path: "/", status: 200, ms: 3 }, "GET / → 200 in 3 ms"],
    [{ method: "POST", path: "/api/orders", status: 201, ms: 41 }, "POST /api/orders → 201 in 41 ms"],
    [{ method: "GET", path: "/missing", status: 404, ms: 0 }, "GET /missing → 404 in 0 ms"],
  ])("%j prints %s", (record, line) => {
    expect(formatRequestLine(record)).toBe(line);
  });

  it.each([
    ["GET / 200 OK (3ms)", { method: "GET", path: "/", status: 200, ms: 3 }],
    ["POST /api/x 500 Internal Server Error (12ms)", { method: "POST", path: "/api/x", status: 500, ms: 12 }],
    ["GET /a 302 Found (1ms) extra detail", { method: "GET", path: "/a", status: 302, ms: 1 }],
    ["Ready on http://127.0.0.1:8787", null],
    ["Updated and ready on http://127.0.0.1:8787", null],
    ["get / 200 OK (3ms)", null],
  ])("Miniflare's %j parses to %j", (message, record) => {
    expect(parseMiniflareRequestLine(message)).toEqual(record);
  });
});

describe("recovery sweep lines", () => {
  it.each(["Re-enqueued 0 workflow(s)", "cron my-app/__workflow-recovery: 200 Re-enqueued 0 workflow(s)"])(
    "%j is idle: true",
    (message) => {
      expect(isIdleRecoveryLine(message)).toBe(true);
    },
  );

  it.each([
    "Re-enqueued 2 workflow(s)",
    "cron my-app/__workflow-recovery: 200 Re-enqueued 1 workflow(s)",
    "cron my-app/__workflow-recovery: 500 Re-enqueued 0 workflow(s)",
    "Recovery sweep: Re-enqueued 0 workflow(s) in my notes",
  ])("%j is idle: false", (message) => {
    expect(isIdleRecoveryLine(message)).toBe(false);
  });
});

describe("workflow step lines", () => {
  const t0 = 1_800_000_000_000;
  const id = "3f2a9c1d-aaaa-bbbb-cccc-000000000000";
  const created: RunEventView = {
    seq: 1,
    type: "workflow_created",
    payload: { workflowName: "checkout", writes: { data: {} } },
    at: t0,
  };
  const start1: RunEventView = { seq: 2, type: "step_started", payload: { step: "charge", attempt: 1 }, at: t0 + 1 };
  const fail1: RunEventView = {
    seq: 3,
    type: "step_failed",
    payload: { step: "charge", attempt: 1, reason: "card declined", retryable: true },
    at: t0 + 6,
  };
  const start2: RunEventView = { seq: 4, type: "step_started", payload: { step: "charge", attempt: 2 }, at: t0 + 100 };
  const done2: RunEventView = {
    seq: 5,
    type: "step_completed",
    payload: { step: "charge", writes: {}, next_step: "pack" },
    continuation: { kind: "next_step", step: "pack" },
    at: t0 + 103,
  };
  const start3: RunEventView = { seq: 6, type: "step_started", payload: { step: "pack", attempt: 1 }, at: t0 + 104 };
  const done3: RunEventView = {
    seq: 7,
    type: "step_completed",
    payload: { step: "pack", writes: {} },
    continuation: { kind: "done" },
    at: t0 + 110,
  };
  const finished: RunEventView = { seq: 8, type: "workflow_completed", payload: { result: null }, at: t0 + 110 };
  const failed: RunEventView = {
    seq: 8,
    type: "workflow_failed",
    payload: { reason: "out of stock", cause: "non_retryable" },
    at: t0 + 110,
  };

  it.each<[string, RunEventView[], RunEventView[], string[]]>([
    ["a run's start", [created], [], ["run 3f2a9c1d: checkout started"]],
    [
      "a retried step and the next",
      [start1, fail1, start2, done2],
      [created],
      [
        "run 3f2a9c1d: charge#1 failed in 5 ms: card declined (will retry)",
        "run 3f2a9c1d: charge#2 completed in 3 ms → pack",
      ],
    ],
    [
      "an attempt started before the events at hand",
      [done2],
      [created, start1, fail1, start2],
      ["run 3f2a9c1d: charge#2 completed in 3 ms → pack"],
    ],
    [
      "the last step and the end",
      [start3, done3, finished],
      [],
      ["run 3f2a9c1d: pack#1 completed in 6 ms → done", "run 3f2a9c1d: checkout completed"],
    ],
    ["a failed run", [failed], [], ["run 3f2a9c1d: checkout failed: out of stock"]],
    ["a step that started and has not ended", [start3], [], []],
    [
      "a step that puts the run to sleep",
      [
        {
          seq: 5,
          type: "step_completed",
          payload: { step: "charge", writes: {}, next_step: "pack", wake_at: t0 + 5_103 },
          at: t0 + 103,
        } as RunEventView,
      ],
      [created, start1, fail1, start2],
      ["run 3f2a9c1d: charge#2 completed in 3 ms → pack, sleeps 5 s"],
    ],
    [
      "a step that waits for an event, with a timeout, and the event",
      [
        {
          seq: 5,
          type: "step_completed",
          payload: {
            step: "charge",
            writes: {},
            next_step: "pack",
            waiting_for: "approval",
            timeout_at: t0 + 3_600_103,
          },
          at: t0 + 103,
        } as RunEventView,
        { seq: 6, type: "event_received", payload: { name: "approval", payload: null }, at: t0 + 900 },
      ],
      [created, start1, fail1, start2],
      [
        'run 3f2a9c1d: charge#2 completed in 3 ms → pack, waits for "approval" (at most 1 h)',
        'run 3f2a9c1d: received "approval"',
      ],
    ],
    [
      "a wait without a timeout",
      [
        {
          seq: 5,
          type: "step_completed",
          payload: { step: "charge", writes: {}, next_step: "pack", waiting_for: "approval" },
          at: t0 + 103,
        } as RunEventView,
      ],
      [created, start2],
      ['run 3f2a9c1d: charge#2 completed in 3 ms → pack, waits for "approval"'],
    ],
    [
      "a cancelled run",
      [{ seq: 6, type: "workflow_cancelled", payload: { reason: "no longer needed" }, at: t0 + 900 }],
      [],
      ["run 3f2a9c1d: checkout cancelled: no longer needed"],
    ],
  ])("%s", (_name, events, before, lines) => {
    expect(formatStepLines(id, "checkout", events, before)).toEqual(lines);
  });

  it.each([
    [0, "0 ms"],
    [250, "250 ms"],
    [5_000, "5 s"],
    [1_500, "1.5 s"],
    [90_000, "1.5 min"],
    [3_600_000, "1 h"],
    [86_400_000 * 3, "3 d"],
  ])("%d ms is spoken as %s", (ms, spoken) => {
    expect(spokenDuration(ms)).toBe(spoken);
  });

  it("shortens run ids to 8 characters", () => {
    expect(shortRunId(id)).toBe("3f2a9c1d");
  });
});
