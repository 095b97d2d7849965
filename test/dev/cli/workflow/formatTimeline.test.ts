import { describe, expect, it } from "vitest";
import { decodeContinuation } from "#src/engine/execution/continuation.ts";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import type { WorkflowEventPayloads } from "#src/engine/execution/events.ts";
import {
  formatFollowedRow,
  formatRunList,
  formatRunTimeline,
  LIST_WIDTH,
  listStatus,
  timelineRows,
  type RunSummaryWithPause,
} from "#src/dev/cli/workflow/formatTimeline.ts";

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
      continuation: { kind: "next_step", step: "ship" },
      at: t0 + 1_100,
    },
    { seq: 6, type: "step_started", payload: { step: "ship", attempt: 1 }, at: t0 + 1_101 },
    {
      seq: 7,
      type: "step_completed",
      payload: { step: "ship", writes: {} },
      continuation: { kind: "done" },
      at: t0 + 1_250,
    },
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

  it("shows each rollback attempt after the failure, and what it undid", () => {
    const failed: WorkflowRunView = {
      ...retried,
      status: "failed",
      result: undefined,
      error: "out of stock",
      rolledBack: ["start"],
      events: [
        ...retried.events.slice(0, 6),
        {
          seq: 7,
          type: "step_failed",
          payload: { step: "ship", attempt: 1, reason: "out of stock", retryable: false },
          at: t0 + 1_200,
        },
        { seq: 8, type: "rollback_started", payload: { step: "start", attempt: 1, completed_seq: 5 }, at: t0 + 1_200 },
        {
          seq: 9,
          type: "rollback_failed",
          payload: { step: "start", attempt: 1, completed_seq: 5, reason: "refund down", retryable: true },
          at: t0 + 1_210,
        },
        { seq: 10, type: "rollback_started", payload: { step: "start", attempt: 2, completed_seq: 5 }, at: t0 + 1_300 },
        { seq: 11, type: "rollback_completed", payload: { step: "start", completed_seq: 5 }, at: t0 + 1_340 },
        {
          seq: 12,
          type: "workflow_failed",
          payload: { reason: "out of stock", cause: "non_retryable" },
          at: t0 + 1_340,
        },
      ],
      updatedAt: t0 + 1_340,
    };
    expect(formatRunTimeline(failed).split("\n")[0]).toContain("failed after 1340 ms: out of stock; rolled back start");
    const rows = timelineRows(failed).map((row) => row.join("|"));
    expect(rows.slice(7, 11)).toEqual([
      "8|+1200 ms|rollback_started|start|1||undoing the completion at seq 5",
      "9|+1210 ms|rollback_failed|start|1|10 ms|refund down (will retry)",
      "10|+1300 ms|rollback_started|start|2||undoing the completion at seq 5",
      "11|+1340 ms|rollback_completed|start||40 ms|rolled back",
    ]);
  });
});

/** A run view from [type, at offset, payload] rows, as the API serves it (a step_completed with its continuation). */
function run(
  status: WorkflowRunView["status"],
  rows: [string, number, Record<string, unknown>][],
  extra: Partial<WorkflowRunView> = {},
): WorkflowRunView {
  const events = rows.map(([type, at, payload], i) => ({
    seq: i + 1,
    type,
    payload,
    at: t0 + at,
    ...(type === "step_completed"
      ? { continuation: decodeContinuation(payload as WorkflowEventPayloads["step_completed"]) }
      : {}),
  })) as WorkflowRunView["events"];
  return {
    id: "run-2",
    workflowId: "w",
    name: "remind",
    status,
    createdAt: t0,
    updatedAt: events[events.length - 1]!.at,
    events,
    ...extra,
  };
}

const created: [string, number, Record<string, unknown>] = [
  "workflow_created",
  0,
  { workflowName: "remind", writes: { data: null } },
];

