import { PlatformError } from "../core/errors.ts";
import { retryAt } from "./backoff.ts";
import type { Clock } from "./clock.ts";
import { WORKFLOW_DEFAULTS, type WorkflowDefinition } from "./definition.ts";
import { isTerminalEvent, nextEvent, type StoredEvent, type StoredEventOf } from "./events.ts";
import { encodePayload, toJsonValue } from "./json.ts";
import { isNonRetryableError } from "./nonRetryableError.ts";
import { resolveNextAction } from "./resolveNextAction.ts";
import {
  createScratchpad,
  createStepAttempt,
  type Scratchpad,
  type StepAttempt,
  type StepFunction,
} from "./stepContext.ts";
import { reasonOf, stepFailureEvents, TIMEOUT_REASON, timeoutEvents } from "./stepFailure.ts";
import type { WorkflowEventStore } from "./store.ts";

export interface ExecuteRunOptions {
  now: Clock;
  /** No new step is claimed once this much time has passed (default: 50 s, the spec's step-loop budget). */
  budgetMS?: number;
  /** Called after each event this execution appended, in order. */
  onEvent?(event: StoredEvent): void;
  /** When aborted, the loop stops before claiming its next step. */
  signal?: AbortSignal;
  /** Waits after losing a seq race; injectable for tests. Default: setTimeout. */
  sleep?(ms: number): Promise<void>;
}

export type ExecuteRunResult =
  /** workflow_completed or workflow_failed is the last event. */
  | { status: "terminal" }
  /** A retry is due at `wakeAt` (epoch ms); call again then. */
  | { status: "waiting"; wakeAt: number }
  /** The budget ran out with work left; call again right away (a fresh context). */
  | { status: "budget_exhausted" }
  /** Another executor holds the current step; if it has not finished by `timeoutAt`, calling again records the timeout. */
  | { status: "in_flight"; timeoutAt: number }
  /** `signal` was aborted. */
  | { status: "stopped" };

type AttemptOutcome = { kind: "returned"; value: unknown } | { kind: "threw"; error: unknown } | { kind: "timed_out" };

/**
 * Runs the step loop of one run (spec: "claim the next step, run the step
 * function, commit the result") until the run is terminal, must wait, is held
 * by someone else, or the budget is spent.
 *
 * Concurrency: a step is claimed by appending step_started at the next seq.
 * Exactly one executor wins a seq; a loser gets `seq_conflict`, backs off,
 * reads what happened and carries on from there. The same holds for commits:
 * if the seq after our step_started is taken (another executor recorded a
 * timeout), our late result is dropped.
 *
 * The log is read once per call; afterwards the scratchpad and last event are
 * advanced in memory, so each step costs O(1) store work.
 */
export async function executeRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  runId: string,
  options: ExecuteRunOptions,
): Promise<ExecuteRunResult> {
  const { now } = options;
  const budgetMS = options.budgetMS ?? WORKFLOW_DEFAULTS.stepLoopBudgetMS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const startedAt = now();

  const history = store.events(runId);
  const first = history[0];
  if (!first) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
  if (first.type !== "workflow_created" || first.payload.workflowName !== definition.name) {
    const actual = first.type === "workflow_created" ? first.payload.workflowName : "?";
    throw new PlatformError("internal", `Run "${runId}" belongs to workflow "${actual}", not "${definition.name}"`);
  }
  const pad = createScratchpad(history);
  let last = history[history.length - 1] as StoredEvent;
  let conflicts = 0;

  /** Appends a batch; false when another executor took the seq first (then `last` is re-read). */
  const tryAppend = async (batch: StoredEvent[]): Promise<boolean> => {
    try {
      store.append(batch);
    } catch (error) {
      if (!(error instanceof PlatformError && error.code === "seq_conflict")) throw error;
      conflicts++;
      // Jittered, growing pause so racing executors do not collide again in lockstep.
      await sleep(Math.min(100, 2 ** Math.min(conflicts, 6)) * (0.5 + Math.random() / 2));
      for (const event of store.events(runId, last.seq)) advance(event);
      return false;
    }
    for (const event of batch) {
      advance(event);
      options.onEvent?.(event);
    }
    return true;
  };
  const advance = (event: StoredEvent) => {
    pad.apply(event);
    last = event;
  };

  for (;;) {
    if (options.signal?.aborted) return { status: "stopped" };
    const action = resolveNextAction(last, definition.maxAttempts);
    switch (action.kind) {
      case "none": {
        if (isTerminalEvent(last)) return { status: "terminal" };
        if (last.type !== "step_started")
          throw new PlatformError("internal", `No action for a run whose last event is ${last.type}`);
        const timeoutAt = last.at + definition.stepTimeoutMS;
        if (now() < timeoutAt) return { status: "in_flight", timeoutAt };
        // The holder crashed or hangs: record the timeout (spec recovery reason `timeout`) and go on.
        await tryAppend(timeoutEvents(last, definition, now()));
        continue;
      }
      case "complete":
        await tryAppend([nextEvent(last, "workflow_completed", { result: action.result }, now())]);
        continue;
      case "fail":
        await tryAppend([nextEvent(last, "workflow_failed", { reason: action.reason, cause: action.cause }, now())]);
        continue;
      case "start_step": {
        if (last.type === "step_failed") {
          const wakeAt = retryAt(last, definition.backoff);
          if (now() < wakeAt) return { status: "waiting", wakeAt };
        }
        if (now() - startedAt >= budgetMS) return { status: "budget_exhausted" };
        let claim = nextEvent(last, "step_started", { step: action.step, attempt: action.attempt }, now());
        if (!(await tryAppend([claim]))) continue;
        for (;;) {
          const batch = await runClaimedStep(definition, claim, pad, now);
          const [completed] = batch;
          const next =
            batch.length === 1 && completed?.type === "step_completed" ? completed.payload.next_step : undefined;
          if (next === undefined || options.signal?.aborted || now() - startedAt >= budgetMS) {
            // A false here means our attempt was already settled by someone else; its result is dropped.
            await tryAppend(batch);
            break;
          }
          // A step that names the next one: its completion and the next step's claim are one append
          // (one transaction), the same two events the loop would write one after the other.
          const nextClaim = nextEvent(completed!, "step_started", { step: next, attempt: 1 }, completed!.at);
          if (!(await tryAppend([completed!, nextClaim]))) break;
          claim = nextClaim;
        }
        continue;
      }
    }
  }
}

