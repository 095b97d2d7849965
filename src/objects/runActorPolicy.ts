/**
 * The WorkflowRun actor's policy as a pure function: `decide(state, input)`
 * takes what the actor knows of one run and what just happened (a method was
 * called, an execution waited or ended, a report settled) and returns a
 * {@link Decision}: the run's next state; the effects the actor applies, in
 * order (set or delete the alarm, report the run to the project's index, wake
 * `waitForTerminal` callers, let `start` answer, start or join an execution);
 * and the answer to the one caller that asked (run the step loop, join the
 * execution under way, send or join a report, ask the engine to recover the
 * run). No storage, clock or RPC here: WorkflowRun.ts applies the effects and
 * follows the answers; tests drive this as a table.
 *
 * The rules it keeps:
 * - One execution per run at a time in an instance; a drive asked for while
 *   one is under way joins it. A send during an execution makes it read the
 *   log again before it ends; a send after its last look drives it again.
 * - The alarm is the run's only wake-up and its safety net. An execution
 *   that ends waiting arms it for the wake time (a retry, a sleep, a wait's
 *   timeout, a step another executor holds, or now when the budget ran out);
 *   one that ends the run deletes it; one that throws arms it 5 s ahead. A
 *   run's first execution (in `start`) arms it, due now, only when it first
 *   waits on anything: a run whose steps never wait ends with no alarm set.
 *   A send arms it due now before driving the run.
 * - The run index hears of a run from `start`'s caller first; after that
 *   this instance reports the run (its status and position) whenever an
 *   execution ends and when it is cancelled, paused or recovered, but only
 *   when that differs from what it last reported (a report in flight is
 *   joined, a failed one forgotten so the next one is sent again). A run that
 *   parks (sleeps, waits, retries later) is therefore listed at its true
 *   position; one moving through steps, at the position of its last report.
 * - A paused run claims no step: its execution ends (`paused`) with no
 *   alarm; `resume` drives it again as a send does.
 * - An effect marked `detached` is started and not waited for; its failure
 *   is left alone because what `detached` names covers it.
 */
import type { ExecuteRunResult } from "../engine/execution/executeRun.ts";
import { isActiveStatus, isLiveStatus, type RunStatus } from "../engine/storage/store.ts";

/** What the index was told of a run: its status and its position (the step it is in or will claim next). */
export interface ReportedRun {
  readonly status: RunStatus;
  readonly step: string;
}

/** How soon an execution that threw (an engine or storage error, not a step failure) is tried again. */
export const FAILED_EXECUTION_RETRY_MS = 5_000;

/** An alarm this far past its time is treated as lost rather than pending. */
export const STALE_ALARM_MS = 60_000;

/** What the actor knows of one run, in memory (a new instance knows nothing: {@link IDLE_RUN}). */
export interface RunActorState {
  /** An execution of the run is under way in this instance. */
  readonly executing: boolean;
  /** The run was sent an event during its execution: the step loop runs once more before the execution ends. */
  readonly readAgain: boolean;
  /** An alarm may be pending for the run: false only while its first execution (in `start`) has not waited yet. */
  readonly alarmArmed: boolean;
  /** `start` has not answered: its caller indexes the run from that answer, so nothing is reported before. */
  readonly startUnanswered: boolean;
  /** What this instance last reported to the index (or is reporting); null when nothing. */
  readonly reported: ReportedRun | null;
}

export const IDLE_RUN: RunActorState = Object.freeze({
  executing: false,
  readAgain: false,
  alarmArmed: true,
  startUnanswered: false,
  reported: null,
});

/** Who asks for a run to be driven. */
export type DriveCause =
  /** `start`: the run's first execution, in the same turn as its creation. */
  | "start"
  /** `execute` (the queue consumer, an outside kick). */
  | "execute"
  | "alarm"
  /** `send` appended an event the run may be waiting for. */
  | "send"
  /** The recovery sweep found a run nobody will wake. */
  | "recover"
  /** The run was sent an event after its execution's last look. */
  | "again"
  /** `resume` appended workflow_resumed. */
  | "resume";

/** What covers the failure of a detached effect. */
export type CoveredBy =
  /** The recovery sweep asks every run the index lists as running or waiting, and `recover` reports it again. */
  | "recovery_sweep"
  /** A drive that throws arms the alarm ({@link FAILED_EXECUTION_RETRY_MS}); a send has armed it already. */
  | "retry_alarm"
  /** A storage write that fails resets the actor (workerd's output gate); the next instance records the step as interrupted. */
  | "actor_reset";

