import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ExecuteRunResult } from "#src/engine/execution/executeRun.ts";
import type { RunStatus } from "#src/engine/storage/store.ts";
import {
  type Decision,
  decide,
  IDLE_RUN,
  type RunActorInput,
  type RunActorState,
} from "#src/objects/runActorPolicy.ts";

/**
 * A seeded simulation of the run actor's policy (`decide`) around a model of
 * one run: a harness applies its effects and follows its answers as WorkflowRun.ts does (the
 * alarm is durable, an execution and the policy's state live in memory), and
 * fast-check interleaves what can happen to the actor: executions moving on,
 * alarms firing (late, or twice), sends, cancels, pauses and resumes, a
 * crash (the instance and its execution gone, the alarm kept, a step cut off
 * recorded as interrupted), the recovery sweep, reports failing, the step
 * loop's budget running out. After each happening and after draining, the
 * invariants hold: one execution at a time (so an alarm never runs a step
 * twice), nothing runs after the run ended, a live run nobody is driving
 * always has a wake-up, and every run that is not left waiting for an event
 * or paused ends. `SIM_RUNS=100000` runs a bigger one.
 */

/** What each step of the model run does when it completes. */
type StepKind = "next" | "sleep" | "wait" | "retry";

type Happening =
  | { type: "progress" }
  | { type: "alarm"; late: number }
  | { type: "send" }
  | { type: "cancel" }
  | { type: "pause" }
  | { type: "resume" }
  | { type: "crash" }
  | { type: "sweep" }
  | { type: "time"; ms: number }
  | { type: "budget" }
  | { type: "report_fails" };

const happening: fc.Arbitrary<Happening> = fc.oneof(
  { arbitrary: fc.constant({ type: "progress" as const }), weight: 6 },
  { arbitrary: fc.record({ type: fc.constant("alarm" as const), late: fc.constantFrom(0, 10, 70_000) }), weight: 3 },
  fc.constant({ type: "send" as const }),
  fc.constant({ type: "cancel" as const }),
  fc.constant({ type: "pause" as const }),
  fc.constant({ type: "resume" as const }),
  fc.constant({ type: "crash" as const }),
  fc.constant({ type: "sweep" as const }),
  fc.record({ type: fc.constant("time" as const), ms: fc.constantFrom(1, 100, 1_000) }),
  fc.constant({ type: "budget" as const }),
  fc.constant({ type: "report_fails" as const }),
);

const SLEEP_MS = 100;
const RETRY_MS = 50;

/** The run as its log has it (durable). */
interface ModelRun {
  /** The index of the step to run next; `kinds.length`: the run has no step left (it ends when that one completes). */
  next: number;
  ended: boolean;
  paused: boolean;
  /** Its next step is not due before this time (a sleep, a retry). */
  notBefore: number;
  /** Its next step waits for an event that has not arrived. */
  waitsForEvent: boolean;
  /** A step attempt is claimed and not settled (step_started last). */
  inFlight: boolean;
}

/** One execution of the step loop, in memory. */
interface Execution {
  /** "pass": the loop is deciding; "step": a step is running (it has waited on its promise). */
  phase: "pass" | "step";
}

class ActorHarness {
  now = 1_000;
  alarm: number | null = null;
  state: RunActorState = IDLE_RUN;
  execution: Execution | null = null;
  run: ModelRun | null;
  readonly kinds: readonly StepKind[];
  readonly broken: string[] = [];
  /** Steps run per step index: a step whose completion was committed twice is a broken invariant. */
  readonly committed: number[];
  budgetRunsOut = false;
  reportFails = false;
  /** An alarm's handler is under way (it waits for the execution): the alarm fires again if the instance dies first. */
  alarmHandled = false;
  /** The retry steps whose first attempt has failed. */
  readonly failedOnce = new Set<number>();

  constructor(kinds: readonly StepKind[]) {
    this.kinds = kinds;
    this.committed = kinds.map(() => 0);
    this.run = { next: 0, ended: false, paused: false, notBefore: 0, waitsForEvent: false, inFlight: false };
    this.follow(this.decide({ type: "drive", by: "start" }));
  }

