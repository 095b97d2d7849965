import { isPlatformError, PlatformError } from "../../core/errors.ts";
import { refuseUnknownKeys } from "../../core/unknownKeys.ts";
import { retryAt } from "./backoff.ts";
import { installedCallbackLinkIssuer, type CallbackLinkIssuer } from "../control/callbackLink.ts";
import type { Clock } from "../api/clock.ts";
import {
  attemptsAllowedAfter,
  isNamedNonRetryable,
  stepNamed,
  stepPolicy,
  WORKFLOW_DEFAULTS,
  type WorkflowDefinition,
} from "../api/definition.ts";
import {
  type ChildRunPort,
  childRequestsOf,
  type ChildrenFold,
  createChildrenFold,
  isFinalStartError,
} from "../control/children.ts";
import type { ChildOutcome, ChildRef } from "./continuation.ts";
import { isControlEvent, isTerminalEvent, nextEvent, type StoredEvent, type StoredEventOf } from "./events.ts";
import { encodePayload, toJsonValue } from "../api/json.ts";
import { isNonRetryableError } from "./nonRetryableError.ts";
import {
  checkAwaitedRunId,
  continuationOfReturn,
  decodeContinuation,
  encodeContinuation,
  isAwaitedEvent,
  startsAtOnce,
} from "./continuation.ts";
import type { AwaitedRun } from "./continuation.ts";
import { runEndedPayload } from "../control/runControl.ts";
import {
  createInbox,
  isPausedAfter,
  lastStateEvent,
  type DeliveredEvent,
  type Inbox,
} from "../control/receivedEvents.ts";
import { resolveNextAction } from "./resolveNextAction.ts";
import { createRollbackFold, rollbackFailureEvent, type RollbackFold } from "./rollback.ts";
import { createRollbackContext } from "./rollbackContext.ts";
import { retryAfterMSOf } from "./retryAfterError.ts";
import {
  createScratchpad,
  createStepAttempt,
  currentStepEnv,
  type Scratchpad,
  type StepAttempt,
} from "./stepContext.ts";
import { abandonedAttemptEvents, reasonOf, stepFailureEvents, TIMEOUT_REASON } from "./stepFailure.ts";
import type { WorkflowEventStore } from "../storage/store.ts";
import type { StreamMessageInput } from "../streams/runStream.ts";

export interface ExecuteRunOptions {
  now: Clock;
  /** No new step is claimed once this much time has passed (default: 50 s, the step-loop budget). */
  budgetMS?: number;
  /** Called after each event this execution appended, in order. */
  onEvent?(event: StoredEvent): void;
  /** When aborted, the loop stops before claiming its next step. */
  signal?: AbortSignal;
  /** Waits after losing a seq race; injectable for tests. Default: setTimeout. */
  sleep?(ms: number): Promise<void>;
  /**
   * Called before the loop waits on anything but its own work: a step's
   * promise, or the pause after losing a seq race. Until then everything it
   * did is one synchronous stretch (for a host whose writes commit at the end
   * of one, all or nothing); a host that must not lose a waiting run arms its
   * safety net here. Steps that return without a promise never call it.
   */
  beforeWaiting?(): void;
  /**
   * For a host where nothing else can append to the run while the loop runs
   * without waiting (a single-threaded actor that drives each run once at a
   * time, whose writes of one synchronous stretch commit together anyway):
   * the events of such a stretch are kept in memory and appended in one
   * batch before the loop waits on anything, reads the log, or returns. The
   * first append after a wait goes to the store at once, so whatever others
   * appended meanwhile (an event sent, a cancel) is met as without this.
   */
  exclusive?: boolean;
  /**
   * How this host starts and cancels child runs (a step
   * returning `children`). Without it such a step fails without retry.
   */
  children?: ChildRunPort;
  /**
   * How this host waits for another run to end (a step returning `waitForRun`): `watch` records the
   * waiter with the awaited run, to be told of its end (see runControl.ts `deliverRunEnded`), and
   * answers how it ended if it has ended already. Without it such a step fails without retry.
   */
  awaitRun?: AwaitRunPort;
  /** Where `ctx.publish` appends (the host's streams, liveRunStream.ts); without it `ctx.publish` refuses. */
  stream?: StreamPublishPort;
  /** How `ctx.callbackURL` signs; default: the one the runtime installed (callbackLink.ts); none: it refuses. */
  callbackLinks?: CallbackLinkIssuer;
}