export type RunActorInput =
  | { type: "drive"; by: DriveCause }
  /** The execution is about to wait on something other than its own work (executeRun's `beforeWaiting`). */
  | { type: "execution_waits"; now: number }
  /** The execution appended the run's terminal event. */
  | { type: "terminal_appended" }
  /** One pass of the step loop returned `result`. */
  | { type: "loop_ended"; result: ExecuteRunResult; now: number }
  /** The execution threw (an engine or storage error, or a failed alarm or report; not a step failing). */
  | { type: "execution_threw"; now: number }
  /** The execution is over: its effects are done, or it threw. */
  | { type: "execution_settled" }
  /** `start` answered with the run as it stood then (its caller indexes that). */
  | { type: "start_answered"; run: ReportedRun }
  /** `send` appended an event_received. */
  | { type: "event_sent"; now: number }
  /** `cancel` appended workflow_cancelled. */
  | { type: "cancelled" }
  /** `pause` appended workflow_paused. */
  | { type: "paused" }
  /** `resume` appended workflow_resumed. */
  | { type: "resumed"; now: number }
  /** A new instance found the run's step cut off and recorded it as interrupted; `ended`: that was its last attempt. */
  | { type: "step_interrupted"; ended: boolean; now: number }
  /** The recovery sweep asks about the run; `alarmAt`: the actor's pending alarm, read only for a running or waiting run. */
  | { type: "recover"; status: RunStatus; alarmAt: number | null; now: number }
  /** recoverRun answered (after a `recover_run` effect). */
  | { type: "recovered"; reason: string | null; reenqueue: boolean; ended: boolean; alarmPending: boolean; now: number }
  /** A report is due: `run` is the run's status and position now. */
  | { type: "report"; run: ReportedRun }
  /** The report of `run` to the index succeeded or failed. */
  | { type: "report_settled"; run: ReportedRun; ok: boolean };

/** What the actor does for the run, whoever asked: its alarm, the index, waiters, `start`, executions. */
export type RunActorEffect =
  | { type: "set_alarm"; at: number; detached?: CoveredBy }
  | { type: "delete_alarm" }
  /** Report the run to the index if that would change it (decided by a `report` input when applied). */
  | { type: "report"; detached?: CoveredBy }
  | { type: "wake_waiters" }
  /** Let `start` answer, a turn from now (its first execution has begun to wait). */
  | { type: "answer_start" }
  | { type: "drive"; by: DriveCause; detached?: CoveredBy };

/** What the caller that fed the input does next, in its own code (only some inputs have one). */
export type RunActorAnswer =
  /** To `drive` and `loop_ended`: run (another pass of) the step loop. */
  | { type: "run_step_loop" }
  /** To `drive`: an execution of the run is under way: wait for it instead. */
  | { type: "join_execution" }
  /** To `report`: send the run's summary (of `run`) to the index. */
  | { type: "send_report"; run: ReportedRun }
  /** To `report`: a report of the same status is in flight: wait for it. */
  | { type: "join_report" }
  /** To `recover`: ask the engine whether the run is stuck and repair it (`recoverRun`), then feed `recovered`. */
  | { type: "recover_run"; executingHere: boolean; alarmPending: boolean };

export interface Decision {
  state: RunActorState;
  /** Applied in order, after or around what `answer` has the caller do. */
  effects: readonly RunActorEffect[];
  /** Null when the caller has nothing more to do than apply the effects. */
  answer: RunActorAnswer | null;
}

const NONE: readonly RunActorEffect[] = Object.freeze([]);
const RUN_STEP_LOOP: RunActorAnswer = Object.freeze({ type: "run_step_loop" });

