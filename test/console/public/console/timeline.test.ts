import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildTimeline, formatDuration, PAUSE_KINDS, placeOnAxis } from "#src/console/public/console/timeline.js";
import { decodeContinuation } from "#src/engine/execution/continuation.ts";
import type { WorkflowEventPayloads } from "#src/engine/execution/events.ts";

type Event = {
  seq: number;
  type: string;
  at: number;
  payload: Record<string, unknown>;
  continuation?: { kind: string; step?: string; until?: number; event?: string };
};

/** A run view from [type, at, payload] rows, the way the API returns it: each step_completed with its decoded continuation. */
function view(status: string, rows: [string, number, Record<string, unknown>][]) {
  const events: Event[] = rows.map(([type, at, payload], i) =>
    type === "step_completed"
      ? {
          seq: i + 1,
          type,
          at,
          payload,
          continuation: decodeContinuation(payload as WorkflowEventPayloads["step_completed"]),
        }
      : { seq: i + 1, type, at, payload },
  );
  return { id: "r", name: "order", status, createdAt: events[0]!.at, updatedAt: events[events.length - 1]!.at, events };
}

const created: [string, number, Record<string, unknown>] = [
  "workflow_created",
  1000,
  { workflowName: "order", writes: { data: {} } },
];

describe("buildTimeline: one row per step attempt", () => {
  it.each([
    {
      name: "a failing-then-succeeding step, then the last step: the backoff shows as the first attempt's retry wait",
      run: view("completed", [
        created,
        ["step_started", 1001, { step: "start", attempt: 1 }],
        ["step_failed", 1004, { step: "start", attempt: 1, reason: "card declined", retryable: true }],
        ["step_started", 2204, { step: "start", attempt: 2 }],
        ["step_completed", 2205, { step: "start", writes: {}, next_step: "pack" }],
        ["step_started", 2205, { step: "pack", attempt: 1 }],
        ["step_completed", 4700, { step: "pack", writes: {} }],
        ["workflow_completed", 4700, { result: { packed: true } }],
      ]),
      now: 9999,
      rows: [
        {
          step: "start",
          attempt: 1,
          start: 1001,
          end: 1004,
          outcome: "failed",
          reason: "card declined",
          retryable: true,
          retryWait: { start: 1004, end: 2204, pending: false },
        },
        { step: "start", attempt: 2, start: 2204, end: 2205, outcome: "completed", nextStep: "pack" },
        { step: "pack", attempt: 1, start: 2205, end: 4700, outcome: "completed", nextStep: undefined },
      ],
      outcome: { status: "completed", at: 4700, result: { packed: true } },
      axis: { start: 1000, end: 4700 },
    },
    {
      name: "waiting to retry: the wait runs up to now",
      run: view("running", [
        created,
        ["step_started", 1001, { step: "start", attempt: 1 }],
        ["step_failed", 1010, { step: "start", attempt: 1, reason: "timeout", retryable: true }],
      ]),
      now: 1500,
      rows: [
        {
          step: "start",
          attempt: 1,
          start: 1001,
          end: 1010,
          outcome: "failed",
          reason: "timeout",
          retryable: true,
          retryWait: { start: 1010, end: 1500, pending: true },
        },
      ],
      outcome: { status: "running", at: null },
      axis: { start: 1000, end: 1500 },
    },
    {
      name: "a step in flight: its bar grows to now",
      run: view("running", [created, ["step_started", 1001, { step: "start", attempt: 1 }]]),
      now: 1800,
      rows: [{ step: "start", attempt: 1, start: 1001, end: 1800, outcome: "running" }],
      outcome: { status: "running", at: null },
      axis: { start: 1000, end: 1800 },
    },
    {
      name: "a non-retryable failure ends the run: no wait",
      run: view("failed", [
        created,
        ["step_started", 1001, { step: "start", attempt: 1 }],
        ["step_failed", 1002, { step: "start", attempt: 1, reason: "no such address", retryable: false }],
        ["workflow_failed", 1002, { reason: "no such address", cause: "non_retryable" }],
      ]),
      now: 5000,
      rows: [
        {
          step: "start",
          attempt: 1,
          start: 1001,
          end: 1002,
          outcome: "failed",
          reason: "no such address",
          retryable: false,
        },
      ],
      outcome: { status: "failed", at: 1002, error: "no such address", cause: "non_retryable" },
      axis: { start: 1000, end: 1002 },
    },
    {
      name: "attempts exhausted: the last attempt's retryable is false",
      run: view("failed", [
        created,
        ["step_started", 1001, { step: "start", attempt: 1 }],
        ["step_failed", 1002, { step: "start", attempt: 1, reason: "boom", retryable: true }],
        ["step_started", 1100, { step: "start", attempt: 2 }],
        ["step_failed", 1101, { step: "start", attempt: 2, reason: "boom", retryable: false }],
        ["workflow_failed", 1101, { reason: "boom", cause: "attempts_exhausted" }],
      ]),
      now: 5000,
      rows: [
        {
          step: "start",
          attempt: 1,
          start: 1001,
          end: 1002,
          outcome: "failed",
          reason: "boom",
          retryable: true,
          retryWait: { start: 1002, end: 1100, pending: false },
        },
        { step: "start", attempt: 2, start: 1100, end: 1101, outcome: "failed", reason: "boom", retryable: false },
      ],
      outcome: { status: "failed", at: 1101, error: "boom", cause: "attempts_exhausted" },
      axis: { start: 1000, end: 1101 },
    },
    {
      name: "only created so far",
      run: view("running", [created]),
      now: 1200,
      rows: [],
      outcome: { status: "running", at: null },
      axis: { start: 1000, end: 1200 },
    },
  ])("$name", ({ run, now, rows, outcome, axis }) => {
    const timeline = buildTimeline(run, now);
    expect(timeline.rows).toEqual(rows);
    expect(timeline.marks).toEqual([]);
    expect(timeline.outcome).toEqual(outcome);
    expect({ start: timeline.start, end: timeline.end }).toEqual(axis);
  });
});