/** A host's side of `ctx.publish`: appends to the run's stream (checked against its limits) and tells its readers. */
export interface StreamPublishPort {
  publish(runId: string, message: StreamMessageInput): unknown;
}

/** A host's side of `waitForRun`; `watch` is idempotent (a retried step asks again) and rejects `not_found`. */
export interface AwaitRunPort {
  watch(waiterRunId: string, awaitedRunId: string): Promise<AwaitedRun | null>;
}

export type ExecuteRunResult =
  /** workflow_completed, workflow_failed or workflow_cancelled is the last event. */
  | { status: "terminal" }
  /** A retry, a sleep or a wait's timeout is due at `wakeAt` (epoch ms); call again then (or when an event is sent). */
  | { status: "waiting"; wakeAt: number }
  /**
   * The run waits for an event without a timeout, or for its
   * children; call again when one is sent, or when the last child has ended.
   */
  | { status: "idle" }
  /** The budget ran out with work left; call again right away (a fresh context). */
  | { status: "budget_exhausted" }
  /** Another executor holds the current step; if it has not finished by `timeoutAt`, calling again records the timeout. */
  | { status: "in_flight"; timeoutAt: number }
  /** `signal` was aborted. */
  | { status: "stopped" }
  /** The run is paused; nothing is due until `workflow.resume` drives it again. */
  | { status: "paused" };

type AttemptOutcome = { kind: "returned"; value: unknown } | { kind: "threw"; error: unknown } | { kind: "timed_out" };

/**
 * Runs the step loop of one run (claim the next step, run the step
 * function, commit the result) until the run is terminal, must wait, is held
 * by someone else, or the budget is spent.
 *
 * Concurrency: a step is claimed by appending step_started at the next seq.
 * Exactly one executor wins a seq; for a loser the store answers `seqTaken`
 * (a race, not an error), and it backs off, reads what happened and carries on from
 * there. The same holds for commits: if the seq after our step_started is
 * taken (another executor recorded a timeout, or the run was cancelled), our
 * late result is dropped. Only the control events (appended by
 * `workflow.send`, `workflow.pause` and `workflow.resume` may append while a
 * step runs) do not settle anything: a commit that lost its seq to those
 * alone is appended after them, and a pause stops the loop before it claims
 * another step.
 *
 * A step the log names is looked up through the
 * definition's `renamed`; a run whose next step the code has neither under
 * that name nor an old one (a push that stranded it) claims it at once, even
 * before its sleep or wait is over, and fails there without a retry.
 *
 * The log is read once per call; afterwards the run's state is advanced in
 * memory (see {@link RunCursor}), so each step costs O(1) store work. A run
 * that waits for an event reads the log's tail once more before saying so,
 * in case an event arrived meanwhile.
 */
export async function executeRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  runId: string,
  options: ExecuteRunOptions,
): Promise<ExecuteRunResult> {
  const run = RunCursor.open(store, definition, runId, options);
  // Whatever way the loop ends, its events are in the store before the caller hears of it.
  try {
    return await stepLoop(run, definition, options);
  } finally {
    run.flush();
  }
}

/**
 * One execution's position in its run's log, and the only writer of the
 * run's events for that execution. Its invariants:
 *
 * 1. `last` is the log's last event as this execution knows it (in the store,
 *    or in `unwritten`); every batch it appends continues at `last.seq + 1`.
 * 2. `state` is the last of those events other than a control event (what
 *    the resolver reads); `pad` (the scratchpad), `inbox` (events sent to the
 *    run), `children` (its children's ends) and `paused` are folded from
 *    every event up to `last`.
 * 3. `unwritten` holds events not in the store yet. It is non-empty only
 *    while the execution has not waited on anything since its last write to
 *    the store (an exclusive host's synchronous stretch, whose writes commit
 *    together anyway), and it is written before the execution waits on
 *    anything, reads the log or returns.
 * 4. The first append after a wait goes to the store at once, so whatever
 *    others appended meanwhile (an event sent, a cancel, a timeout recorded)
 *    is met, and a lost seq is seen, before anything more is written.
 */