describe("formatRunTimeline: sleeps, waits, events, cancels, interruptions", () => {
  it.each([
    {
      name: "a debounced run: queued under its key, the later starts' data, and when it left the queue",
      run: run("completed", [
        ["workflow_created", 0, { workflowName: "remind", writes: { data: { n: 0 } }, flow_key: "acme", queued: true }],
        ["start_replaced", 300, { writes: { data: { n: 1 } } }],
        ["workflow_dequeued", 1_300, {}],
        ["step_started", 1_301, { step: "start", attempt: 1 }],
        ["step_completed", 1_302, { step: "start", writes: {} }],
        ["workflow_completed", 1_302, { result: null }],
      ]),
      lines: {
        1: ["workflow_created", 'data {"n":0}, queued under key "acme"'],
        2: ["start_replaced", 'a later start replaced the data: {"n":1}'],
        3: ["workflow_dequeued", "left the queue after 1300 ms"],
      },
    },
    {
      name: "a run started with an idempotency key",
      run: run("running", [
        [
          "workflow_created",
          0,
          { workflowName: "remind", writes: { data: null }, idempotency_key: "order-7", idempotent_until: t0 + 1 },
        ],
      ]),
      lines: { 1: ['data null, idempotency key "order-7"'] },
    },
    {
      name: "a sleep between two steps: its length on the completion, how long it lasted on the next start",
      run: run("completed", [
        created,
        ["step_started", 1, { step: "start", attempt: 1 }],
        ["step_completed", 2, { step: "start", writes: {}, next_step: "nudge", wake_at: t0 + 1_502 }],
        ["step_started", 1_510, { step: "nudge", attempt: 1 }],
        ["step_completed", 1_511, { step: "nudge", writes: {} }],
        ["workflow_completed", 1_511, { result: null }],
      ]),
      lines: {
        3: ["step_completed", "next: nudge, sleeps 1500 ms (until +1502 ms)"],
        4: ["step_started", "nudge", "woke after 1508 ms"],
      },
    },
    {
      name: "a wait that gets its event: the event's name and payload, and the start that took it",
      run: run("completed", [
        created,
        ["step_started", 1, { step: "start", attempt: 1 }],
        [
          "step_completed",
          2,
          { step: "start", writes: {}, next_step: "approved", waiting_for: "approval", timeout_at: t0 + 60_002 },
        ],
        ["event_received", 900, { name: "approval", payload: { by: "ada" } }],
        ["step_started", 901, { step: "approved", attempt: 1, event_seq: 4 }],
        ["step_completed", 902, { step: "approved", writes: {} }],
        ["workflow_completed", 902, { result: { by: "ada" } }],
      ]),
      lines: {
        3: ['next: approved, waits for "approval" (timeout at +60.0 s)'],
        4: ["event_received", '"approval" {"by":"ada"}'],
        5: ['got "approval" after 899 ms'],
      },
    },
    {
      name: "a wait that times out",
      run: run("running", [
        created,
        ["step_started", 1, { step: "start", attempt: 1 }],
        [
          "step_completed",
          2,
          { step: "start", writes: {}, next_step: "approved", waiting_for: "approval", timeout_at: t0 + 1_002 },
        ],
        ["step_started", 1_003, { step: "approved", attempt: 1 }],
      ]),
      lines: { 4: ["wait timed out after 1001 ms"] },
    },
    {
      name: "an interrupted attempt and a retry-after",
      run: run("running", [
        created,
        ["step_started", 1, { step: "start", attempt: 1 }],
        ["step_failed", 5, { step: "start", attempt: 1, reason: "interrupted", retryable: true }],
        ["step_started", 6, { step: "start", attempt: 2 }],
        ["step_failed", 10, { step: "start", attempt: 2, reason: "busy", retryable: true, retry_at: t0 + 1_210 }],
      ]),
      lines: {
        3: ["step_failed", "interrupted (will retry)"],
        4: ["retry after waiting 1 ms"],
        5: ["busy (will retry), asked to retry in 1200 ms"],
      },
    },
    {
      name: "a cancelled run: the reason on the event",
      run: run(
        "cancelled",
        [
          created,
          ["step_started", 1, { step: "start", attempt: 1 }],
          ["step_completed", 2, { step: "start", writes: {}, next_step: "nudge", wake_at: t0 + 86_400_002 }],
          ["workflow_cancelled", 40, { reason: "no longer needed" }],
        ],
        { cancelReason: "no longer needed" },
      ),
      lines: { 4: ["workflow_cancelled", "reason: no longer needed"] },
    },
    {
      name: "a fan-out: the children asked for, each child's end, and the step that reads them",
      run: run("completed", [
        created,
        ["step_started", 1, { step: "start", attempt: 1 }],
        [
          "step_completed",
          2,
          {
            step: "start",
            writes: {},
            next_step: "collect",
            children: [
              { run_id: "aaaaaaaa11111111.x", workflow: "square" },
              { run_id: "bbbbbbbb22222222.y", workflow: "square" },
            ],
          },
        ],
        ["child_finished", 40, { run_id: "bbbbbbbb22222222.y", workflow: "square", status: "failed", error: "no" }],
        ["child_finished", 90, { run_id: "aaaaaaaa11111111.x", workflow: "square", status: "completed", result: 4 }],
        ["step_started", 91, { step: "collect", attempt: 1 }],
      ]),
      lines: {
        3: ["step_completed", "next: collect, waits for 2 children"],
        4: ["child_finished", "bbbbbbbb (square) failed: no"],
        5: ["child_finished", "aaaaaaaa (square) completed: result 4"],
        6: ["children ended after 89 ms"],
      },
    },
  ])("$name", ({ run: view, lines }) => {
    const text = formatRunTimeline(view);
    for (const [seq, parts] of Object.entries(lines)) {
      const line = text.split("\n").find((l) => l.startsWith(`${seq} `))!;
      for (const part of parts) expect(line, `event ${seq}`).toContain(part);
    }
  });

  it("lists a parent's children under its timeline, and heads a child's timeline with its parent", () => {
    const parent = run("waiting", [created], {
      waitingForChildren: { total: 2, finished: 1 },
      children: [
        { runId: "child-a", workflow: "square", status: "completed", result: 4 },
        { runId: "child-b", workflow: "square", status: "running" },
      ],
    });
    const text = formatRunTimeline(parent);
    expect(text.split("\n")[0]).toContain("waiting for its children (1 of 2 ended)");
    const listed = text.split("\n").slice(text.split("\n").findIndex((l) => l.startsWith("child run")));
    expect(listed[0]).toMatch(/^child run\s+workflow\s+status\s+outcome$/);
    expect(listed[1]).toMatch(/^child-a\s+square\s+completed\s+4$/);
    expect(listed[2]).toMatch(/^child-b\s+square\s+running$/);
    const child = formatRunTimeline(run("completed", [created], { parentRunId: "parent-1" }));
    expect(child.split("\n")[1]).toBe("child of run parent-1");
    expect(child).not.toContain("child run");
  });

  it("reads what comes next from each step_completed's continuation, and names a pause kind it has no words for", () => {
    const view = run("running", [
      created,
      ["step_started", 1, { step: "start", attempt: 1 }],
      ["step_completed", 2, { step: "start", writes: {}, next_step: "next" }],
      ["step_started", 700, { step: "next", attempt: 1 }],
    ]);
    // A continuation kind added to the engine later: the timeline learns it only from the view.
    Object.assign(view.events[2]!, { continuation: { kind: "wait_for_children", step: "next", until: t0 + 5_002 } });
    const text = formatRunTimeline(view);
    const line = (seq: number) => text.split("\n").find((l) => l.startsWith(`${seq} `))!;
    expect(line(3)).toContain("next: next, wait_for_children (until +5002 ms)");
    expect(line(4)).toContain("wait_for_children ended after 698 ms");
  });

  it.each([
    {
      name: "cancelled",
      view: run("cancelled", [created, ["workflow_cancelled", 40, { reason: "stop" }]], { cancelReason: "stop" }),
      heading: "cancelled after 40 ms: stop",
    },
    {
      name: "sleeping",
      view: run("running", [created], { wakeAt: Date.UTC(2026, 10, 22, 11, 0, 0) }),
      heading: "sleeping until 2026-11-22T11:00:00Z",
    },
    {
      name: "waiting",
      view: run("running", [created], { waitingFor: { name: "approval" } }),
      heading: 'waiting for "approval"',
    },
    {
      name: "waiting with a timeout",
      view: run("running", [created], {
        waitingFor: { name: "approval", timeoutAt: Date.UTC(2026, 10, 22, 11, 0, 0) },
      }),
      heading: 'waiting for "approval" until 2026-11-22T11:00:00Z',
    },
    {
      name: "running",
      view: run("running", [created, ["step_started", 30, { step: "start", attempt: 1 }]]),
      heading: "running for 30 ms so far",
    },
    {
      name: "queued",
      view: run("queued", [created, ["start_replaced", 20, { writes: { data: null } }]], {
        queued: {
          key: "acme",
          waitsFor: 'a concurrency slot: 2 of 2 runs of key "acme" are active',
          ahead: 3,
        },
      }),
      heading: 'queued for 20 ms, waiting for a concurrency slot: 2 of 2 runs of key "acme" are active',
    },
    {
      name: "throttled",
      view: run("queued", [created], {
        queued: { key: "", waitsFor: "the throttle", ahead: 0, notBefore: Date.UTC(2026, 10, 22, 11, 0, 0) },
      }),
      heading: "queued for 0 ms, waiting for the throttle (not before 2026-11-22T11:00:00Z)",
    },
  ])("heads a $name run with its state", ({ view, heading }) => {
    expect(formatRunTimeline(view).split("\n")[0]).toBe(`Run run-2 of "remind" (workflow id w), ${heading}`);
  });

  it("follows a run with the same rows, one line each, in fixed columns", () => {
    const rows = timelineRows(retried);
    expect(rows).toHaveLength(retried.events.length);
    expect(formatFollowedRow(rows[2]!)).toBe(
      "3     +35 ms     step_failed         start         1        30 ms      card declined (will retry)",
    );
  });
});