export function decide(state: RunActorState, input: RunActorInput): Decision {
  switch (input.type) {
    case "drive": {
      if (state.executing) {
        return {
          state: input.by === "send" && !state.readAgain ? { ...state, readAgain: true } : state,
          effects: NONE,
          answer: { type: "join_execution" },
        };
      }
      const first = input.by === "start";
      const next = {
        ...state,
        executing: true,
        readAgain: false,
        alarmArmed: !first,
        startUnanswered: first || state.startUnanswered,
      };
      // A first execution reports nothing: `start`'s caller indexes the run from its answer.
      return { state: next, effects: first ? NONE : [{ type: "report" }], answer: RUN_STEP_LOOP };
    }
    case "execution_waits": {
      if (state.alarmArmed) return { state, effects: NONE, answer: null };
      // The safety net, in the same synchronous stretch as the writes before this wait.
      const effects: RunActorEffect[] = [{ type: "set_alarm", at: input.now, detached: "actor_reset" }];
      if (state.startUnanswered) effects.push({ type: "answer_start" });
      return { state: { ...state, alarmArmed: true }, effects, answer: null };
    }
    case "terminal_appended":
      return { state, effects: [{ type: "wake_waiters" }], answer: null };
    case "loop_ended": {
      const { result } = input;
      if (state.readAgain && result.status !== "terminal")
        return { state: { ...state, readAgain: false }, effects: NONE, answer: RUN_STEP_LOOP };
      const effects: RunActorEffect[] = [];
      const wakeAt = wakeTimeAfter(result, input.now);
      if (wakeAt !== null) effects.push({ type: "set_alarm", at: wakeAt });
      // Nothing is left to wake for (one active run per actor: the alarm was this run's).
      else if (result.status === "terminal" && state.alarmArmed) effects.push({ type: "delete_alarm" });
      // Its end, or where it parked (the stranded-runs check reads positions); unchanged ones are not sent.
      if (result.status !== "stopped") effects.push({ type: "report" });
      return { state, effects, answer: null };
    }
    case "execution_threw":
      return { state, effects: [{ type: "set_alarm", at: input.now + FAILED_EXECUTION_RETRY_MS }], answer: null };
    case "execution_settled": {
      const next = { ...state, executing: false, readAgain: false };
      // Sent an event after the loop's last look: look again.
      return {
        state: next,
        effects: state.readAgain ? [{ type: "drive", by: "again", detached: "retry_alarm" }] : NONE,
        answer: null,
      };
    }
    case "start_answered":
      // The caller indexes the run as it stood then; a run that has ended is not marked, so should the sweep
      // find it listed as running (or waiting), `recover` reports it again.
      return {
        state: {
          ...state,
          startUnanswered: false,
          reported: isActiveStatus(input.run.status) ? input.run : state.reported,
        },
        effects: NONE,
        answer: null,
      };
    case "event_sent":
    case "resumed":
      // The alarm first: the safety net should this instance die before the drive gets anywhere.
      return {
        state,
        effects: [
          { type: "set_alarm", at: input.now },
          { type: "drive", by: input.type === "event_sent" ? "send" : "resume", detached: "retry_alarm" },
        ],
        answer: null,
      };
    case "cancelled":
      return {
        state,
        effects: [{ type: "delete_alarm" }, { type: "wake_waiters" }, { type: "report" }],
        answer: null,
      };
    case "paused":
      // An execution under way commits its step and ends `paused`; an alarm that fires meanwhile finds it so.
      return { state, effects: [{ type: "report" }], answer: null };
    case "step_interrupted":
      return {
        state,
        effects: input.ended
          ? [{ type: "report", detached: "recovery_sweep" }]
          : [{ type: "set_alarm", at: input.now }],
        answer: null,
      };
    case "recover": {
      if (!isActiveStatus(input.status)) return { state, effects: [{ type: "report" }], answer: null };
      // A pending alarm is this actor's wake-up timer (retry, timeout, continuation): the run is being
      // driven. One long overdue is stale (such alarms can fail to fire) and does not count.
      const alarmPending = input.alarmAt !== null && input.alarmAt > input.now - STALE_ALARM_MS;
      return {
        state,
        effects: NONE,
        answer: { type: "recover_run", executingHere: state.executing || alarmPending, alarmPending },
      };
    }
    case "recovered": {
      const effects: RunActorEffect[] = [];
      if (input.ended) effects.push({ type: "wake_waiters" });
      if (input.reenqueue) effects.push({ type: "set_alarm", at: input.now });
      // Not stuck yet but nobody will wake it (a step in flight when the actor restarted): arm its timeout.
      else if (input.reason === null && !input.alarmPending && !state.executing)
        effects.push({ type: "drive", by: "recover" });
      effects.push({ type: "report" });
      return { state, effects, answer: null };
    }
    case "report": {
      if (state.startUnanswered) return { state, effects: NONE, answer: null };
      if (sameReport(state.reported, input.run)) return { state, effects: NONE, answer: { type: "join_report" } };
      return {
        state: { ...state, reported: input.run },
        effects: NONE,
        answer: { type: "send_report", run: input.run },
      };
    }
    case "report_settled": {
      // A failed report is forgotten, so the next one is sent; a finished run is reported once more only if
      // asked again later (recovery), so there is nothing to keep of it.
      const forget = sameReport(state.reported, input.run) && (!input.ok || !isLiveStatus(input.run.status));
      return { state: forget ? { ...state, reported: null } : state, effects: NONE, answer: null };
    }
  }
}

function sameReport(a: ReportedRun | null, b: ReportedRun): boolean {
  return a !== null && a.status === b.status && a.step === b.step;
}

/** When the actor must look at a run again, from what its last execution reported (null: nothing to wake for). */
export function wakeTimeAfter(result: ExecuteRunResult, now: number): number | null {
  switch (result.status) {
    case "waiting":
      return result.wakeAt;
    case "in_flight":
      return result.timeoutAt;
    case "budget_exhausted":
      return now;
    case "terminal":
    case "idle":
    case "stopped":
    case "paused":
      return null;
  }
}

/** What `/__workflow/:runId/execute` answers: `done` (the fixed wire contract); this platform's `continue` when the budget ran out. */
export type ExecuteAnswer = { done: true } | { done: false; continue?: true };

export function executeAnswer(result: ExecuteRunResult): ExecuteAnswer {
  if (result.status === "budget_exhausted") return { done: false, continue: true };
  return result.status === "terminal" ? { done: true } : { done: false };
}

/** Whether `state` holds nothing worth keeping (the actor then forgets the run). */
export function isIdle(state: RunActorState): boolean {
  return !state.executing && !state.readAgain && state.alarmArmed && !state.startUnanswered && state.reported === null;
}