class RunCursor {
  readonly pad: Scratchpad;
  readonly inbox: Inbox;
  readonly children: ChildrenFold;
  readonly rollbacks: RollbackFold;
  #last: StoredEvent;
  #state: StoredEvent;
  #paused: boolean;
  readonly #store: WorkflowEventStore;
  readonly #runId: string;
  readonly #options: ExecuteRunOptions;
  #unwritten: StoredEvent[] = [];
  /** Whether the next append may stay in memory (invariants 3 and 4). */
  #mayDefer: boolean;
  /** Seqs lost so far: the backoff after a lost race grows with them. */
  #racesLost = 0;

  /** Reads the run's log once and checks that it is a run of `definition`. */
  static open(store: WorkflowEventStore, definition: WorkflowDefinition, runId: string, options: ExecuteRunOptions) {
    const history = store.events(runId);
    const first = history[0];
    if (!first) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
    if (first.type !== "workflow_created" || first.payload.workflowName !== definition.name) {
      const actual = first.type === "workflow_created" ? first.payload.workflowName : "?";
      throw new PlatformError("internal", `Run "${runId}" belongs to workflow "${actual}", not "${definition.name}"`);
    }
    return new RunCursor(store, runId, history, definition, options);
  }

  private constructor(
    store: WorkflowEventStore,
    runId: string,
    history: StoredEvent[],
    definition: WorkflowDefinition,
    options: ExecuteRunOptions,
  ) {
    this.#store = store;
    this.#runId = runId;
    this.#options = options;
    this.pad = createScratchpad(history);
    this.inbox = createInbox(history);
    this.children = createChildrenFold(history);
    this.rollbacks = createRollbackFold(history, definition);
    this.#last = history[history.length - 1] as StoredEvent;
    this.#state = lastStateEvent(history) as StoredEvent;
    this.#paused = isPausedAfter(history);
    this.#mayDefer = options.exclusive === true;
  }

  /** Whether the run is paused (its last pause or resume mark is a pause): no step may be claimed. */
  get paused(): boolean {
    return this.#paused;
  }

  /** The log's last event as this execution knows it (invariant 1). */
  get last(): StoredEvent {
    return this.#last;
  }

  /** The run's state: its last event other than a control event (invariant 2). */
  get state(): StoredEvent {
    return this.#state;
  }

  /** Writes what is kept in memory (invariant 3). */
  flush(): void {
    if (this.#unwritten.length === 0) return;
    const batch = this.#unwritten;
    this.#unwritten = [];
    // Deferred events follow the last write of this same synchronous stretch: nobody can have appended in between.
    const result = this.#store.append(batch);
    if (!result.appended)
      throw new PlatformError(
        "internal",
        `Run "${this.#runId}" was appended to during an exclusive stretch (seq ${result.seqTaken.seq} taken)`,
      );
    for (const event of batch) this.#options.onEvent?.(event);
  }

  /** Before the execution waits on anything: its events are written, the host is told, others may append until it resumes. */
  readonly beforeWaiting = (): void => {
    this.flush();
    this.#mayDefer = false;
    this.#options.beforeWaiting?.();
  };

  /** Folds in what others appended since `last`; true when there was nothing. */
  catchUp(): boolean {
    this.flush();
    const arrived = this.#store.events(this.#runId, this.last.seq);
    for (const event of arrived) this.#advance(event);
    return arrived.length === 0;
  }

  /**
   * Appends a batch that follows `last`, and answers it as appended; null
   * when another executor took the seq first (then the cursor has backed off
   * and caught up). With `rebase`, a batch that lost its seq only to control
   * events is appended after them: what it records depends on none of them
   * (a function may first trim it: a chained claim is dropped after a pause).
   */
  async append(
    batch: StoredEvent[],
    rebase: boolean | ((batch: StoredEvent[]) => StoredEvent[]) = false,
  ): Promise<StoredEvent[] | null> {
    if (this.#mayDefer) {
      for (const event of batch) this.#advance(event);
      this.#unwritten.push(...batch);
      return batch;
    }
    for (;;) {
      if (this.#store.append(batch).appended) {
        this.#mayDefer = this.#options.exclusive === true;
        for (const event of batch) {
          this.#advance(event);
          this.#options.onEvent?.(event);
        }
        return batch;
      }
      const before = this.last.seq;
      this.catchUp();
      if (rebase && this.last.seq > before && this.state.seq <= before) {
        const kept = typeof rebase === "function" ? rebase(batch) : batch;
        batch = kept.map((event, index) => ({ ...event, seq: this.last.seq + 1 + index }) as StoredEvent);
        continue;
      }
      await this.#backOff();
      return null;
    }
  }

  /** The loser of a race waits a jittered, growing pause (so racers do not collide again in lockstep), then reads what happened. */
  async #backOff(): Promise<void> {
    this.#racesLost++;
    this.beforeWaiting();
    const sleep = this.#options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    await sleep(Math.min(100, 2 ** Math.min(this.#racesLost, 6)) * (0.5 + Math.random() / 2));
    this.catchUp();
  }