  decide(input: RunActorInput): Pick<Decision, "effects" | "answer"> {
    const { state, effects, answer } = decide(this.state, input);
    this.state = state;
    return { effects, answer };
  }

  /** What the index would be told of the run now. */
  summary(): { status: RunStatus; step: string } {
    const run = this.run;
    if (!run) return { status: "running", step: "start" };
    const status: RunStatus = run.ended ? "completed" : run.paused ? "paused" : "running";
    return { status, step: `s${Math.min(run.next, this.kinds.length - 1)}` };
  }

  /**
   * Applies the effects in order, as WorkflowRun.#applyEffects does, then does what the answer asks of
   * the caller, as WorkflowRun's callers of #decide do: run_step_loop starts a pass of the execution.
   */
  follow({ effects, answer }: Pick<Decision, "effects" | "answer">): void {
    for (const effect of effects) {
      switch (effect.type) {
        case "set_alarm":
          this.alarm = effect.at;
          break;
        case "delete_alarm":
          this.alarm = null;
          break;
        case "report":
          this.follow(this.decide({ type: "report", run: this.summary() }));
          break;
        case "answer_start":
          this.follow(this.decide({ type: "start_answered", run: this.summary() }));
          break;
        case "drive":
          this.follow(this.decide({ type: "drive", by: effect.by }));
          break;
        case "wake_waiters":
          break;
      }
    }
    switch (answer?.type) {
      case "run_step_loop":
        if (this.execution && this.execution.phase === "step") this.broken.push("a second step loop while a step ran");
        this.execution = { phase: "pass" };
        break;
      case "join_execution":
        if (!this.execution) this.broken.push("joined an execution that is not under way");
        break;
      case "send_report":
        this.follow(this.decide({ type: "report_settled", run: answer.run, ok: !this.reportFails }));
        break;
      case "recover_run":
        this.recover(answer.executingHere, answer.alarmPending);
        break;
      case "join_report":
      case undefined:
        break;
    }
  }

  /** The engine's recoverRun on the model: a live run nobody drives with a step due (or cut off) is re-enqueued. */
  recover(executingHere: boolean, alarmPending: boolean): void {
    const run = this.run;
    let reenqueue = false;
    if (run && !run.ended && !executingHere && !run.paused)
      reenqueue = run.inFlight || (!run.waitsForEvent && this.now >= run.notBefore);
    if (run && reenqueue && run.inFlight) run.inFlight = false;
    this.follow(
      this.decide({
        type: "recovered",
        reason: reenqueue ? "stuck" : null,
        reenqueue,
        ended: false,
        alarmPending,
        now: this.now,
      }),
    );
  }

  /** One move of the execution under way: a loop pass decides, or the step it runs completes. */
  progress(): void {
    const execution = this.execution;
    const run = this.run;
    if (!execution || !run) return;
    if (execution.phase === "step") {
      run.inFlight = false;
      if (run.ended) {
        // Cancelled while the step ran: its commit lost the seq to the terminal event.
        this.endPass({ status: "terminal" });
        return;
      }
      const kind = this.kinds[run.next];
      if (kind === "retry" && !this.failedOnce.has(run.next)) {
        // Its first attempt fails: retried after the backoff.
        this.failedOnce.add(run.next);
        run.notBefore = this.now + RETRY_MS;
      } else {
        this.committed[run.next] = (this.committed[run.next] ?? 0) + 1;
        run.next++;
        if (kind === "sleep") run.notBefore = this.now + SLEEP_MS;
        if (kind === "wait") run.waitsForEvent = true;
        if (run.next >= this.kinds.length) {
          run.ended = true;
          this.follow(this.decide({ type: "terminal_appended" }));
        }
      }
      execution.phase = "pass";
      return;
    }
    // A pass: what the step loop does from the run's state (executeRun's results).
    const ended = this.passResult(run);
    if (ended) {
      this.endPass(ended);
      return;
    }
    if (run.inFlight) this.broken.push("a step claimed while another attempt of the run was in flight");
    run.inFlight = true;
    // The step returns a promise: the loop waits on it (beforeWaiting) before it completes.
    this.follow(this.decide({ type: "execution_waits", now: this.now }));
    execution.phase = "step";
  }