/** Runs one claimed attempt and returns the events that record its outcome. */
async function runClaimedStep(
  definition: WorkflowDefinition,
  claim: StoredEventOf<"step_started">,
  pad: Scratchpad,
  now: Clock,
): Promise<StoredEvent[]> {
  const { step, attempt } = claim.payload;
  const fail = (reason: string, errorRetryable: boolean) =>
    stepFailureEvents(claim, { step, attempt, reason, errorRetryable, maxAttempts: definition.maxAttempts, at: now() });

  const fn = definition.steps[step];
  if (!fn) {
    // The log names a step the code no longer has: no retry can fix that.
    return fail(`Workflow "${definition.name}" has no step "${step}" (was it renamed or removed?)`, false);
  }
  const attemptState = createStepAttempt({
    scratchpad: pad,
    step,
    attempt,
    runId: claim.runId,
    workflowId: claim.workflowId,
  });
  const outcome = await runWithTimeout(fn, attemptState, definition.stepTimeoutMS);
  attemptState.seal();

  switch (outcome.kind) {
    case "timed_out":
      return fail(TIMEOUT_REASON, true);
    case "threw":
      return fail(
        reasonOf(outcome.error),
        !(isNonRetryableError(outcome.error) || attemptState.isWriteError(outcome.error)),
      );
    case "returned":
      try {
        return completionEvents(definition, claim, outcome.value, attemptState, now());
      } catch (error) {
        // An unstorable result or an unknown next step is a bug in the step; retrying would repeat it.
        return fail(reasonOf(error), false);
      }
  }
}

/** step_completed (with next_step), or step_completed + workflow_completed in one batch. */
function completionEvents(
  definition: WorkflowDefinition,
  claim: StoredEventOf<"step_started">,
  value: unknown,
  attemptState: StepAttempt,
  at: number,
): StoredEvent[] {
  const step = claim.payload.step;
  const writes = attemptState.writes();
  if (typeof value !== "object" || value === null) throw badReturn(definition, step, value);
  const result = value as { step?: unknown; done?: unknown; result?: unknown };
  if (result.done === true) {
    const completed = nextEvent(claim, "step_completed", { step, writes }, at);
    const payload = {
      result: toJsonValue(
        result.result === undefined ? null : result.result,
        `result of workflow "${definition.name}"`,
      ),
    };
    encodePayload(completed.payload, `The writes of step "${step}"`);
    encodePayload(payload, `The result of workflow "${definition.name}"`);
    return [completed, nextEvent(completed, "workflow_completed", payload, at)];
  }
  if (typeof result.step === "string") {
    if (!Object.hasOwn(definition.steps, result.step)) {
      throw new PlatformError(
        "invalid_input",
        `Step "${step}" continues with step "${result.step}", which workflow "${definition.name}" does not define`,
      );
    }
    const completed = nextEvent(claim, "step_completed", { step, writes, next_step: result.step }, at);
    encodePayload(completed.payload, `The writes of step "${step}"`);
    return [completed];
  }
  throw badReturn(definition, step, value);
}

function badReturn(definition: WorkflowDefinition, step: string, value: unknown): PlatformError {
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  return new PlatformError(
    "invalid_input",
    `Step "${step}" of workflow "${definition.name}" returned ${shown}; return { step: "<next step>" } or { done: true, result }`,
  );
}

/** Races the step against its timeout. The step is not killed (JS cannot); its late outcome is ignored. */
async function runWithTimeout(fn: StepFunction, attemptState: StepAttempt, timeoutMS: number): Promise<AttemptOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<AttemptOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timed_out" }), timeoutMS);
  });
  const ran = Promise.resolve()
    .then(() => fn(attemptState.ctx))
    .then(
      (value): AttemptOutcome => ({ kind: "returned", value }),
      (error: unknown): AttemptOutcome => ({ kind: "threw", error }),
    );
  try {
    return await Promise.race([ran, timedOut]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
