import { PlatformError } from "../../core/errors.ts";
import type { ChildEntry, WorkflowEventPayloads } from "./events.ts";
import type { JsonValue } from "../api/json.ts";

/**
 * What a step_completed says comes next, decoded from its payload: the
 * wire contract's `next_step` and the fields this platform adds (`wake_at`, `waiting_for`,
 * `timeout_at`). This module is the one place that reads or writes those
 * fields; everything else (the resolver, the step loop, recovery, the run
 * view, the console and the CLI) works with this union.
 *
 * For a reader that does not know a kind: every kind but `done` names the
 * next `step`; every kind but `done` and `next_step` is a pause before that
 * step, which ends on its own at `until` when it has one.
 */
export type Continuation =
  /** No next_step: the step finished the workflow (workflow_completed follows in the same batch). */
  | { kind: "done" }
  /** The next step is claimed at once. */
  | { kind: "next_step"; step: string }
  /** Stored as `wake_at`: the next step is claimed at `until` (epoch ms), not before. */
  | { kind: "sleep"; step: string; until: number }
  /**
   * Stored as `waiting_for` and `timeout_at`: the next step is claimed
   * with the first event named `event` that arrives by `until`, or at `until`
   * without one (epoch ms; no `until`: it waits for the event without end).
   * With `run` (stored as `waiting_for_run` instead of `waiting_for`), it waits for that run to end:
   * the run's end arrives as the event named {@link awaitedEventName}(run), which no one else may send.
   */
  | { kind: "wait_for_event"; step: string; event: string; until?: number; run?: string }
  /**
   * `children`: the step started these child runs; the
   * next step is claimed once every one of them has ended (child_finished),
   * with their outcomes as `ctx.children`, in this order. No `until`.
   */
  | { kind: "children"; step: string; children: readonly ChildRef[] };

/** One child of a `children` continuation (see children.ts); `refused`: it never started, and why. */
export interface ChildRef {
  runId: string;
  workflow: string;
  refused?: string;
}

/** How a finished child ended, as `ctx.children` and the parent's run view show it. */
export type ChildStatus = WorkflowEventPayloads["child_finished"]["status"];

/**
 * One entry of `ctx.children`: a child run and how it ended: `result` when completed (or, for a result too
 * large to pass on, `error` saying where to read it), `error` otherwise.
 * @example
 * collect: async (ctx) => {
 *   const outcomes: readonly ChildOutcome[] = ctx.children ?? [];
 *   return { done: true, result: outcomes.filter((child) => child.status === "completed").length };
 * },
 */
export interface ChildOutcome {
  runId: string;
  workflow: string;
  status: ChildStatus;
  result?: JsonValue;
  error?: string;
}

/**
 * How another run ended, as `ctx.awaited` and `workflow.result(runId)` answer it: its result, or its error or cancel reason.
 * @example
 * after: async (ctx) => {
 *   const awaited: AwaitedRun | null = ctx.awaited;
 *   return { done: true, result: awaited?.status === "completed" ? awaited.result : null };
 * },
 */
export interface AwaitedRun {
  runId: string;
  status: "completed" | "failed" | "cancelled";
  result?: JsonValue;
  error?: string;
}

export type ContinuationKind = Continuation["kind"];

/**
 * What a step that names the next one may add to `{ step }` to delay it:
 * `sleepMS` (a delay) or `until` (epoch ms), at most a
 * year away; or `waitFor` (an event name sent with `workflow.send`) with an
 * optional `timeoutMS` (at most a year); or `children` (1 to 1,000 child
 * runs to start and wait for, see children.ts). Read by {@link continuationOfReturn}.
 */
export interface ContinuationRequest {
  sleepMS?: number;
  until?: number;
  waitFor?: string;
  /** Another run of the project (its run id): the next step runs once it has ended, with `ctx.awaited`. */
  waitForRun?: string;
  timeoutMS?: number;
  children?: readonly ChildRequest[];
}

/**
 * One child run a step asks for: the workflow to start, its start data, and optionally its workflow id.
 * @example
 * const children: ChildRequest[] = orders.map((order) => ({ workflow: "ship", data: order, id: `ship-${order.id}` }));
 * return { step: "collect", children };
 */