  /** How a pass ends without claiming a step; null when a step is due. */
  passResult(run: ModelRun): ExecuteRunResult | null {
    if (run.ended) return { status: "terminal" };
    if (run.paused) return { status: "paused" };
    if (run.waitsForEvent) return { status: "idle" };
    if (this.now < run.notBefore) return { status: "waiting", wakeAt: run.notBefore };
    if (!this.budgetRunsOut) return null;
    this.budgetRunsOut = false;
    return { status: "budget_exhausted" };
  }

  endPass(result: ExecuteRunResult): void {
    this.execution = null;
    this.follow(this.decide({ type: "loop_ended", result, now: this.now }));
    // No new pass asked for: the execution is over, and an alarm handler waiting for it returns.
    if (!this.execution) {
      this.alarmHandled = false;
      this.follow(this.decide({ type: "execution_settled" }));
    }
  }

  apply(h: Happening): void {
    const run = this.run;
    switch (h.type) {
      case "progress":
        this.progress();
        break;
      case "alarm":
        // workerd fires an alarm at or after its time, clears it before the handler runs, and fires it
        // again should the handler not finish (the instance died); the handler ends with the execution it drives or joins.
        if (this.alarm === null || this.alarmHandled) break;
        this.now = Math.max(this.now, this.alarm + h.late);
        this.alarm = null;
        this.alarmHandled = true;
        this.follow(this.decide({ type: "drive", by: "alarm" }));
        if (!this.execution) this.alarmHandled = false;
        break;
      case "send":
        if (!run || run.ended) break;
        run.waitsForEvent = false;
        this.follow(this.decide({ type: "event_sent", now: this.now }));
        break;
      case "cancel":
        if (!run || run.ended) break;
        run.ended = true;
        this.follow(this.decide({ type: "cancelled" }));
        break;
      case "pause":
        if (!run || run.ended || run.paused) break;
        run.paused = true;
        this.follow(this.decide({ type: "paused" }));
        break;
      case "resume":
        if (!run?.paused) break;
        run.paused = false;
        this.follow(this.decide({ type: "resumed", now: this.now }));
        break;
      case "crash": {
        // The instance and its execution are gone; the alarm is durable. A first execution that never
        // waited had written nothing durable yet (one synchronous stretch): the start failed with it.
        if (this.execution && !this.state.alarmArmed) this.run = null;
        this.execution = null;
        this.state = IDLE_RUN;
        if (this.alarmHandled && this.alarm === null) this.alarm = this.now;
        this.alarmHandled = false;
        const cut = this.run;
        if (cut?.inFlight && !cut.ended) {
          cut.inFlight = false;
          this.follow(this.decide({ type: "step_interrupted", ended: false, now: this.now }));
        }
        break;
      }
      case "sweep":
        if (!run) break;
        this.follow(
          this.decide({
            type: "recover",
            status: run.ended ? "completed" : run.paused ? "paused" : "running",
            alarmAt: this.alarm,
            now: this.now,
          }),
        );
        break;
      case "time":
        this.now += h.ms;
        break;
      case "budget":
        this.budgetRunsOut = true;
        break;
      case "report_fails":
        this.reportFails = !this.reportFails;
        break;
    }
    this.checkSafety();
  }

  /** After every happening: a live run nobody drives has a wake-up. */
  checkSafety(): void {
    const run = this.run;
    if (!run) return;
    const idle = !this.execution && !run.ended && !run.paused && !run.waitsForEvent;
    if (idle && this.alarm === null) this.broken.push("a live run with a step to run and no alarm");
  }