describe("buildTimeline: sleeps and waits are rows of their own, events and a cancel are marks", () => {
  const first: [string, number, Record<string, unknown>][] = [
    created,
    ["step_started", 1001, { step: "start", attempt: 1 }],
  ];
  const startDone = { step: "start", attempt: 1, start: 1001, end: 1002, outcome: "completed", nextStep: "next" };
  const completed = (extra: Record<string, unknown>): [string, number, Record<string, unknown>] => [
    "step_completed",
    1002,
    { step: "start", writes: {}, next_step: "next", ...extra },
  ];
  it.each([
    {
      name: "a sleep that is over: from the completion to the next start, with the wake time",
      run: view("running", [
        ...first,
        completed({ wake_at: 2500 }),
        ["step_started", 2503, { step: "next", attempt: 1 }],
      ]),
      now: 2600,
      rows: [
        startDone,
        { pause: "sleep", start: 1002, end: 2503, pending: false, until: 2500, outcome: "woke" },
        { step: "next", attempt: 1, start: 2503, end: 2600, outcome: "running" },
      ],
      marks: [],
      outcome: { status: "running", at: null },
    },
    {
      name: "sleeping now: the bar grows to now and keeps the wake time",
      run: view("running", [...first, completed({ wake_at: 86_401_002 })]),
      now: 5000,
      rows: [startDone, { pause: "sleep", start: 1002, end: 5000, pending: true, until: 86_401_002 }],
      marks: [],
      outcome: { status: "running", at: null },
    },
    {
      name: "a wait that got its event: the event is a mark, the next start took it",
      run: view("completed", [
        ...first,
        completed({ waiting_for: "approval", timeout_at: 9000 }),
        ["event_received", 3000, { name: "approval", payload: { by: "ada" } }],
        ["step_started", 3001, { step: "next", attempt: 1, event_seq: 4 }],
        ["step_completed", 3002, { step: "next", writes: {} }],
        ["workflow_completed", 3002, { result: null }],
      ]),
      now: 9999,
      rows: [
        startDone,
        { pause: "wait", start: 1002, end: 3001, pending: false, event: "approval", until: 9000, outcome: "received" },
        { step: "next", attempt: 1, start: 3001, end: 3002, outcome: "completed", nextStep: undefined },
      ],
      marks: [{ mark: "event", at: 3000, name: "approval", payload: { by: "ada" } }],
      outcome: { status: "completed", at: 3002, result: null },
    },
    {
      name: "a wait that timed out: the next start took no event",
      run: view("running", [
        ...first,
        completed({ waiting_for: "approval", timeout_at: 2002 }),
        ["step_started", 2003, { step: "next", attempt: 1 }],
      ]),
      now: 2003,
      rows: [
        startDone,
        { pause: "wait", start: 1002, end: 2003, pending: false, event: "approval", until: 2002, outcome: "timed_out" },
        { step: "next", attempt: 1, start: 2003, end: 2003, outcome: "running" },
      ],
      marks: [],
      outcome: { status: "running", at: null },
    },
    {
      name: "waiting without a timeout, an event for later already received",
      run: view("running", [
        ...first,
        ["event_received", 1001, { name: "later", payload: 1 }],
        completed({ waiting_for: "approval" }),
      ]),
      now: 4000,
      rows: [startDone, { pause: "wait", start: 1002, end: 4000, pending: true, event: "approval" }],
      marks: [{ mark: "event", at: 1001, name: "later", payload: 1 }],
      outcome: { status: "running", at: null },
    },
    {
      name: "cancelled while asleep: the sleep ends with the run, the cancel is a mark",
      run: view("cancelled", [
        ...first,
        completed({ wake_at: 86_401_002 }),
        ["workflow_cancelled", 4000, { reason: "no longer needed" }],
      ]),
      now: 9999,
      rows: [
        startDone,
        { pause: "sleep", start: 1002, end: 4000, pending: false, until: 86_401_002, outcome: "ended" },
      ],
      marks: [{ mark: "cancel", at: 4000, reason: "no longer needed" }],
      outcome: { status: "cancelled", at: 4000, reason: "no longer needed" },
    },
    {
      name: "an interrupted attempt is a failed attempt with that reason, retried",
      run: view("running", [
        ...first,
        ["step_failed", 1500, { step: "start", attempt: 1, reason: "interrupted", retryable: true }],
        ["step_started", 1501, { step: "start", attempt: 2 }],
      ]),
      now: 1600,
      rows: [
        {
          step: "start",
          attempt: 1,
          start: 1001,
          end: 1500,
          outcome: "failed",
          reason: "interrupted",
          retryable: true,
          retryWait: { start: 1500, end: 1501, pending: false },
        },
        { step: "start", attempt: 2, start: 1501, end: 1600, outcome: "running" },
      ],
      marks: [],
      outcome: { status: "running", at: null },
    },
  ])("$name", ({ run, now, rows, marks, outcome }) => {
    const timeline = buildTimeline(run, now);
    expect(timeline.rows).toEqual(rows);
    expect(timeline.marks).toEqual(marks);
    expect(timeline.outcome).toEqual(outcome);
  });

  it("reads what comes next from the view's continuation, and draws a kind it does not know as a pause by its name", () => {
    const run = view("running", [...first, completed({})]);
    // A continuation kind added to the engine later: the console learns it only from the view.
    (run.events[2] as Event).continuation = { kind: "wait_for_children", step: "next", until: 7000 };
    expect(buildTimeline(run, 3000).rows).toEqual([
      startDone,
      { pause: "wait_for_children", start: 1002, end: 3000, pending: true, until: 7000 },
    ]);
  });

  it("draws a step that started child runs as a children pause until they ended", () => {
    const run = view("running", [...first, completed({})]);
    (run.events[2] as Event).continuation = { kind: "children", step: "next" };
    expect(buildTimeline(run, 3000).rows).toEqual([
      startDone,
      { pause: "children", start: 1002, end: 3000, pending: true },
    ]);
  });
});