  #advance(event: StoredEvent): void {
    this.pad.apply(event);
    this.inbox.apply(event);
    this.children.apply(event);
    this.rollbacks.apply(event);
    this.#last = event;
    if (event.type === "workflow_paused") this.#paused = true;
    else if (event.type === "workflow_resumed") this.#paused = false;
    else if (!isControlEvent(event)) this.#state = event;
  }
}

/** The loop: resolve the next action from the run's state, do it, repeat, until there is nothing this execution may do now. */
async function stepLoop(
  run: RunCursor,
  definition: WorkflowDefinition,
  options: ExecuteRunOptions,
): Promise<ExecuteRunResult> {
  const { now } = options;
  const startedAt = now();
  const budgetMS = options.budgetMS ?? WORKFLOW_DEFAULTS.stepLoopBudgetMS;
  /** No new step is claimed once the budget is spent or the host asked to stop. */
  const mustStop = () => options.signal?.aborted === true || now() - startedAt >= budgetMS;
  for (;;) {
    if (options.signal?.aborted) return { status: "stopped" };
    const { state } = run;
    const action = resolveNextAction(state, attemptsAllowedAfter(definition, state), {
      queued: run.inbox.queued,
      finished: run.children.finished,
      rollbacks: run.rollbacks,
    });
    // A paused run claims nothing and records no timeout (they take effect on resume); a missing terminal
    // event is still written, and a cancel that rolls back goes on: the run is to end.
    const ending = action.kind === "complete" || action.kind === "fail" || action.kind === "cancel";
    const cancelling = run.rollbacks.failure?.cause === "cancelled";
    if (run.paused && !ending && !cancelling && !isTerminalEvent(state)) return { status: "paused" };
    switch (action.kind) {
      case "none": {
        if (isTerminalEvent(state)) return { status: "terminal" };
        if (state.type === "rollback_started") {
          const timeoutAt = state.at + definition.rollbackPolicy.stepTimeoutMS;
          if (now() < timeoutAt) return { status: "in_flight", timeoutAt };
          const timedOut = { reason: TIMEOUT_REASON, errorRetryable: true, at: now() };
          await run.append([rollbackFailureEvent(definition, state, timedOut, run.last)], true);
          continue;
        }
        if (state.type !== "step_started")
          throw new PlatformError("internal", `No action for a run whose last event is ${state.type}`);
        const timeoutAt = state.at + stepPolicy(definition, state.payload.step).stepTimeoutMS;
        if (now() < timeoutAt) return { status: "in_flight", timeoutAt };
        // The holder crashed or hangs: record the timeout (recovery reason `timeout`) and go on.
        const rollsBack = run.rollbacks.next !== null;
        await run.append(
          abandonedAttemptEvents(state, definition, {
            at: now(),
            reason: TIMEOUT_REASON,
            previous: run.last,
            rollsBack,
          }),
          true,
        );
        continue;
      }
      case "wait_for_event":
      case "wait_for_children":
        // A stranded run need not wait to fail.
        if (stepNamed(definition, action.step) === undefined) {
          await claim(run, definition, action.step, 1, undefined, options, mustStop);
          continue;
        }
        if (run.catchUp()) return { status: "idle" };
        continue;
      // Its queue starts it (workflow_dequeued), then drives it again.
      case "queued":
        return { status: "idle" };
      case "complete":
        await run.append(
          [nextEvent(run.last, { type: "workflow_completed", payload: { result: action.result }, at: now() })],
          true,
        );
        continue;
      case "fail":
        await run.append(
          [
            nextEvent(run.last, {
              type: "workflow_failed",
              payload: { reason: action.reason, cause: action.cause },
              at: now(),
            }),
          ],
          true,
        );
        continue;
      case "cancel":
        await run.append(
          [nextEvent(run.last, { type: "workflow_cancelled", payload: { reason: action.reason }, at: now() })],
          true,
        );
        continue;
      case "start_step": {
        const notBefore =
          state.type === "step_failed"
            ? retryAt(state, stepPolicy(definition, state.payload.step).backoff)
            : action.notBefore;
        const stranded = stepNamed(definition, action.step) === undefined;
        if (notBefore !== undefined && now() < notBefore && !stranded) {
          // A wait with a timeout: an event may have arrived since the log was read.
          if (action.event === null && !run.catchUp()) continue;
          return { status: "waiting", wakeAt: notBefore };
        }
        if (now() - startedAt >= budgetMS) return { status: "budget_exhausted" };
        // After a wait, the step names the event it runs with; its retries name the same one.
        const eventSeq = action.event
          ? action.event.seq
          : state.type === "step_failed"
            ? run.inbox.deliveredSeq
            : undefined;
        await claim(run, definition, action.step, action.attempt, eventSeq, options, mustStop);
        continue;
      }
      case "start_rollback": {
        if (state.type === "rollback_failed") {
          const notBefore = retryAt(state, definition.rollbackPolicy.backoff);
          if (now() < notBefore) return { status: "waiting", wakeAt: notBefore };
        }
        if (now() - startedAt >= budgetMS) return { status: "budget_exhausted" };
        await rollBack(run, definition, action, options);
        continue;
      }
    }
  }
}