export interface ChildRequest {
  workflow: string | { readonly name: string };
  data?: unknown;
  id?: string;
}

type StepCompleted = WorkflowEventPayloads["step_completed"];

/** The step_completed fields a continuation is written as (the rest of the payload is `step` and `writes`). */
export type ContinuationFields = Pick<
  StepCompleted,
  "next_step" | "wake_at" | "waiting_for" | "waiting_for_run" | "timeout_at" | "children"
>;

/** Decodes a step_completed payload's continuation. */
export function decodeContinuation(payload: StepCompleted): Continuation {
  const { next_step: step, wake_at: wakeAt, waiting_for: event, timeout_at: timeoutAt, children } = payload;
  if (step === undefined) return { kind: "done" };
  if (wakeAt !== undefined) return { kind: "sleep", step, until: wakeAt };
  if (children !== undefined) return { kind: "children", step, children: children.map(childRefOf) };
  const run = payload.waiting_for_run;
  if (run !== undefined) {
    const waitsForRun = { kind: "wait_for_event" as const, step, event: awaitedEventName(run), run };
    return timeoutAt === undefined ? waitsForRun : { ...waitsForRun, until: timeoutAt };
  }
  if (event !== undefined)
    return timeoutAt === undefined
      ? { kind: "wait_for_event", step, event }
      : { kind: "wait_for_event", step, event, until: timeoutAt };
  return { kind: "next_step", step };
}

/** The step_completed fields that record `continuation` (none for `done`). */
export function encodeContinuation(continuation: Continuation): ContinuationFields {
  switch (continuation.kind) {
    case "done":
      return {};
    case "next_step":
      return { next_step: continuation.step };
    case "sleep":
      return { next_step: continuation.step, wake_at: continuation.until };
    case "wait_for_event": {
      const waiting =
        continuation.run === undefined ? { waiting_for: continuation.event } : { waiting_for_run: continuation.run };
      return continuation.until === undefined
        ? { next_step: continuation.step, ...waiting }
        : { next_step: continuation.step, ...waiting, timeout_at: continuation.until };
    }
    case "children":
      return { next_step: continuation.step, children: continuation.children.map(childEntryOf) };
  }
}

function childRefOf(entry: ChildEntry): ChildRef {
  return entry.refused === undefined
    ? { runId: entry.run_id, workflow: entry.workflow }
    : { runId: entry.run_id, workflow: entry.workflow, refused: entry.refused };
}

function childEntryOf(child: ChildRef): ChildEntry {
  return child.refused === undefined
    ? { run_id: child.runId, workflow: child.workflow }
    : { run_id: child.runId, workflow: child.workflow, refused: child.refused };
}

/** Whether the next step may be claimed in the same append as the completion (the step loop's chained claim). */
export function startsAtOnce(continuation: Continuation): continuation is { kind: "next_step"; step: string } {
  return continuation.kind === "next_step";
}

/**
 * Whether what comes next depends on events others append to the run (sent
 * events, finished children), so a reader must fold them from the log.
 */
export function readsInbox(continuation: Continuation): boolean {
  return continuation.kind === "wait_for_event" || continuation.kind === "children";
}

/**
 * How a step that names the next one may delay it. The
 * longest sleep, and the longest wait for an event, is a year (as in
 * Cloudflare Workflows and Inngest).
 */
export const MAX_WAIT_MS = 365 * 86_400_000;

const MAX_EVENT_NAME_LENGTH = 256;

/** Checks an event name (`waitFor`, `workflow.send`): 1-256 characters, no control characters, not reserved. */
export function checkEventName(name: unknown, what: string): string {
  if (
    typeof name !== "string" ||
    name.length === 0 ||
    name.length > MAX_EVENT_NAME_LENGTH ||
    /[\u0000-\u001f\u007f]/.test(name)
  ) {
    throw new PlatformError(
      "invalid_input",
      `${what} must be an event name of 1-${MAX_EVENT_NAME_LENGTH} characters without control characters, got ${JSON.stringify(name) ?? String(name)}`,
    );
  }
  // Only a run's end may deliver it: a send with it would forge another run's outcome.
  if (name.startsWith(AWAITED_EVENT_PREFIX))
    throw new PlatformError(
      "invalid_input",
      `${what} ${JSON.stringify(name)} starts with "${AWAITED_EVENT_PREFIX}", which is reserved for the end of a run waited for with waitForRun`,
    );
  return name;
}

