import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FIRST_STEP } from "#src/engine/api/definition.ts";
import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType } from "#src/engine/execution/events.ts";
import { isTerminalEvent } from "#src/engine/execution/events.ts";
import type { QueuedEvent } from "#src/engine/control/receivedEvents.ts";
import { resolveNextAction } from "#src/engine/execution/resolveNextAction.ts";

/**
 * A seeded simulation of the run protocol around the pure resolver: a model
 * run's log is driven by interleavings of what can happen to a run (alarms
 * early, late and twice, step outcomes, crashes, cancel, pause, events,
 * children's ends, a push changing maxAttempts), every claim and terminal
 * event coming from `resolveNextAction` alone; then the run is drained and
 * the invariants checked. `SIM_RUNS=200000 npx vitest run --project node
 * test/engine/execution/resolveNextAction.simulation.test.ts` runs a bigger one.
 */

/** How each step of the model workflow ends: what its step_completed continues with. */
type StepKind = "next" | "sleep" | "wait" | "wait_timeout" | "child";

type Happening =
  | { type: "alarm"; late: number; twice: boolean }
  | { type: "step_completes" }
  | { type: "step_fails"; retryable: boolean }
  /** A step's timeout, or the actor crashed and its next instance records the cut-off step as interrupted. */
  | { type: "step_interrupted" }
  | { type: "cancel" }
  | { type: "pause" }
  | { type: "resume" }
  | { type: "event_arrives" }
  | { type: "child_ends" }
  | { type: "push"; maxAttempts: number };

const happening: fc.Arbitrary<Happening> = fc.oneof(
  fc.record({ type: fc.constant("alarm" as const), late: fc.constantFrom(0, 1, 50, 5_000), twice: fc.boolean() }),
  fc.constant({ type: "step_completes" as const }),
  fc.record({ type: fc.constant("step_fails" as const), retryable: fc.boolean() }),
  fc.constant({ type: "step_interrupted" as const }),
  fc.constant({ type: "cancel" as const }),
  fc.constant({ type: "pause" as const }),
  fc.constant({ type: "resume" as const }),
  fc.constant({ type: "event_arrives" as const }),
  fc.constant({ type: "child_ends" as const }),
  fc.record({ type: fc.constant("push" as const), maxAttempts: fc.integer({ min: 1, max: 4 }) }),
);

const SLEEP_MS = 100;
const TIMEOUT_MS = 1_000;
const CONTROL: ReadonlySet<WorkflowEventType> = new Set([
  "event_received",
  "child_finished",
  "workflow_paused",
  "workflow_resumed",
]);

/** Step i's name; the last step ends the run. */
const stepName = (i: number) => (i === 0 ? FIRST_STEP : `s${i}`);

class SimulatedRun {
  readonly log: StoredEvent[] = [];
  /** The step_started seqs each step's claims were made with, and its commits. */
  readonly commits = new Map<string, number>();
  /** Claims made while another claim of the run was in flight (an alarm running a step twice). */
  doubleClaims = 0;
  /** Claims of an attempt past the definition's maxAttempts at the time. */
  attemptsPastMax = 0;
  now = 1_000;

  readonly kinds: readonly StepKind[];
  /** The deployed definition's; a push may change it. */
  maxAttempts: number;

  constructor(kinds: readonly StepKind[], maxAttempts: number) {
    this.kinds = kinds;
    this.maxAttempts = maxAttempts;
    this.append("workflow_created", { workflowName: "w", writes: { data: null } });
  }

  append<T extends WorkflowEventType>(type: T, payload: WorkflowEventPayloads[T]): void {
    const seq = (this.log.at(-1)?.seq ?? 0) + 1;
    this.log.push({ runId: "r", workflowId: "w", seq, type, payload, at: this.now } as StoredEvent);
  }

  get ended(): boolean {
    return this.log.some(isTerminalEvent);
  }

  get paused(): boolean {
    const marks = this.log.filter((e) => e.type === "workflow_paused" || e.type === "workflow_resumed");
    return marks.at(-1)?.type === "workflow_paused";
  }

  /** The last event other than a control event: what the resolver decides from. */
  lastState(): StoredEvent | null {
    return this.log.findLast((e) => !CONTROL.has(e.type)) ?? null;
  }

  /** Events received and not yet taken by a step_started (`event_seq`). */
  queued(): QueuedEvent[] {
    const taken = new Set(this.log.flatMap((e) => (e.type === "step_started" && e.payload.event_seq) || []));
    return this.log.flatMap((e) =>
      e.type === "event_received" && !taken.has(e.seq)
        ? [{ seq: e.seq, name: e.payload.name, payload: null, at: e.at }]
        : [],
    );
  }