  /** Lets the run finish: executions move, due alarms fire, waits get their event, a pause is resumed. */
  drain(): void {
    for (let i = 0; i < 500 && this.run && !(this.run.ended && !this.execution); i++) {
      if (this.execution) this.apply({ type: "progress" });
      else if (this.run.paused) this.apply({ type: "resume" });
      else if (this.run.waitsForEvent) this.apply({ type: "send" });
      else if (this.alarm !== null) this.apply({ type: "alarm", late: 0 });
      else {
        this.broken.push("a live run that nothing will wake");
        return;
      }
    }
    if (this.run && !this.run.ended) this.broken.push("the run never ended");
    if (this.run?.ended && this.alarm !== null && this.alarm > this.now)
      this.broken.push("an alarm left behind by a run that ended");
  }
}

/** Every broken invariant of a drained harness. */
function brokenInvariants(harness: ActorHarness): string[] {
  const broken = [...harness.broken];
  if (harness.committed.some((count) => count > 1)) broken.push("a step's completion committed twice");
  return [...new Set(broken)];
}

const runs = Number(process.env.SIM_RUNS ?? 10_000);

describe("run actor policy simulation (decide under interleavings)", () => {
  // The first two are shrunk counterexamples the simulation printed against broken policies (an alarm
  // starting a second step loop beside the execution under way; a first execution that never arms its
  // safety-net alarm, so a crash after its first step strands the run).
  it.each<[string, StepKind[], Happening[]]>([
    [
      "an alarm during an execution joins it (no second step loop)",
      ["next"],
      [{ type: "progress" }, { type: "alarm", late: 0 }, { type: "progress" }],
    ],
    [
      "a crash after the first step of a first execution leaves an alarm to go on with",
      ["next", "next"],
      [{ type: "progress" }, { type: "progress" }, { type: "crash" }, { type: "alarm", late: 0 }],
    ],
    [
      "a crash mid-step: the interrupted step is driven again",
      ["next", "next"],
      [{ type: "progress" }, { type: "crash" }],
    ],
    [
      "a send during a step's execution makes the loop look again",
      ["wait", "next"],
      [{ type: "progress" }, { type: "send" }, { type: "progress" }],
    ],
    [
      "a duplicate alarm while executing joins the execution",
      ["sleep", "next"],
      [
        { type: "progress" },
        { type: "progress" },
        { type: "progress" },
        { type: "alarm", late: 0 },
        { type: "alarm", late: 0 },
      ],
    ],
    [
      "the budget running out arms the alarm now",
      ["next", "next", "next"],
      [{ type: "budget" }, { type: "progress" }, { type: "progress" }],
    ],
    [
      "a cancel while a step runs: nothing commits after it",
      ["next", "next"],
      [{ type: "progress" }, { type: "cancel" }, { type: "progress" }],
    ],
    [
      "a crash with a stale alarm: the sweep re-enqueues",
      ["retry", "next"],
      [
        { type: "progress" },
        { type: "progress" },
        { type: "progress" },
        { type: "crash" },
        { type: "time", ms: 1_000 },
        { type: "sweep" },
      ],
    ],
  ])("%s", (_case, kinds, history) => {
    const harness = new ActorHarness(kinds);
    for (const h of history) harness.apply(h);
    harness.drain();
    expect(brokenInvariants(harness)).toEqual([]);
  });

  it(
    `keeps every invariant over ${runs} seeded interleavings`,
    () => {
      let interleavings = 0;
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom<StepKind>("next", "sleep", "wait", "retry"), { minLength: 1, maxLength: 4 }),
          fc.array(happening, { minLength: 1, maxLength: 40 }),
          (kinds, history) => {
            interleavings++;
            const harness = new ActorHarness(kinds);
            for (const h of history) harness.apply(h);
            harness.drain();
            expect(brokenInvariants(harness), JSON.stringify(history)).toEqual([]);
          },
        ),
        { numRuns: runs, seed: Number(process.env.SIM_SEED ?? 32) },
      );
      expect(interleavings).toBe(runs);
    },
    Math.max(30_000, runs),
  );
});