/**
 * Claims one attempt of a rollback (rollback_started) and, if the claim won,
 * runs the handler and records its outcome. The handler is the one the code
 * has now; a completion whose handler is gone fails its rollback at once.
 */
async function rollBack(
  run: RunCursor,
  definition: WorkflowDefinition,
  action: { step: string; completedSeq: number; attempt: number },
  options: ExecuteRunOptions,
): Promise<void> {
  const { now } = options;
  const payload = { step: action.step, attempt: action.attempt, completed_seq: action.completedSeq };
  const claimed = await run.append([nextEvent(run.last, { type: "rollback_started", payload, at: now() })]);
  const started = claimed?.[0] as StoredEventOf<"rollback_started"> | undefined;
  if (!started) return;
  const pending = run.rollbacks.pendingAt(action.completedSeq);
  const handler = Object.hasOwn(definition.rollback, action.step) ? definition.rollback[action.step] : undefined;
  const failure = run.rollbacks.failure;
  if (!pending || !handler || !failure) {
    const gone = `Workflow "${definition.name}" has no rollback handler for step "${action.step}" any more`;
    await run.append(
      [rollbackFailureEvent(definition, started, { reason: gone, errorRetryable: false, at: now() })],
      true,
    );
    return;
  }
  const ctx = createRollbackContext({
    scratchpad: run.pad,
    output: pending.output,
    failure,
    step: action.step,
    attempt: action.attempt,
    runId: started.runId,
    workflowId: started.workflowId,
    env: currentStepEnv(),
  });
  const outcome = await runWithTimeout(() => handler(ctx), definition.rollbackPolicy.stepTimeoutMS, run.beforeWaiting);
  const at = now();
  const recorded =
    outcome.kind === "returned"
      ? nextEvent(started, {
          type: "rollback_completed",
          payload: { step: action.step, completed_seq: action.completedSeq },
          at,
        })
      : outcome.kind === "timed_out"
        ? rollbackFailureEvent(definition, started, { reason: TIMEOUT_REASON, errorRetryable: true, at })
        : rollbackFailureEvent(definition, started, {
            reason: reasonOf(outcome.error),
            errorRetryable: !isNonRetryableError(outcome.error),
            at,
            error: outcome.error,
          });
  await run.append([recorded], true);
}