  finished(): Set<string> {
    return new Set(this.log.flatMap((e) => (e.type === "child_finished" ? [e.payload.run_id] : [])));
  }

  inFlight(): { step: string; attempt: number } | null {
    const last = this.lastState();
    return last?.type === "step_started" ? last.payload : null;
  }

  /** An alarm: the executor asks the resolver and does what it says, if due and not paused. */
  alarm(): void {
    if (this.ended || this.paused) return;
    const action = resolveNextAction(this.lastState(), this.maxAttempts, {
      queued: this.queued(),
      finished: this.finished(),
    });
    switch (action.kind) {
      case "start_step":
        if (action.notBefore !== undefined && action.notBefore > this.now) return;
        if (this.inFlight()) this.doubleClaims++;
        if (action.attempt > this.maxAttempts) this.attemptsPastMax++;
        this.append("step_started", {
          step: action.step,
          attempt: action.attempt,
          ...(action.event ? { event_seq: action.event.seq } : {}),
        });
        return;
      case "complete":
        this.append("workflow_completed", { result: action.result });
        return;
      case "fail":
        this.append("workflow_failed", { reason: action.reason, cause: action.cause });
        return;
      default:
        return;
    }
  }

  /** The step in flight commits its result: its step_completed, and the terminal event with it on the last step. */
  completeStep(): void {
    const claim = this.inFlight();
    if (!claim || this.ended) return;
    this.commits.set(claim.step, (this.commits.get(claim.step) ?? 0) + 1);
    const i = Number(claim.step === FIRST_STEP ? 0 : claim.step.slice(1));
    if (i === this.kinds.length - 1) {
      this.append("step_completed", { step: claim.step, writes: {} });
      this.append("workflow_completed", { result: null });
      return;
    }
    const next = stepName(i + 1);
    const continuation: Partial<WorkflowEventPayloads["step_completed"]> = {
      sleep: { wake_at: this.now + SLEEP_MS },
      wait: { waiting_for: "ev" },
      wait_timeout: { waiting_for: "ev", timeout_at: this.now + TIMEOUT_MS },
      child: { children: [{ run_id: `child-${i}`, workflow: "c" }] },
      next: {},
    }[this.kinds[i]!];
    this.append("step_completed", { step: claim.step, writes: {}, next_step: next, ...continuation });
  }

  failStep(retryable: boolean, reason: string): void {
    const claim = this.inFlight();
    if (!claim || this.ended) return;
    this.append("step_failed", { step: claim.step, attempt: claim.attempt, reason, retryable });
  }

  /** A child the run waits for ends (once). */
  endChild(): void {
    const last = this.lastState();
    if (this.ended || last?.type !== "step_completed" || !last.payload.children) return;
    for (const child of last.payload.children)
      if (!this.finished().has(child.run_id))
        this.append("child_finished", { run_id: child.run_id, workflow: child.workflow, status: "completed" });
  }

  apply(h: Happening): void {
    switch (h.type) {
      case "alarm":
        this.now += h.late;
        this.alarm();
        if (h.twice) this.alarm();
        return;
      case "step_completes":
        this.completeStep();
        return;
      case "step_fails":
        this.failStep(h.retryable, "boom");
        return;
      case "step_interrupted":
        this.failStep(true, "interrupted");
        return;
      case "cancel":
        if (!this.ended) this.append("workflow_cancelled", { reason: "by test" });
        return;
      case "pause":
        if (!this.ended && !this.paused) this.append("workflow_paused", { reason: "by test" });
        return;
      case "resume":
        if (!this.ended && this.paused) this.append("workflow_resumed", {});
        return;
      case "event_arrives":
        if (!this.ended) this.append("event_received", { name: "ev", payload: null });
        return;
      case "child_ends":
        this.endChild();
        return;
      case "push":
        this.maxAttempts = h.maxAttempts;
        return;
    }
  }

  /** What happens once nothing else does: resumed, its events and children arrive, time passes, steps succeed. */
  drain(): void {
    for (let turn = 0; turn < 200 && !this.ended; turn++) {
      this.apply({ type: "resume" });
      this.endChild();
      if (this.queued().length === 0) this.apply({ type: "event_arrives" });
      this.now += TIMEOUT_MS;
      this.alarm();
      this.completeStep();
    }
  }
}