describe("PAUSE_KINDS: each pause the engine makes has a bar and a legend", () => {
  const css = readFileSync(new URL("../../../../src/console/public/console/console.css", import.meta.url), "utf8");
  // The continuations that pause a run (src/engine/execution/continuation.ts), as buildTimeline names their rows.
  it.each(["sleep", "wait", "children"])("%s", (pause) => {
    const kind = PAUSE_KINDS.find((k) => k.pause === pause);
    expect(kind?.legend).toMatch(/\w/);
    // The row's bar and the legend's key are both styled (a rule naming both selectors).
    expect(css).toMatch(new RegExp(`\\.bar\\.pause-${pause},\\s*\\.key\\.pause-${pause}\\s*\\{[^}]*background`));
  });
});

describe("placeOnAxis", () => {
  it.each([
    { span: { start: 0, end: 50 }, axis: { start: 0, end: 100 }, place: { left: 0, width: 50 } },
    { span: { start: 50, end: 100 }, axis: { start: 0, end: 100 }, place: { left: 50, width: 50 } },
    {
      name: "an instant still gets a sliver",
      span: { start: 30, end: 30 },
      axis: { start: 0, end: 100 },
      place: { left: 30, width: 0.5 },
    },
    {
      name: "a zero-length axis",
      span: { start: 5, end: 5 },
      axis: { start: 5, end: 5 },
      place: { left: 0, width: 0.5 },
    },
    {
      name: "never past the right edge",
      span: { start: 100, end: 100 },
      axis: { start: 0, end: 100 },
      place: { left: 99.5, width: 0.5 },
    },
  ])(
    "$span.start–$span.end on $axis.start–$axis.end → left $place.left %, width $place.width %",
    ({ span, axis, place }) => {
      expect(placeOnAxis(span, axis)).toEqual(place);
    },
  );
});