/**
 * Claims a step (step_started) and, if the claim won, runs it and what
 * chains after it. The step is the one the code has for the name the log
 * gives (see `renamed`); a name it does not have at all is claimed as it is,
 * and fails when it runs.
 */
async function claim(
  run: RunCursor,
  definition: WorkflowDefinition,
  logStep: string,
  attempt: number,
  eventSeq: number | undefined,
  options: ExecuteRunOptions,
  mustStop: () => boolean,
): Promise<void> {
  const { now } = options;
  const started = { step: stepNamed(definition, logStep) ?? logStep, attempt };
  const claimed = await run.append([
    nextEvent(run.last, {
      type: "step_started",
      payload: eventSeq === undefined ? started : { ...started, event_seq: eventSeq },
      at: now(),
    }),
  ]);
  if (claimed) await runChain(run, definition, claimed[0] as StoredEventOf<"step_started">, options, mustStop);
}

/**
 * Runs a claimed step and commits its outcome. While each step names the
 * next one to start at once (and `mustStop` says nothing against it), its
 * completion and the next step's claim are one append (one transaction): the
 * same two events the loop would write one after the other.
 */
async function runChain(
  run: RunCursor,
  definition: WorkflowDefinition,
  first: StoredEventOf<"step_started">,
  options: ExecuteRunOptions,
  mustStop: () => boolean,
): Promise<void> {
  const { now } = options;
  for (let current = first; ; ) {
    const batch = await runClaimedStep(definition, current, run, now, options);
    const completed = batch.length === 1 && batch[0]?.type === "step_completed" ? batch[0] : undefined;
    const next = completed && decodeContinuation(completed.payload);
    if (!completed || !next || !startsAtOnce(next) || mustStop()) {
      // A null here means our attempt was already settled by someone else; its result is dropped.
      const committed = await run.append(batch, true);
      // Cancelled while its children were being started: nothing records them, so they are cancelled here.
      if (!committed && next?.kind === "children" && isTerminalEvent(run.state) && options.children)
        await options.children.cancel(startedRunIds(next.children), "The parent run was cancelled");
      return;
    }
    const nextClaim = nextEvent(completed, {
      type: "step_started",
      payload: { step: next.step, attempt: 1 },
      at: completed.at,
    });
    // Paused while the step ran: its completion is committed, the next step is not claimed.
    const chained = await run.append([completed, nextClaim], (pair) => (run.paused ? pair.slice(0, 1) : pair));
    if (!chained || chained.length < 2) return;
    current = chained[1] as StoredEventOf<"step_started">;
  }
}

function startedRunIds(children: readonly ChildRef[]): string[] {
  return children.filter((child) => child.refused === undefined).map((child) => child.runId);
}

/**
 * Runs one claimed attempt and returns the events that record its outcome.
 * A step that returns `children` has them started (exactly once, see
 * children.ts) before its completion is written, which records their run ids.
 */
