import { describe, expect, it } from "vitest";
import {
  decide,
  executeAnswer,
  FAILED_EXECUTION_RETRY_MS,
  IDLE_RUN,
  isIdle,
  type RunActorAnswer,
  type RunActorEffect,
  type RunActorInput,
  type RunActorState,
  STALE_ALARM_MS,
} from "#src/objects/runActorPolicy.ts";
import type { RunStatus } from "#src/engine/storage/store.ts";

const NOW = 1_800_000_000_000;

/** A run's state from the idle one and what differs. */
const run = (changes: Partial<RunActorState> = {}): RunActorState => ({ ...IDLE_RUN, ...changes });

/** What the index was told: a status at a position. */
const at = (status: RunStatus, step = "charge") => ({ status, step });
const RUNNING = at("running");

const executing = run({ executing: true });
const firstExecution = run({ executing: true, alarmArmed: false, startUnanswered: true });

interface Row {
  name: string;
  state: RunActorState;
  input: RunActorInput;
  /** The next state; the same as `state` when absent. */
  next?: RunActorState;
  effects: RunActorEffect[];
  /** What the caller that asked does next; null (nothing beyond the effects) when absent. */
  answer?: RunActorAnswer;
}

const rows: Row[] = [
  // Driving a run: one execution at a time.
  {
    name: "start: the first execution runs at once, reports nothing and has no alarm yet",
    state: IDLE_RUN,
    input: { type: "drive", by: "start" },
    next: firstExecution,
    effects: [],
    answer: { type: "run_step_loop" },
  },
  {
    name: "execute, the alarm or recovery on an idle run: report it if need be, then run the loop",
    state: run({ reported: RUNNING }),
    input: { type: "drive", by: "execute" },
    next: run({ reported: RUNNING, executing: true }),
    effects: [{ type: "report" }],
    answer: { type: "run_step_loop" },
  },
  {
    name: "a drive while an execution is under way joins it",
    state: executing,
    input: { type: "drive", by: "alarm" },
    effects: [],
    answer: { type: "join_execution" },
  },
  {
    name: "a send while an execution is under way joins it and makes the loop read the log again",
    state: executing,
    input: { type: "drive", by: "send" },
    next: run({ executing: true, readAgain: true }),
    effects: [],
    answer: { type: "join_execution" },
  },
  {
    name: "a drive before start has answered reports nothing either",
    state: run({ startUnanswered: true }),
    input: { type: "drive", by: "alarm" },
    next: run({ startUnanswered: true, executing: true }),
    effects: [{ type: "report" }],
    answer: { type: "run_step_loop" },
  },

  // The first wait of a first execution arms the safety net and lets start answer.
  {
    name: "the first execution first waits: alarm due now (detached: a failed write resets the actor), start answers",
    state: firstExecution,
    input: { type: "execution_waits", now: NOW },
    next: run({ executing: true, startUnanswered: true }),
    effects: [{ type: "set_alarm", at: NOW, detached: "actor_reset" }, { type: "answer_start" }],
  },
  {
    name: "any later wait: nothing (an alarm may be pending already)",
    state: executing,
    input: { type: "execution_waits", now: NOW },
    effects: [],
  },
  {
    name: "the execution appended the terminal event: waiters wake",
    state: executing,
    input: { type: "terminal_appended" },
    effects: [{ type: "wake_waiters" }],
  },

  // Where a pass of the step loop leaves the alarm.
  {
    name: "loop ended waiting (retry, sleep, wait's timeout): alarm at the wake time",
    state: executing,
    input: { type: "loop_ended", result: { status: "waiting", wakeAt: NOW + 900 }, now: NOW },
    effects: [{ type: "set_alarm", at: NOW + 900 }, { type: "report" }],
  },
  {
    name: "loop ended with another executor's step in flight: alarm at its timeout",
    state: executing,
    input: { type: "loop_ended", result: { status: "in_flight", timeoutAt: NOW + 30_000 }, now: NOW },
    effects: [{ type: "set_alarm", at: NOW + 30_000 }, { type: "report" }],
  },
  {
    name: "loop ended with the budget spent: alarm due now (a fresh invocation continues)",
    state: executing,
    input: { type: "loop_ended", result: { status: "budget_exhausted" }, now: NOW },
    effects: [{ type: "set_alarm", at: NOW }, { type: "report" }],
  },
  {
    name: "loop ended terminal: the alarm is deleted and the end reported",
    state: executing,
    input: { type: "loop_ended", result: { status: "terminal" }, now: NOW },
    effects: [{ type: "delete_alarm" }, { type: "report" }],
  },
  {
    name: "a first execution that ended terminal without ever waiting: no alarm to delete",
    state: firstExecution,
    input: { type: "loop_ended", result: { status: "terminal" }, now: NOW },
    effects: [{ type: "report" }],
  },
  {
    name: "loop ended idle (waits for an event without a timeout): nothing to wake for; where it waits is reported",
    state: executing,
    input: { type: "loop_ended", result: { status: "idle" }, now: NOW },
    effects: [{ type: "report" }],
  },
  {
    name: "loop ended paused: no alarm (resume drives it); paused is reported",
    state: executing,
    input: { type: "loop_ended", result: { status: "paused" }, now: NOW },
    effects: [{ type: "report" }],
  },
  {
    name: "loop stopped (the host asked): nothing",
    state: executing,
    input: { type: "loop_ended", result: { status: "stopped" }, now: NOW },
    effects: [],
  },
  {
    name: "sent an event during the loop: the loop runs again instead",
    state: run({ executing: true, readAgain: true }),
    input: { type: "loop_ended", result: { status: "idle" }, now: NOW },
    next: executing,
    effects: [],
    answer: { type: "run_step_loop" },
  },
  {
    name: "sent an event during a loop that ended the run: no second loop (the settled execution drives it again)",
    state: run({ executing: true, readAgain: true }),
    input: { type: "loop_ended", result: { status: "terminal" }, now: NOW },
    effects: [{ type: "delete_alarm" }, { type: "report" }],
  },
  {
    name: "the execution threw: alarm 5 s ahead to try again",
    state: executing,
    input: { type: "execution_threw", now: NOW },
    effects: [{ type: "set_alarm", at: NOW + FAILED_EXECUTION_RETRY_MS }],
  },
  {
    name: "the execution settled",
    state: executing,
    input: { type: "execution_settled" },
    next: IDLE_RUN,
    effects: [],
  },
  {
    name: "the execution settled after a send it had not looked at: drive again (detached: a failed drive arms its retry alarm)",
    state: run({ executing: true, readAgain: true }),
    input: { type: "execution_settled" },
    next: IDLE_RUN,
    effects: [{ type: "drive", by: "again", detached: "retry_alarm" }],
  },

  // start's answer, send, cancel, a new instance.
  {
    name: "start answered a running run: its caller indexes it as running",
    state: firstExecution,
    input: { type: "start_answered", run: RUNNING },
    next: run({ executing: true, alarmArmed: false, reported: RUNNING }),
    effects: [],
  },
  {
    name: "start answered a parent already waiting for its children: its caller indexes it as waiting",
    state: firstExecution,
    input: { type: "start_answered", run: at("waiting", "collect") },
    next: run({ executing: true, alarmArmed: false, reported: at("waiting", "collect") }),
    effects: [],
  },
  {
    name: "start answered a run that had ended: not marked, so recovery reports it should the index list it as running",
    state: run({ startUnanswered: true }),
    input: { type: "start_answered", run: at("completed") },
    next: IDLE_RUN,
    effects: [],
  },
  {
    name: "send: alarm due now first (awaited), then drive (detached: the alarm covers it)",
    state: IDLE_RUN,
    input: { type: "event_sent", now: NOW },
    effects: [
      { type: "set_alarm", at: NOW },
      { type: "drive", by: "send", detached: "retry_alarm" },
    ],
  },
  {
    name: "cancel: the alarm is deleted, waiters wake, the end is reported",
    state: executing,
    input: { type: "cancelled" },
    effects: [{ type: "delete_alarm" }, { type: "wake_waiters" }, { type: "report" }],
  },
  {
    name: "pause: reported (an execution under way ends paused before its next claim)",
    state: executing,
    input: { type: "paused" },
    effects: [{ type: "report" }],
  },
  {
    name: "resume: alarm due now first, then drive (detached: the alarm covers it), as a send",
    state: IDLE_RUN,
    input: { type: "resumed", now: NOW },
    effects: [
      { type: "set_alarm", at: NOW },
      { type: "drive", by: "resume", detached: "retry_alarm" },
    ],
  },
  {
    name: "a new instance recorded an interrupted step: alarm due now drives the run on",
    state: IDLE_RUN,
    input: { type: "step_interrupted", ended: false, now: NOW },
    effects: [{ type: "set_alarm", at: NOW }],
  },
  {
    name: "a new instance recorded an interrupted last attempt: report the end (detached: the sweep reports it again)",
    state: IDLE_RUN,
    input: { type: "step_interrupted", ended: true, now: NOW },
    effects: [{ type: "report", detached: "recovery_sweep" }],
  },

  // The recovery sweep.
  {
    name: "recover a finished run: report it (the index may still list it as running)",
    state: IDLE_RUN,
    input: { type: "recover", status: "failed", alarmAt: null, now: NOW },
    effects: [{ type: "report" }],
  },
  {
    name: "recover a running run with no alarm, not executing: ask the engine, nobody drives it here",
    state: IDLE_RUN,
    input: { type: "recover", status: "running", alarmAt: null, now: NOW },
    effects: [],
    answer: { type: "recover_run", executingHere: false, alarmPending: false },
  },
  {
    name: "recover a parent waiting for its children: ask the engine (its children may all have ended unheard)",
    state: IDLE_RUN,
    input: { type: "recover", status: "waiting", alarmAt: null, now: NOW },
    effects: [],
    answer: { type: "recover_run", executingHere: false, alarmPending: false },
  },
  {
    name: "recover a paused run: report it only (it is left alone until resumed)",
    state: IDLE_RUN,
    input: { type: "recover", status: "paused", alarmAt: null, now: NOW },
    effects: [{ type: "report" }],
  },
  {
    name: "recover a running run whose alarm is pending: it is driven here",
    state: IDLE_RUN,
    input: { type: "recover", status: "running", alarmAt: NOW + 5_000, now: NOW },
    effects: [],
    answer: { type: "recover_run", executingHere: true, alarmPending: true },
  },
  {
    name: "recover a running run whose alarm is long overdue: stale, it does not count",
    state: IDLE_RUN,
    input: { type: "recover", status: "running", alarmAt: NOW - STALE_ALARM_MS - 1, now: NOW },
    effects: [],
    answer: { type: "recover_run", executingHere: false, alarmPending: false },
  },
  {
    name: "recover a run with an execution under way: it is driven here",
    state: executing,
    input: { type: "recover", status: "running", alarmAt: null, now: NOW },
    effects: [],
    answer: { type: "recover_run", executingHere: true, alarmPending: false },
  },
  {
    name: "recovered and re-enqueued: alarm due now, then report",
    state: IDLE_RUN,
    input: { type: "recovered", reason: "stuck_failed", reenqueue: true, ended: false, alarmPending: false, now: NOW },
    effects: [{ type: "set_alarm", at: NOW }, { type: "report" }],
  },
  {
    name: "recovered by writing the terminal event: waiters wake, then report",
    state: IDLE_RUN,
    input: {
      type: "recovered",
      reason: "stuck_terminal",
      reenqueue: false,
      ended: true,
      alarmPending: false,
      now: NOW,
    },
    effects: [{ type: "wake_waiters" }, { type: "report" }],
  },
  {
    name: "not stuck yet but nobody will wake it (a step in flight when the actor restarted): drive it to arm its timeout",
    state: IDLE_RUN,
    input: { type: "recovered", reason: null, reenqueue: false, ended: false, alarmPending: false, now: NOW },
    effects: [{ type: "drive", by: "recover" }, { type: "report" }],
  },
  {
    name: "not stuck and its alarm is pending: only report",
    state: IDLE_RUN,
    input: { type: "recovered", reason: null, reenqueue: false, ended: false, alarmPending: true, now: NOW },
    effects: [{ type: "report" }],
  },

  // Reports to the index: only what changes it.
  {
    name: "report a status the index has not heard from this instance: send it",
    state: run({ reported: RUNNING }),
    input: { type: "report", run: at("completed") },
    next: run({ reported: at("completed") }),
    effects: [],
    answer: { type: "send_report", run: at("completed") },
  },
  {
    name: "report the same status at a new position (the run parked further on): send it",
    state: run({ reported: RUNNING }),
    input: { type: "report", run: at("running", "approve") },
    next: run({ reported: at("running", "approve") }),
    effects: [],
    answer: { type: "send_report", run: at("running", "approve") },
  },
  {
    name: "report a pause at the same position: send it",
    state: run({ reported: RUNNING }),
    input: { type: "report", run: at("paused") },
    next: run({ reported: at("paused") }),
    effects: [],
    answer: { type: "send_report", run: at("paused") },
  },
  {
    name: "report what was last reported: join that report (no RPC)",
    state: run({ reported: RUNNING }),
    input: { type: "report", run: RUNNING },
    effects: [],
    answer: { type: "join_report" },
  },
  {
    name: "report before start answered: nothing (the caller indexes the run from the answer)",
    state: run({ startUnanswered: true }),
    input: { type: "report", run: at("completed") },
    effects: [],
  },
  {
    name: "a report of a live run succeeded: kept, so later drives skip it",
    state: run({ reported: RUNNING }),
    input: { type: "report_settled", run: RUNNING, ok: true },
    effects: [],
  },
  {
    name: "a report of a paused run succeeded: kept too",
    state: run({ reported: at("paused") }),
    input: { type: "report_settled", run: at("paused"), ok: true },
    effects: [],
  },
  {
    name: "a report of the end succeeded: forgotten (recovery reports it again if asked)",
    state: run({ reported: at("cancelled") }),
    input: { type: "report_settled", run: at("cancelled"), ok: true },
    next: IDLE_RUN,
    effects: [],
  },
  {
    name: "a report failed: forgotten, so the next one is sent",
    state: run({ reported: RUNNING }),
    input: { type: "report_settled", run: RUNNING, ok: false },
    next: IDLE_RUN,
    effects: [],
  },
  {
    name: "an older report settled after a newer one was reported: the newer one stays",
    state: run({ reported: at("completed") }),
    input: { type: "report_settled", run: RUNNING, ok: false },
    effects: [],
  },
];

