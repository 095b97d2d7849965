import { describe, expect, it } from "vitest";
import { checkHistory, formatVerdict, runsNamedBy } from "./chaosChecker.ts";
import type { ChaosHistory, HistoryEvent, HistoryRun } from "./chaosHistory.ts";

function log(...events: [type: string, payload: Record<string, unknown>, at: number][]): HistoryEvent[] {
  return events.map(([type, payload, at], i) => ({ seq: i + 1, type, payload, at }));
}

function oneStepRun(
  id: string,
  name: string,
  at: number,
  end: number,
  result: unknown,
  extra: Partial<HistoryRun> = {},
) {
  return {
    id,
    workflowId: id,
    name,
    status: "completed",
    result,
    events: log(
      ["workflow_created", { workflowName: name }, at],
      ["step_started", { step: "start", attempt: 1 }, at + 1],
      ["step_completed", { step: "start" }, end - 1],
      ["workflow_completed", { result }, end],
    ),
    ...extra,
  } satisfies HistoryRun;
}

/** A history every invariant accepts: a parent and its child, two keyed runs in turn, an idempotent start, an event. */
function goodHistory(): ChaosHistory {
  const parent: HistoryRun = {
    id: "run_parent",
    workflowId: "run_parent",
    name: "parent",
    status: "completed",
    result: { children: [{ runId: "run_child", result: { n: 2 } }] },
    events: log(
      ["workflow_created", { workflowName: "parent" }, 0],
      ["step_started", { step: "start", attempt: 1 }, 1],
      ["step_failed", { step: "start", attempt: 1, reason: "interrupted", retryable: true }, 2],
      ["step_started", { step: "start", attempt: 2 }, 3],
      ["step_completed", { step: "start", next_step: "collect" }, 4],
      ["child_finished", { run_id: "run_child" }, 8],
      ["step_started", { step: "collect", attempt: 1 }, 9],
      ["step_completed", { step: "collect" }, 10],
      ["workflow_completed", { result: {} }, 11],
    ),
  };
  const waiter: HistoryRun = {
    ...oneStepRun("run_waiter", "waiter", 0, 20, null),
    events: log(
      ["workflow_created", { workflowName: "waiter" }, 0],
      ["step_started", { step: "start", attempt: 1 }, 1],
      ["step_completed", { step: "start", next_step: "heard", waiting_for: "go" }, 2],
      ["event_received", { name: "go", payload: { token: "t1" } }, 3],
      ["step_started", { step: "heard", attempt: 1 }, 4],
      ["step_completed", { step: "heard" }, 5],
      ["workflow_completed", { result: null }, 6],
    ),
  };
  // Fails at ship: charge's completion (seq 7), then reserve's (seq 5), rolled back once each.
  const rolled: HistoryRun = {
    id: "run_rolled",
    workflowId: "run_rolled",
    name: "rolled",
    status: "failed",
    events: log(
      ["workflow_created", { workflowName: "rolled" }, 0],
      ["step_started", { step: "start", attempt: 1 }, 1],
      ["step_completed", { step: "start", next_step: "reserve" }, 2],
      ["step_started", { step: "reserve", attempt: 1 }, 3],
      ["step_completed", { step: "reserve", next_step: "charge" }, 4],
      ["step_started", { step: "charge", attempt: 1 }, 5],
      ["step_completed", { step: "charge", next_step: "ship" }, 6],
      ["step_started", { step: "ship", attempt: 1 }, 7],
      ["step_failed", { step: "ship", attempt: 1, reason: "refused", retryable: false }, 8],
      ["rollback_started", { step: "charge", attempt: 1, completed_seq: 7 }, 9],
      ["rollback_failed", { step: "charge", attempt: 1, completed_seq: 7, reason: "interrupted", retryable: true }, 10],
      ["rollback_started", { step: "charge", attempt: 2, completed_seq: 7 }, 11],
      ["rollback_completed", { step: "charge", completed_seq: 7 }, 12],
      ["rollback_started", { step: "reserve", attempt: 1, completed_seq: 5 }, 13],
      ["rollback_completed", { step: "reserve", completed_seq: 5 }, 14],
      ["workflow_failed", { reason: "refused" }, 15],
    ),
  };
  const idem = oneStepRun("run_idem", "idem", 0, 5, null);
  idem.events[0]!.payload.idempotency_key = "k1";
  return {
    runs: [
      parent,
      oneStepRun("run_child", "child", 5, 7, { n: 2 }),
      oneStepRun("run_k1", "keyed", 0, 10, null),
      oneStepRun("run_k2", "keyed", 10, 20, null),
      oneStepRun("run_long", "long", 0, 9, { count: 1, steps: 1 }),
      waiter,
      idem,
      rolled,
    ],
    starts: [
      { workflow: "parent", runId: "run_parent" },
      { workflow: "idem", runId: "run_idem", idempotencyKey: "k1" },
      { workflow: "idem", runId: "run_idem", idempotencyKey: "k1" },
    ],
    sends: [
      { token: "t1", to: { runId: "run_waiter" }, acknowledged: true },
      { token: "t2", to: { runId: "run_waiter" }, acknowledged: false },
    ],
    unanswered: [],
    // The parent and the rolled run crossed a push: build 0 ran their first steps, build 1 the rest.
    ledger: [
      { runId: "run_parent", step: "start", attempt: 1, build: 0 },
      { runId: "run_parent", step: "start", attempt: 2, build: 1 },
      { runId: "run_parent", step: "collect", attempt: 1, build: 1 },
      ...["run_child", "run_k1", "run_k2", "run_long", "run_waiter", "run_idem"].map((runId) => ({
        runId,
        step: "start",
        attempt: 1,
      })),
      { runId: "run_waiter", step: "heard", attempt: 1 },
      ...["start", "reserve", "charge", "ship"].map((step, i) => ({
        runId: "run_rolled",
        step,
        attempt: 1,
        build: i < 2 ? 0 : 1,
      })),
      { runId: "run_rolled", step: "rollback:charge", attempt: 1, build: 1 },
      { runId: "run_rolled", step: "rollback:charge", attempt: 2, build: 1 },
      { runId: "run_rolled", step: "rollback:reserve", attempt: 1, build: 1 },
    ],
    concurrency: [{ workflow: "keyed", limit: 1 }],
    rollbacks: [{ workflow: "rolled", steps: ["reserve", "charge"] }],
    // Build 1's push answered at 4: the parent's collect (started at 9), the rolled run's charge and ship (5, 7).
    pushes: [{ build: 1, at: 4 }],
  };
}