const AWAITED_EVENT_PREFIX = "__run_ended/";

/** The name of the event that tells a run waiting with `waitForRun` that `runId` has ended. */
export function awaitedEventName(runId: string): string {
  return AWAITED_EVENT_PREFIX + runId;
}

/** Whether an event_received is a run's end told to a run that waits for it (not a sent event). */
export function isAwaitedEvent(name: string): boolean {
  return name.startsWith(AWAITED_EVENT_PREFIX);
}

/**
 * The continuation a step's `{ step, sleepMS | until | waitFor, timeoutMS? }`
 * asks for, given the completion time `at` (the caller has checked that
 * `step` names a step). Throws `invalid_input` naming the bad field (the step
 * then fails without retry: the same code would return the same). A return
 * with `children` needs them started first (see children.ts): `started` are
 * the children as they were started, in the order asked for.
 */
export function continuationOfReturn(
  returned: { step: string } & Record<string, unknown>,
  at: number,
  where: string,
  started?: readonly ChildRef[],
): Continuation {
  const { step, sleepMS, until, waitFor, waitForRun, timeoutMS, children } = returned;
  const given = [sleepMS, until, waitFor, waitForRun, children].filter((value) => value !== undefined).length;
  if (given > 1)
    throw invalid(`${where} returned more than one of sleepMS, until, waitFor, waitForRun and children; pick one`);
  if (timeoutMS !== undefined && waitFor === undefined && waitForRun === undefined)
    throw invalid(`${where} returned timeoutMS without waitFor or waitForRun; timeoutMS bounds a wait`);
  if (waitForRun !== undefined) {
    const run = checkAwaitedRunId(waitForRun, `${where} waitForRun`);
    const event = awaitedEventName(run);
    return timeoutMS === undefined
      ? { kind: "wait_for_event", step, event, run }
      : { kind: "wait_for_event", step, event, run, until: at + duration(timeoutMS, `${where} timeoutMS`) };
  }
  if (children !== undefined) {
    if (!started) throw new PlatformError("internal", `${where} returned children that were not started first`);
    return { kind: "children", step, children: started };
  }
  if (sleepMS !== undefined) return { kind: "sleep", step, until: at + duration(sleepMS, `${where} sleepMS`) };
  if (until !== undefined) {
    if (typeof until !== "number" || !Number.isFinite(until))
      throw invalid(`${where} until must be a time in epoch milliseconds, got ${JSON.stringify(until)}`);
    if (until - at > MAX_WAIT_MS)
      throw invalid(
        `${where} until is more than a year away (${new Date(until).toISOString()}); sleeps last at most a year`,
      );
    return { kind: "sleep", step, until: Math.round(until) };
  }
  if (waitFor !== undefined) {
    const event = checkEventName(waitFor, `${where} waitFor`);
    return timeoutMS === undefined
      ? { kind: "wait_for_event", step, event }
      : { kind: "wait_for_event", step, event, until: at + duration(timeoutMS, `${where} timeoutMS`) };
  }
  return { kind: "next_step", step };
}

/** A run id a step may wait for: 1-256 characters without control characters (which run it is, its host checks). */
export function checkAwaitedRunId(value: unknown, what: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 256 || /[\u0000-\u001f\u007f]/.test(value))
    throw invalid(`${what} must be the id of a run of this project, got ${JSON.stringify(value) ?? String(value)}`);
  return value;
}

function duration(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0)
    throw invalid(`${what} must be a number of milliseconds >= 0, got ${JSON.stringify(value)}`);
  if (value > MAX_WAIT_MS) throw invalid(`${what} must be at most ${MAX_WAIT_MS} (a year), got ${value}`);
  return Math.round(value);
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}
