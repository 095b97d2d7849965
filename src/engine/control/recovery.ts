import { createChildrenFold } from "./children.ts";
import { decodeContinuation, readsInbox } from "../execution/continuation.ts";
import { attemptsAllowedAfter, stepNamed, stepPolicy, type WorkflowDefinition } from "../api/definition.ts";
import { isControlEvent, isTerminalEvent, nextEvent, type StoredEvent } from "../execution/events.ts";
import { createInbox, isPausedAfter, lastStateEvent, type QueuedEvent } from "./receivedEvents.ts";
import { resolveNextAction, type RollbackCursor, type RunOutstanding } from "../execution/resolveNextAction.ts";
import { createRollbackFold, hasRollbacks, rollbackFailureEvent } from "../execution/rollback.ts";
import { abandonedAttemptEvents, INTERRUPTED_REASON, TIMEOUT_REASON } from "../execution/stepFailure.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/**
 * When a run counts as stuck, including `stranded`: a run
 * whose next step (or the step it would retry) the code no longer has under
 * that name or an old one in `renamed` (a push made with `--force`): driven
 * at once, it fails there instead of waiting for its sleep, wait or retry.
 */
export type RecoveryReason =
  | "timeout"
  | "stuck_created"
  | "stuck_completed"
  | "stuck_failed"
  | "stuck_terminal"
  | "stuck_rollback"
  | "stranded";

export interface RecoveryInput {
  /**
   * True while this adapter is itself driving the run (an execution in
   * progress or a wake-up timer pending). Such a run is never stuck: its
   * executor records its own timeouts and retries. It may be stranded
   *, which its wake-up would find only at its time.
   */
  executingHere: boolean;
}

/** A run's state asked about at `now`, with what it has outstanding (each defaults to none). */
export interface RecoveryCheck extends RecoveryInput, RunOutstanding {
  now: number;
}

/** A run to recover, by id, at `now`. */
export interface RecoveryRequest extends RecoveryInput {
  runId: string;
  now: number;
}

/**
 * A run's log as recovery needs it: its last event, its state (the last
 * event other than a control event), its undelivered events, the run ids of
 * its children that have ended, whether it is paused, and its rollbacks.
 */
export interface RunTail {
  last: StoredEvent;
  state: StoredEvent;
  queued: readonly QueuedEvent[];
  finished: ReadonlySet<string>;
  paused: boolean;
  rollbacks: RollbackCursor;
}

const NONE_FINISHED: ReadonlySet<string> = new Set();
const NO_ROLLBACKS: RollbackCursor = { next: null, failure: null };

/** Events after which a workflow with rollback handlers needs its whole log to say what is next. */
const ROLLBACK_POINTS: ReadonlySet<StoredEvent["type"]> = new Set([
  "cancel_requested",
  "step_started",
  "step_failed",
  "rollback_started",
  "rollback_failed",
  "rollback_completed",
]);

/**
 * Reads what recovery needs of a run: one read of its last event, and the
 * whole log only for a run that waits for an event or its children, whose
 * last event is a control event (rare, and never on a step's path), or of a
 * workflow with rollback handlers that is in a step, failed one or rolls back.
 */
export function readRunTail(store: WorkflowEventStore, runId: string, definition?: WorkflowDefinition): RunTail | null {
  const last = store.lastEvent(runId);
  if (last === null) return null;
  const waits = last.type === "step_completed" && readsInbox(decodeContinuation(last.payload));
  const rollsBack = definition !== undefined && hasRollbacks(definition) && ROLLBACK_POINTS.has(last.type);
  if (!isControlEvent(last) && !waits && !rollsBack)
    return { last, state: last, queued: [], finished: NONE_FINISHED, paused: false, rollbacks: NO_ROLLBACKS };
  const events = store.events(runId);
  return {
    last,
    state: lastStateEvent(events) ?? last,
    queued: createInbox(events).queued,
    finished: new Set(createChildrenFold(events).finished.keys()),
    paused: isPausedAfter(events),
    rollbacks: definition && hasRollbacks(definition) ? createRollbackFold(events, definition) : NO_ROLLBACKS,
  };
}

/** The step a live run's state says it will run next (or retry), when the code no longer has it. */
export function strandedStep(state: StoredEvent, definition: WorkflowDefinition): string | null {
  let step: string | undefined;
  if (state.type === "step_completed") {
    const next = decodeContinuation(state.payload);
    if (next.kind !== "done") step = next.step;
  } else if (state.type === "step_failed" && state.payload.retryable) step = state.payload.step;
  return step !== undefined && stepNamed(definition, step) === undefined ? step : null;
}

/**
 * Which stuck state, if any, a run whose state is `last` (its last event other
 * than event_received) is in at `now`. A retryable step_failed counts as
 * stuck_failed even before its retry time: nobody is driving it, so it must be
 * handed to an executor, which then waits out the backoff. A
 * run that sleeps, or waits for an event (`queued` holds those it was sent and
 * not yet given), is healthy until its wake-up or timeout is due.
 */