function run(history: ChaosHistory, id: string): HistoryRun {
  return history.runs.find((r) => r.id === id)!;
}

const BAD_CASES: { invariant: string; breaks: string; spoil: (h: ChaosHistory) => void; names: RegExp }[] = [
  {
    invariant: "stuck",
    breaks: "a run left waiting",
    spoil: (h) => {
      run(h, "run_waiter").status = "waiting";
    },
    names: /run_waiter is waiting/,
  },
  {
    invariant: "runs without exactly one terminal event",
    breaks: "a second workflow_completed",
    spoil: (h) => run(h, "run_k1").events.push({ seq: 5, type: "workflow_completed", payload: {}, at: 10 }),
    names: /run_k1 has 2 terminal events/,
  },
  {
    invariant: "runs without exactly one terminal event",
    breaks: "an event after the terminal one",
    spoil: (h) => run(h, "run_k1").events.push({ seq: 5, type: "event_received", payload: {}, at: 10 }),
    names: /run_k1 has events after workflow_completed/,
  },
  {
    invariant: "seq out of order",
    breaks: "a repeated seq",
    spoil: (h) => {
      run(h, "run_child").events[2]!.seq = 2;
    },
    names: /run_child: seq 2 after 2/,
  },
  {
    invariant: "duplicate commits",
    breaks: "a second step_completed of one claimed attempt",
    spoil: (h) =>
      run(h, "run_long").events.splice(3, 0, { seq: 3, type: "step_completed", payload: { step: "start" }, at: 8 }),
    names: /run_long: step_completed start \(seq 3\) commits no open attempt/,
  },
  {
    invariant: "duplicate commits",
    breaks: "a completed attempt recorded as failed (and so run again)",
    spoil: (h) => {
      run(h, "run_long").events.splice(3, 0, {
        seq: 3,
        type: "step_failed",
        payload: { step: "start", attempt: 1, reason: "interrupted", retryable: true },
        at: 8,
      });
    },
    names: /run_long: step_failed start \(seq 3\) settles no open attempt/,
  },
  {
    invariant: "commits without a ledger attempt",
    breaks: "a commit whose attempt never ran",
    spoil: (h) => void h.ledger.splice(1, 1),
    names: /run_parent: start attempt 2 committed but never reached the ledger/,
  },
  {
    invariant: "parents unlike their children",
    breaks: "a parent whose child's result differs",
    spoil: (h) => {
      run(h, "run_child").result = { n: 3 };
    },
    names: /run_parent: child run_child gave \{"n":2\}, its log says completed \{"n":3\}/,
  },
  {
    invariant: "parents unlike their children",
    breaks: "a parent naming a child that does not exist",
    spoil: (h) => {
      h.runs = h.runs.filter((r) => r.id !== "run_child");
    },
    names: /run_parent: child run_child does not exist/,
  },
  {
    invariant: "concurrency limit exceeded",
    breaks: "two keyed runs overlapping under limit 1",
    spoil: (h) => {
      run(h, "run_k2").events[1]!.at = 5;
    },
    names: /keyed: 2 runs active at 5 \(limit 1\) when run_k2 started/,
  },
  {
    invariant: "duplicate runs per idempotency key or active workflow id",
    breaks: "one key answering two runs",
    spoil: (h) => {
      h.starts[2]!.runId = "run_k1";
    },
    names: /idempotency key idem\/k1 answered 2 runs/,
  },
  {
    invariant: "duplicate runs per idempotency key or active workflow id",
    breaks: "one key creating two runs",
    spoil: (h) => {
      const twin = oneStepRun("run_idem2", "idem", 6, 8, null);
      twin.events[0]!.payload.idempotency_key = "k1";
      h.runs.push(twin);
      h.ledger.push({ runId: "run_idem2", step: "start", attempt: 1 });
    },
    names: /idempotency key idem\/k1 created 2 runs/,
  },
  {
    invariant: "duplicate runs per idempotency key or active workflow id",
    breaks: "two active runs of one workflow id",
    spoil: (h) => {
      run(h, "run_k2").workflowId = "run_k1";
      run(h, "run_k2").events[0]!.at = 5;
    },
    names: /workflow id run_k1: run_k2 started while run_k1 was active/,
  },
  {
    invariant: "events not received exactly once",
    breaks: "an acknowledged event lost",
    spoil: (h) => {
      h.sends[0]!.token = "t9";
    },
    names: /event t9 to run run_waiter \(acknowledged\) received 0 times/,
  },
  {
    invariant: "events not received exactly once",
    breaks: "an unanswered event received twice",
    spoil: (h) => {
      h.sends[1]!.token = "t1";
      h.sends[0]!.token = "t0";
      const waiter = run(h, "run_waiter");
      waiter.events.splice(4, 0, { seq: 4, type: "event_received", payload: { payload: { token: "t1" } }, at: 3 });
      for (const [i, event] of waiter.events.entries()) event.seq = i + 1;
    },
    names: /event t1 to run run_waiter \(unanswered\) received 2 times/,
  },
  {
    invariant: "events not received exactly once",
    breaks: "an event landing in another run",
    spoil: (h) => {
      h.sends[0]!.to = { runId: "run_k1" };
    },
    names: /event t1 to run run_k1 \(acknowledged\) received 0 times|landed in run_waiter/,
  },
  {
    invariant: "lost acknowledged starts",
    breaks: "an acknowledged start with no run",
    spoil: (h) => void h.starts.push({ workflow: "idem", runId: "run_gone" }),
    names: /idem run run_gone is missing/,
  },
  {
    invariant: "requests never answered",
    breaks: "a start that answered 500 until the deadline",
    spoil: (h) => void h.unanswered.push({ path: "/start/rolled", last: "500 the worker hung" }),
    names: /POST \/start\/rolled got no answer by the deadline; last: 500 the worker hung/,
  },
  {
    invariant: "long runs miscounted",
    breaks: "a step's write committed twice",
    spoil: (h) => {
      run(h, "run_long").result = { count: 2, steps: 1 };
    },
    names: /run_long counted/,
  },
  {
    invariant: "rollbacks not run once each, latest first",
    breaks: "a completion rolled back twice",
    spoil: (h) => {
      const rolled = run(h, "run_rolled");
      rolled.events.splice(
        15,
        0,
        { seq: 15, type: "rollback_started", payload: { step: "reserve", attempt: 2, completed_seq: 5 }, at: 14 },
        { seq: 16, type: "rollback_completed", payload: { step: "reserve", completed_seq: 5 }, at: 14 },
      );
      h.ledger.push({ runId: "run_rolled", step: "rollback:reserve", attempt: 2 });
      for (const [i, event] of rolled.events.entries()) event.seq = i + 1;
    },
    names: /run_rolled \(failed\) rolled back the completions at seq \[7, 5, 5\], expected \[7, 5\]/,
  },
  {
    invariant: "rollbacks not run once each, latest first",
    breaks: "a completion never rolled back",
    spoil: (h) => void run(h, "run_rolled").events.splice(13, 2),
    names: /run_rolled \(failed\) rolled back the completions at seq \[7\], expected \[7, 5\]/,
  },
  {
    invariant: "rollbacks not run once each, latest first",
    breaks: "the earlier completion rolled back first",
    spoil: (h) => {
      const rolled = run(h, "run_rolled");
      rolled.events.splice(9, 0, ...rolled.events.splice(13, 2));
    },
    names: /rolled back the completions at seq \[5, 7\], expected \[7, 5\]/,
  },
  {
    invariant: "rollbacks not run once each, latest first",
    breaks: "a run that did not fail rolled back",
    spoil: (h) => {
      run(h, "run_rolled").status = "cancelled";
    },
    names: /run_rolled \(cancelled\) rolled back the completions at seq \[7, 5\], expected \[\]/,
  },
  {
    invariant: "rollbacks not run once each, latest first",
    breaks: "a rollback completed whose attempt never ran",
    spoil: (h) => void h.ledger.splice(-2, 1),
    names: /run_rolled: rollback of charge \(seq 13\) never reached the ledger/,
  },
  {
    invariant: "runs broken by a push",
    breaks: "a run that crossed a push and failed",
    spoil: (h) => {
      run(h, "run_parent").status = "failed";
    },
    names: /run_parent \(parent\) crossed builds 0 → 1 and ended failed, not completed/,
  },
  {
    invariant: "runs broken by a push",
    breaks: "a run with rollbacks that crossed a push and completed",
    spoil: (h) => {
      run(h, "run_rolled").status = "completed";
    },
    names: /run_rolled \(rolled\) crossed builds 0 → 1 and ended completed, not failed/,
  },
  {
    invariant: "runs broken by a push",
    breaks: "an older build running a step after a newer one did",
    spoil: (h) => {
      h.ledger[2]!.build = 0;
    },
    names: /run_parent ran build 0 after build 1: a push's old version ran on/,
  },
  {
    invariant: "runs broken by a push",
    breaks: "a step started after a push ran the old build",
    spoil: (h) => {
      h.ledger[1]!.build = 0;
      h.ledger[2]!.build = 0;
    },
    names: /run_parent: collect attempt 1 started after build 1 was pushed and ran build 0/,
  },
];