describe("runActorPolicy.decide: what the run actor does, from what it knows of the run and what happened", () => {
  it.each(rows)("$name", ({ state, input, next, effects, answer }) => {
    const decision = decide(state, input);
    expect(decision.effects).toEqual(effects);
    expect(decision.answer).toEqual(answer ?? null);
    expect(decision.state).toEqual(next ?? state);
  });

  // The answer goes to the one caller that fed the input; every other input is all effects.
  it("answers only drive, loop_ended, report and recover", () => {
    const answered = new Set(
      rows.filter((row) => decide(row.state, row.input).answer !== null).map((r) => r.input.type),
    );
    expect([...answered].sort()).toEqual(["drive", "loop_ended", "recover", "report"]);
  });

  it("never changes the state it is given", () => {
    for (const { state, input } of rows) {
      const before = structuredClone(state);
      decide(state, input);
      expect(state).toEqual(before);
    }
  });
});

describe("runActorPolicy: answers and idleness", () => {
  it.each([
    [{ status: "terminal" }, { done: true }],
    [{ status: "budget_exhausted" }, { done: false, continue: true }],
    [{ status: "waiting", wakeAt: NOW }, { done: false }],
    [{ status: "in_flight", timeoutAt: NOW }, { done: false }],
    [{ status: "idle" }, { done: false }],
    [{ status: "stopped" }, { done: false }],
    [{ status: "paused" }, { done: false }],
  ] as const)("an execution that ended %j answers execute with %j", (result, answer) => {
    expect(executeAnswer(result)).toEqual(answer);
  });

  it("a run is forgotten once nothing is known of it", () => {
    expect(isIdle(IDLE_RUN)).toBe(true);
    expect(isIdle(run({ reported: RUNNING }))).toBe(false);
    expect(isIdle(firstExecution)).toBe(false);
  });
});