export function detectRecovery(
  last: StoredEvent | null,
  definition: WorkflowDefinition,
  { now, executingHere, ...outstanding }: RecoveryCheck,
): RecoveryReason | null {
  if (last === null) return null;
  // Even a run whose wake-up is pending here: it would only fail when woken, a year later perhaps.
  if (strandedStep(last, definition) !== null) return "stranded";
  if (executingHere) return null;
  if (last.type === "step_started")
    return now >= last.at + stepPolicy(definition, last.payload.step).stepTimeoutMS ? "timeout" : null;
  if (last.type === "rollback_started")
    return now >= last.at + definition.rollbackPolicy.stepTimeoutMS ? "timeout" : null;
  // Whatever the transition table says is due now and nobody is doing.
  const action = resolveNextAction(last, attemptsAllowedAfter(definition, last), outstanding);
  switch (action.kind) {
    // Its retry time is the executor's to wait out, as a failed step's is.
    case "start_rollback":
      return "stuck_rollback";
    case "complete":
    case "fail":
    case "cancel":
      return "stuck_terminal";
    case "start_step":
      if (action.notBefore !== undefined && now < action.notBefore) return null;
      if (last.type === "step_completed") return "stuck_completed";
      return last.type === "step_failed" ? "stuck_failed" : "stuck_created";
    // Queued: its queue starts it, not recovery.
    case "queued":
    case "wait_for_event":
    case "wait_for_children":
    case "none":
      return null;
  }
}

export interface RecoveryOutcome {
  reason: RecoveryReason | null;
  /** Events recovery wrote (the timeout failure, or the missing terminal event). */
  appended: StoredEvent[];
  /** True when the adapter should start an execution of the run now. */
  reenqueue: boolean;
}

/**
 * Detects and repairs one run:
 * - timeout: writes step_failed{reason "timeout"} (+ workflow_failed in the
 *   same batch when attempts are exhausted); re-enqueues unless terminal;
 * - stuck_terminal: writes the missing workflow_completed/workflow_failed;
 * - stuck_created / stuck_completed / stuck_failed / stuck_rollback: asks for a re-enqueue.
 * If another executor moves the run while we repair (its seq is taken), the run is
 * alive: nothing is written and an execution is requested to look at it.
 */
export function recoverRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  { runId, now, executingHere }: RecoveryRequest,
): RecoveryOutcome {
  const tail = executingHere ? null : readRunTail(store, runId, definition);
  // A paused run is left as it is: what falls due meanwhile takes effect when it is resumed.
  if (tail?.paused) return { reason: null, appended: [], reenqueue: false };
  const reason = detectRecovery(tail?.state ?? null, definition, {
    now,
    executingHere,
    queued: tail?.queued,
    finished: tail?.finished,
    rollbacks: tail?.rollbacks,
  });
  if (reason === null || tail === null) return { reason: null, appended: [], reenqueue: false };
  const { last, state } = tail;
  let repair: StoredEvent[] = [];
  if (reason === "timeout" && state.type === "step_started")
    repair = abandonedAttemptEvents(state, definition, {
      at: now,
      reason: TIMEOUT_REASON,
      previous: last,
      rollsBack: tail.rollbacks.next !== null,
    });
  if (reason === "timeout" && state.type === "rollback_started")
    repair = [rollbackFailureEvent(definition, state, { reason: TIMEOUT_REASON, errorRetryable: true, at: now }, last)];
  if (reason === "stuck_terminal") {
    const action = resolveNextAction(state, attemptsAllowedAfter(definition, state), { rollbacks: tail.rollbacks });
    if (action.kind === "complete")
      repair = [nextEvent(last, { type: "workflow_completed", payload: { result: action.result }, at: now })];
    if (action.kind === "fail")
      repair = [
        nextEvent(last, { type: "workflow_failed", payload: { reason: action.reason, cause: action.cause }, at: now }),
      ];
    if (action.kind === "cancel")
      repair = [nextEvent(last, { type: "workflow_cancelled", payload: { reason: action.reason }, at: now })];
  }
  if (repair.length === 0) return { reason, appended: [], reenqueue: true };
  const appended = appendUnlessMoved(store, repair);
  if (appended.length === 0) return { reason, appended, reenqueue: true };
  return { reason, appended, reenqueue: !isTerminalEvent(appended[appended.length - 1] as StoredEvent) };
}

/**
 * For a host that knows the executor of a run's step in
 * flight is gone (a restarted actor, a restarted Node process), records that
 * attempt at once as step_failed{reason "interrupted"}, retryable (+
 * workflow_failed when it was the last attempt), instead of waiting out
 * `stepTimeoutMS` (a rollback in flight likewise, as rollback_failed). Returns what it appended: nothing when nothing is in flight.
 */
export function failInterruptedStep(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  runId: string,
  now: number,
): StoredEvent[] {
  const tail = readRunTail(store, runId, definition);
  // Recorded even while paused: it is the outcome of the attempt in flight, not a new claim.
  if (tail?.state.type === "rollback_started") {
    const interrupted = { reason: INTERRUPTED_REASON, errorRetryable: true, at: now };
    return appendUnlessMoved(store, [rollbackFailureEvent(definition, tail.state, interrupted, tail.last)]);
  }
  if (tail?.state.type !== "step_started") return [];
  const rollsBack = tail.rollbacks.next !== null;
  return appendUnlessMoved(
    store,
    abandonedAttemptEvents(tail.state, definition, {
      at: now,
      reason: INTERRUPTED_REASON,
      previous: tail.last,
      rollsBack,
    }),
  );
}

/** Appends a repair; nothing when the run moved meanwhile (its seq was taken: someone is driving it). */
function appendUnlessMoved(store: WorkflowEventStore, repair: StoredEvent[]): StoredEvent[] {
  return store.append(repair).appended ? repair : [];
}