describe("formatRunList", () => {
  const summary = (over: Partial<RunSummaryWithPause>): RunSummaryWithPause => ({
    id: `${"3f2a9c1d".padEnd(64, "0")}.order-42`,
    workflowId: "order-42",
    name: "checkout",
    status: "running",
    createdAt: t0,
    updatedAt: t0 + 1000,
    ...over,
  });

  it("says so when nothing matches", () => {
    expect(formatRunList([])).toBe("No workflow runs match.\n");
  });

  it.each([
    {
      name: "running",
      run: summary({}),
      cells: ["3f2a9c1d ", "checkout", "running", "2026-11-22T10:00:00Z", "2026-11-22T10:00:01Z"],
    },
    {
      name: "sleeping",
      run: summary({ wakeAt: Date.UTC(2026, 10, 22, 12, 30, 5) }),
      cells: ["sleeping", "until 12:30:05Z"],
    },
    { name: "waiting", run: summary({ waitingFor: { name: "approval" } }), cells: ["waiting", "for approval"] },
    {
      name: "waiting for its children",
      run: summary({ status: "waiting", waitingForChildren: { total: 20, finished: 3 } }),
      cells: ["waiting", "3/20 children"],
    },
    {
      name: "waiting for its children (counts not read)",
      run: summary({ status: "waiting", step: "collect" }),
      cells: ["waiting", "at collect"],
    },
    { name: "cancelled", run: summary({ status: "cancelled" }), cells: ["cancelled"] },
    {
      name: "queued",
      run: summary({ status: "queued", queued: { key: "acme", waitsFor: "its turn", ahead: 2 } }),
      cells: ["queued", '2 ahead, key "…'],
    },
    { name: "failed", run: summary({ status: "failed" }), cells: ["failed"] },
    { name: "failed in a step", run: summary({ status: "failed", step: "charge" }), cells: ["failed", "at charge"] },
    { name: "paused", run: summary({ status: "paused", step: "approve" }), cells: ["paused", "at approve"] },
    { name: "running in a step", run: summary({ step: "charge" }), cells: ["running", "at charge"] },
  ])("shows a $name run", ({ run: row, cells }) => {
    const line = formatRunList([row]).split("\n")[1]!;
    for (const cell of cells) expect(line).toContain(cell);
  });

  it.each([
    [{ key: "acme", waitsFor: "its turn", ahead: 2 }, '2 ahead, key "acme"'],
    [{ key: "acme", waitsFor: "its turn", ahead: 0, priority: 9 }, '0 ahead, key "acme", priority 9'],
    [
      { key: "", waitsFor: "its turn", ahead: 1, priority: 5, fairness: "tenant-b" },
      '1 ahead, key "", fairness "tenant-b"',
    ],
  ])("a queued run's place: %j → %s", (queued, detail) => {
    expect(listStatus(summary({ status: "queued", queued }))).toEqual({ status: "queued", detail });
  });

  it("fits 100 columns with the longest names, ids and waits, and says how to see whole ids", () => {
    const out = formatRunList([
      summary({ name: "w".repeat(64), waitingFor: { name: "e".repeat(100) } }),
      summary({ name: "x".repeat(64), status: "cancelled", id: "f".repeat(200) }),
      summary({ wakeAt: t0 + 5000 }),
    ]);
    for (const line of out.split("\n")) expect(line.length, line).toBeLessThanOrEqual(LIST_WIDTH);
    expect(out).toContain("w".repeat(17) + "…");
    expect(out).toContain("--full");
  });

  it("--full shows whole ids and names", () => {
    const long = summary({ name: "w".repeat(64) });
    const out = formatRunList([long], { full: true });
    expect(out).toContain(long.id);
    expect(out).toContain(long.name);
    expect(out).not.toContain("--full");
  });
});