describe("checkHistory", () => {
  it("accepts a history that keeps every promise, and says what it counted", () => {
    const results = checkHistory(goodHistory());
    expect(results.flatMap((result) => result.violations)).toEqual([]);
    expect(formatVerdict(results).split("\n")).toEqual([
      "8 runs, 0 stuck",
      "8 runs, 0 runs without exactly one terminal event",
      "52 events, 0 seq out of order",
      "12 commits, 0 duplicate commits",
      "17 ledger attempts, 0 commits without a ledger attempt",
      "1 parents, 0 parents unlike their children",
      "keyed peak 1/1, 0 concurrency limit exceeded",
      "1 idempotency keys, 8 workflow ids, 0 duplicate runs per idempotency key or active workflow id",
      "1 acknowledged sends, 0 events not received exactly once",
      "3 acknowledged starts, 0 lost acknowledged starts",
      "4 answered requests, 0 requests never answered",
      "1 long runs, 0 long runs miscounted",
      "2 rollbacks, 0 rollbacks not run once each, latest first",
      "1 pushes, 2 runs across a push, 3 steps started after one, 0 runs broken by a push",
    ]);
  });

  it.each(BAD_CASES)("$invariant fails on $breaks, alone", ({ invariant, spoil, names }) => {
    const history = goodHistory();
    spoil(history);
    const results = checkHistory(history);
    const failing = results.filter((result) => result.violations.length > 0);
    expect(failing.map((result) => result.name)).toContain(invariant);
    expect(failing.find((result) => result.name === invariant)!.violations.join("\n")).toMatch(names);
  });

  it("names the runs a failure is about, so the report can print their logs", () => {
    const history = goodHistory();
    run(history, "run_child").result = { n: 3 };
    const failing = checkHistory(history).filter((result) => result.violations.length > 0);
    expect(runsNamedBy(failing, history).map((r) => r.id)).toEqual(["run_parent", "run_child"]);
  });
});