describe("formatDuration", () => {
  it.each([
    [0, "0 ms"],
    [999, "999 ms"],
    [1000, "1.0 s"],
    [1234, "1.2 s"],
    [12_345, "12 s"],
    [60_000, "1 min"],
    [185_000, "3 min 5 s"],
  ])("%d ms → %s", (ms, text) => expect(formatDuration(ms)).toBe(text));
});

describe("buildTimeline: a run's rollbacks are rows of their own, after the failure", () => {
  it("draws each rollback attempt, its retry wait, and the run's failure", () => {
    const run = view("failed", [
      created,
      ["step_started", 1001, { step: "start", attempt: 1 }],
      ["step_completed", 1100, { step: "start", writes: {}, next_step: "ship" }],
      ["step_started", 1100, { step: "ship", attempt: 1 }],
      ["step_failed", 1200, { step: "ship", attempt: 1, reason: "out of stock", retryable: false }],
      ["rollback_started", 1200, { step: "start", attempt: 1, completed_seq: 3 }],
      ["rollback_failed", 1250, { step: "start", attempt: 1, completed_seq: 3, reason: "down", retryable: true }],
      ["rollback_started", 1300, { step: "start", attempt: 2, completed_seq: 3 }],
      ["rollback_completed", 1400, { step: "start", completed_seq: 3 }],
      ["workflow_failed", 1400, { reason: "out of stock", cause: "non_retryable" }],
    ]);
    const timeline = buildTimeline(run, 2000);
    expect(timeline.rows.slice(2)).toEqual([
      {
        step: "start",
        attempt: 1,
        start: 1200,
        end: 1250,
        outcome: "failed",
        reason: "down",
        retryable: true,
        rollback: true,
        retryWait: { start: 1250, end: 1300, pending: false },
      },
      { step: "start", attempt: 2, start: 1300, end: 1400, outcome: "completed", rollback: true },
    ]);
    expect(timeline.outcome).toEqual({ status: "failed", at: 1400, error: "out of stock", cause: "non_retryable" });
  });

  it("marks a cancel that rolls back first once, where it was asked for", () => {
    const run = view("cancelled", [
      created,
      ["step_started", 1001, { step: "start", attempt: 1 }],
      ["step_completed", 1100, { step: "start", writes: {}, waiting_for: "go", next_step: "next" }],
      ["cancel_requested", 1500, { reason: "no longer needed" }],
      ["rollback_started", 1500, { step: "start", attempt: 1, completed_seq: 3 }],
      ["rollback_completed", 1600, { step: "start", completed_seq: 3 }],
      ["workflow_cancelled", 1600, { reason: "no longer needed" }],
    ]);
    expect(buildTimeline(run, 2000).marks).toEqual([{ mark: "cancel", at: 1500, reason: "no longer needed" }]);
  });
});