/** The invariants of a run's log once it has been driven and drained. */
function brokenInvariants(run: SimulatedRun): string[] {
  const broken: string[] = [];
  const terminals = run.log.filter(isTerminalEvent);
  if (terminals.length !== 1) broken.push(`${terminals.length} terminal events`);
  const end = run.log.findIndex(isTerminalEvent);
  if (end !== -1 && end !== run.log.length - 1) broken.push(`events after the terminal one: ${run.log[end + 1]!.type}`);
  run.log.forEach((e, i) => {
    if (i > 0 && e.seq <= run.log[i - 1]!.seq) broken.push(`seq ${e.seq} after ${run.log[i - 1]!.seq}`);
  });
  for (const [step, count] of run.commits) if (count !== 1) broken.push(`${step} committed ${count} times`);
  if (run.doubleClaims > 0) broken.push(`${run.doubleClaims} claims while a step was in flight`);
  if (run.attemptsPastMax > 0) broken.push(`${run.attemptsPastMax} attempts past maxAttempts`);
  if (terminals[0]?.type === "workflow_completed")
    run.kinds.forEach((_, i) => {
      if (run.commits.get(stepName(i)) !== 1) broken.push(`completed without committing ${stepName(i)}`);
    });
  const early = run.log.filter((e, i) => {
    const before = run.log.slice(0, i).findLast((p) => !CONTROL.has(p.type));
    return e.type === "step_started" && before?.type === "step_completed" && (before.payload.wake_at ?? 0) > e.at;
  });
  if (early.length > 0) broken.push(`a sleep's step claimed before its wake time`);
  return broken;
}

const runs = Number(process.env.SIM_RUNS ?? 10_000);

describe("run protocol simulation (resolveNextAction under interleavings)", () => {
  // Shrunk counterexamples the simulation printed against broken resolvers (a step_started that claims again;
  // a retryable failure retried past maxAttempts), and the interleavings named in the protocol, as table cases.
  it.each<[string, StepKind[], number, Happening[]]>([
    [
      "an event arriving while a step is in flight claims nothing",
      ["next"],
      1,
      [{ type: "alarm", late: 0, twice: false }, { type: "event_arrives" }],
    ],
    [
      "a retryable failure on the last attempt ends the run",
      ["next"],
      1,
      [
        { type: "alarm", late: 0, twice: false },
        { type: "step_fails", retryable: true },
      ],
    ],
    ["a duplicate alarm claims once", ["next", "next"], 2, [{ type: "alarm", late: 0, twice: true }]],
    [
      "an early alarm does not cut a sleep short",
      ["sleep", "next"],
      1,
      [{ type: "alarm", late: 0, twice: false }, { type: "step_completes" }, { type: "alarm", late: 1, twice: true }],
    ],
    [
      "a completion after cancel commits nothing",
      ["next", "next"],
      1,
      [
        { type: "alarm", late: 0, twice: false },
        { type: "cancel" },
        { type: "step_completes" },
        { type: "alarm", late: 5_000, twice: true },
      ],
    ],
    [
      "a push lowering maxAttempts under a retry ends the run",
      ["next"],
      3,
      [
        { type: "alarm", late: 0, twice: false },
        { type: "step_interrupted" },
        { type: "push", maxAttempts: 1 },
        { type: "alarm", late: 50, twice: false },
      ],
    ],
    [
      "a paused run waiting for a child resumes and ends",
      ["child", "next"],
      1,
      [
        { type: "alarm", late: 0, twice: false },
        { type: "step_completes" },
        { type: "pause" },
        { type: "child_ends" },
        { type: "alarm", late: 0, twice: true },
      ],
    ],
  ])("%s", (_case, kinds, maxAttempts, history) => {
    const run = new SimulatedRun(kinds, maxAttempts);
    for (const h of history) run.apply(h);
    run.drain();
    expect(brokenInvariants(run)).toEqual([]);
  });

  it(
    `keeps every invariant over ${runs} seeded histories`,
    () => {
      let interleavings = 0;
      fc.assert(
        fc.property(
          fc.array(fc.constantFrom<StepKind>("next", "sleep", "wait", "wait_timeout", "child"), {
            minLength: 1,
            maxLength: 4,
          }),
          fc.integer({ min: 1, max: 3 }),
          fc.array(happening, { minLength: 1, maxLength: 40 }),
          (kinds, maxAttempts, history) => {
            interleavings++;
            const run = new SimulatedRun(kinds, maxAttempts);
            for (const h of history) run.apply(h);
            run.drain();
            expect(brokenInvariants(run), JSON.stringify(run.log.map((e) => e.type))).toEqual([]);
          },
        ),
        { numRuns: runs, seed: Number(process.env.SIM_SEED ?? 32) },
      );
      expect(interleavings).toBe(runs);
      // A bigger run on demand takes longer than vitest's default 5 s; 1 ms per history is ample on a shared machine.
    },
    Math.max(30_000, runs),
  );
});