async function runClaimedStep(
  definition: WorkflowDefinition,
  claim: StoredEventOf<"step_started">,
  run: RunCursor,
  now: Clock,
  options: ExecuteRunOptions,
): Promise<StoredEvent[]> {
  const { pad, beforeWaiting } = run;
  const delivered: DeliveredEvent | null = run.inbox.delivered;
  // A run's end told to a run that waited for it is `ctx.awaited`, not a sent event.
  const awaited = delivered && isAwaitedEvent(delivered.name) ? (delivered.payload as unknown as AwaitedRun) : null;
  const event = awaited ? null : delivered;
  const children: readonly ChildOutcome[] | null = run.children.outcomes();
  const { step, attempt } = claim.payload;
  const policy = stepPolicy(definition, step);
  const fail = (reason: string, errorRetryable: boolean, thrown?: { error: unknown; retryAfterMS?: number }) =>
    stepFailureEvents(claim, {
      rollsBack: run.rollbacks.next !== null,
      step,
      attempt,
      reason,
      errorRetryable,
      maxAttempts: policy.maxAttempts,
      at: now(),
      ...(thrown === undefined ? {} : { error: thrown.error }),
      ...(thrown?.retryAfterMS === undefined ? {} : { retryAfterMS: thrown.retryAfterMS }),
    });

  const fn = definition.steps[step];
  if (!fn) {
    // The log names a step the code no longer has: no retry can fix that.
    return fail(
      `Workflow "${definition.name}" has no step "${step}" (was it renamed or removed? workflow("${definition.name}", steps, { renamed: { ${JSON.stringify(step)}: "<its new name>" } }) keeps the old name working)`,
      false,
    );
  }
  const callbackLinks = options.callbackLinks ?? installedCallbackLinkIssuer();
  const attemptState = createStepAttempt({
    scratchpad: pad,
    step,
    attempt,
    runId: claim.runId,
    workflowId: claim.workflowId,
    event,
    children,
    awaited,
    ...(options.stream ? { publish: publisherOf(options.stream, run, claim, now) } : {}),
    ...(callbackLinks
      ? {
          callbackURL: (name: string, ttlMS: number) =>
            callbackLinks({ runId: claim.runId, event: name, expiresAt: now() + ttlMS }),
        }
      : {}),
  });
  const outcome = await runWithTimeout(() => fn(attemptState.ctx), policy.stepTimeoutMS, beforeWaiting);
  attemptState.seal();

  switch (outcome.kind) {
    case "timed_out":
      return fail(TIMEOUT_REASON, true);
    case "threw":
      return fail(
        reasonOf(outcome.error),
        !(
          isNonRetryableError(outcome.error) ||
          isNamedNonRetryable(definition, outcome.error) ||
          attemptState.isWriteError(outcome.error)
        ),
        { error: outcome.error, retryAfterMS: retryAfterMSOf(outcome.error) },
      );
    case "returned": {
      let started: ChildRef[] | undefined;
      try {
        const where = `Step "${step}" of workflow "${definition.name}"`;
        const value = outcome.value as Record<string, unknown> | null;
        const requests =
          typeof value === "object" && value !== null && typeof value.step === "string"
            ? childRequestsOf(value, claim.runId, run.children.completedSteps, where)
            : null;
        if (requests) {
          checkNextStep(definition, step, value?.step as string);
          if (!options.children)
            throw new PlatformError("invalid_input", `${where} returned children, which this host cannot start`);
          // Started before the completion is written, so it records their run ids; a retry finds the same runs.
          beforeWaiting();
          try {
            started = await options.children.start(claim.runId, requests);
          } catch (error) {
            return fail(reasonOf(error), !isFinalStartError(error), { error });
          }
        }
        let ended: AwaitedRun | null = null;
        if (typeof value === "object" && value !== null && typeof value.step === "string" && "waitForRun" in value) {
          const awaitedRunId = checkAwaitedRunId(value.waitForRun, `${where} waitForRun`);
          checkNextStep(definition, step, value.step);
          if (!options.awaitRun)
            throw new PlatformError("invalid_input", `${where} returned waitForRun, which this host cannot wait for`);
          if (awaitedRunId === claim.runId)
            throw new PlatformError(
              "invalid_input",
              `${where} returned waitForRun with its own run id; a run cannot wait for itself`,
            );
          // Watched before the completion is written, so the end is told even if it comes before that write.
          beforeWaiting();
          try {
            ended = await options.awaitRun.watch(claim.runId, awaitedRunId);
          } catch (error) {
            return fail(reasonOf(error), !isFinalWatchError(error), { error });
          }
        }
        return completionEvents(definition, claim, outcome.value, attemptState, now(), started, ended);
      } catch (error) {
        // An unstorable result or an unknown next step is a bug in the step; retrying would repeat it.
        return fail(reasonOf(error), false, { error });
      }
    }
  }
}

/**
 * `ctx.publish` of one attempt: the events the execution holds in memory are
 * written first, so the stream's lifecycle messages (step started) come
 * before the step's own.
 */
function publisherOf(
  stream: StreamPublishPort,
  run: RunCursor,
  claim: StoredEventOf<"step_started">,
  now: Clock,
): (topic: string, json: string) => void {
  const { step, attempt } = claim.payload;
  return (topic, json) => {
    run.flush();
    stream.publish(claim.runId, { topic, json, at: now(), step, attempt });
  };
}

/** step_completed (with next_step), or step_completed + workflow_completed in one batch. */
function completionEvents(
  definition: WorkflowDefinition,
  claim: StoredEventOf<"step_started">,
  value: unknown,
  attemptState: StepAttempt,
  at: number,
  started?: readonly ChildRef[],
  /** A `waitForRun` whose run has ended already: told at once, after the completion. */
  ended?: AwaitedRun | null,
): StoredEvent[] {
  const step = claim.payload.step;
  const writes = attemptState.writes();
  if (typeof value !== "object" || value === null) throw badReturn(definition, step, value);
  const result = value as { step?: unknown; done?: unknown; result?: unknown } & Record<string, unknown>;
  if (result.done === true) {
    refuseUnknownKeys(
      result,
      DONE_RETURN_KEYS,
      `Step "${step}" of workflow "${definition.name}": a return { done: true }`,
    );
    const completed = nextEvent(claim, { type: "step_completed", payload: { step, writes }, at });
    const payload = {
      result: toJsonValue(
        result.result === undefined ? null : result.result,
        `result of workflow "${definition.name}"`,
      ),
    };
    encodePayload(completed.payload, `The writes of step "${step}"`);
    encodePayload(payload, `The result of workflow "${definition.name}"`);
    return [completed, nextEvent(completed, { type: "workflow_completed", payload, at })];
  }
  if (typeof result.step === "string") {
    refuseUnknownKeys(result, STEP_RETURN_KEYS, `Step "${step}" of workflow "${definition.name}": a return { step }`);
    checkNextStep(definition, step, result.step);
    const next = continuationOfReturn(
      result as { step: string } & Record<string, unknown>,
      at,
      `Step "${step}" of workflow "${definition.name}"`,
      started,
    );
    const completed = nextEvent(claim, {
      type: "step_completed",
      payload: { step, writes, ...encodeContinuation(next) },
      at,
    });
    encodePayload(completed.payload, `The writes of step "${step}"`);
    return ended
      ? [completed, nextEvent(completed, { type: "event_received", payload: runEndedPayload(ended), at })]
      : [completed];
  }
  throw badReturn(definition, step, value);
}

/** What a step may return: `{ done: true, result }`, or a next step and how to reach it (continuation.ts). */
const DONE_RETURN_KEYS = ["done", "result"];
const STEP_RETURN_KEYS = ["step", "sleepMS", "until", "waitFor", "waitForRun", "timeoutMS", "children", "done"];

/** A watch that no retry can make succeed: the run does not exist here, or the id is not one. */
function isFinalWatchError(error: unknown): boolean {
  return isPlatformError(error) && (error.code === "not_found" || error.code === "invalid_input");
}

/** Refuses a continuation to a step the workflow does not define (a bug in the step: a retry would repeat it). */
function checkNextStep(definition: WorkflowDefinition, step: string, next: string): void {
  if (!Object.hasOwn(definition.steps, next))
    throw new PlatformError(
      "invalid_input",
      `Step "${step}" continues with step "${next}", which workflow "${definition.name}" does not define`,
    );
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
    `Step "${step}" of workflow "${definition.name}" returned ${shown}; return { step: "<next step>" } (optionally with sleepMS, until, waitFor or children) or { done: true, result }`,
  );
}

/**
 * Races an attempt (a step's or a rollback handler's) against its timeout. It is not killed (JS cannot); its
 * late outcome is ignored. An attempt that returns (or throws) without a promise
 * has nothing to race: no timer is set for it.
 */
async function runWithTimeout(
  attempt: () => unknown,
  timeoutMS: number,
  beforeWaiting: (() => void) | undefined,
): Promise<AttemptOutcome> {
  let returned: unknown;
  try {
    returned = attempt();
  } catch (error) {
    return { kind: "threw", error };
  }
  if (!isThenable(returned)) return { kind: "returned", value: returned };
  beforeWaiting?.();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<AttemptOutcome>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "timed_out" }), timeoutMS);
  });
  const ran = Promise.resolve(returned).then(
    (value): AttemptOutcome => ({ kind: "returned", value }),
    (error: unknown): AttemptOutcome => ({ kind: "threw", error }),
  );
  try {
    return await Promise.race([ran, timedOut]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
