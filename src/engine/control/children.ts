import { isPlatformError, PlatformError } from "../../core/errors.ts";
import type { ChildOutcome, ChildRef, ChildRequest } from "../execution/continuation.ts";
import { decodeContinuation } from "../execution/continuation.ts";
import { checkId, createdEvent } from "../execution/createRun.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import {
  isControlEvent,
  isTerminalEvent,
  nextEvent,
  type StoredEvent,
  type StoredEventOf,
  type TerminalEventType,
  type WorkflowEventPayloads,
} from "../execution/events.ts";
import { freezeJson, MAX_EVENT_PAYLOAD_BYTES, toJsonValue, type JsonValue, utf8ByteLength } from "../api/json.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/**
 * Child runs. A step returns `{ step, children: [{ workflow,
 * data, id? }, …] }`; each child is a run of its own (its own actor when
 * deployed), started exactly once; the parent's step_completed records the
 * children's run ids (a `children` continuation); each child, when it ends,
 * appends child_finished to its parent's log; once every child has ended the
 * parent claims its next step with their outcomes as `ctx.children`, in the
 * order asked for.
 *
 * Exactly once: a child's run id is derived from the parent's run id, the
 * parent's place in its run (how many steps it had completed) and the child's
 * index, so a retried step, or a crash between starting and committing,
 * finds the same runs again instead of starting new ones. Its workflow id is
 * the `id` asked for, or that same derived key.
 */

/** The most children one step may start. */
export const MAX_CHILDREN = 1000;

/** How deep child runs may nest: a run no step started is at depth 0, its children at 1. */
export const MAX_CHILD_DEPTH = 32;

/**
 * The depth of the children `parentRunId` (a run of `store`) would start:
 * its own + 1, read from its workflow_created, where the host that started it
 * wrote it. Past {@link MAX_CHILD_DEPTH} throws `invalid_input`, so the step
 * fails without retry (a recursion would only ask again) and nothing starts.
 */
export function childDepthOf(store: WorkflowEventStore, parentRunId: string): number {
  const created = store.events(parentRunId)[0];
  const depth = (created?.type === "workflow_created" ? (created.payload.child_depth ?? 0) : 0) + 1;
  if (depth > MAX_CHILD_DEPTH)
    throw invalid(
      `Workflow run "${parentRunId}" is a child at depth ${depth - 1}; its children would be at depth ${depth}, past the platform's limit of ${MAX_CHILD_DEPTH} nested child runs`,
    );
  return depth;
}

/** One child to start, as the engine hands it to the host's {@link ChildRunPort}. */
export interface ChildStart {
  workflow: string;
  data: JsonValue;
  /** The `id` asked for, or `key`. */
  workflowId: string;
  /** `<parent run id>.<steps the parent had completed>.<index>` (URL-safe: it is a run id under the local backend): the child's identity; its run id derives from it. */
  key: string;
}

/** What a host (the run actor, the local backend) provides for a step to start children. */
export interface ChildRunPort {
  /**
   * Starts the children exactly once each (a child whose run id exists is
   * answered, not started again), in order; `parentRunId` is written into
   * each child's workflow_created. Throws `unknown_workflow` (checked before
   * anything starts) or an error of the start itself.
   */
  start(parentRunId: string, children: readonly ChildStart[]): Promise<ChildRef[]>;
  /** Cancels those of the runs that are still active (the parent was cancelled while starting them). */
  cancel(runIds: readonly string[], reason: string): Promise<void>;
}

/**
 * The children a step's return asks for, checked; null when it asks for
 * none. Throws `invalid_input` naming the bad entry (the step then fails
 * without retry: the same code would return the same).
 */
export function childRequestsOf(
  returned: Record<string, unknown>,
  parentRunId: string,
  completedSteps: number,
  where: string,
): ChildStart[] | null {
  const requests = returned.children;
  if (requests === undefined) return null;
  if (!Array.isArray(requests) || requests.length === 0 || requests.length > MAX_CHILDREN)
    throw invalid(
      `${where} returned children that is not a list of 1 to ${MAX_CHILDREN} children like [{ workflow: "resize", data }]`,
    );
  const ids = new Set<string>();
  return requests.map((request: unknown, index) => {
    const at = `${where} children[${index}]`;
    if (typeof request !== "object" || request === null || Array.isArray(request))
      throw invalid(`${at} must be an object like { workflow: "resize", data }`);
    const { workflow, data, id } = request as ChildRequest;
    const name = typeof workflow === "object" && workflow !== null ? workflow.name : workflow;
    if (typeof name !== "string" || name === "")
      throw invalid(`${at}.workflow must name a registered workflow (or be the definition workflow() returned)`);
    const key = `${parentRunId}.${completedSteps}.${index}`;
    const workflowId = id === undefined ? key : checkId(id, `workflow id of ${at}`);
    if (ids.has(workflowId)) throw invalid(`${at}.id ${JSON.stringify(workflowId)} is given to another child too`);
    ids.add(workflowId);
    return {
      workflow: name,
      data: toJsonValue(data === undefined ? null : data, `data of ${at}`),
      workflowId,
      key,
    };
  });
}

/** Whether a start error is the step's own mistake (retrying would fail the same way). */
export function isFinalStartError(error: unknown): boolean {
  return (
    isPlatformError(error) &&
    (error.code === "unknown_workflow" || error.code === "invalid_input" || error.code === "payload_too_large")
  );
}

/**
 * Creates a child run in `store` (the child's own), exactly once: a run id
 * that exists already is this parent's child started before (by an earlier
 * attempt, or before a crash) and is answered as it is. A workflow id held by
 * an active run that is not this child is answered `refused` with that run's
 * id: the child does not start (as Temporal's "already started").
 */
export function createChildRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  child: { runId: string; workflowId: string; data: JsonValue; parentRunId: string; childDepth?: number },
  now: number,
): { ref: ChildRef; created: boolean } {
  const event = createdEvent(definition, child.data, { ...child, now });
  const outcome = store.createRunIfNoActive(event);
  const ref = { runId: child.runId, workflow: definition.name };
  if (outcome.created || "seqTaken" in outcome || outcome.activeRunId === child.runId)
    return { ref, created: outcome.created };
  return {
    ref: {
      runId: outcome.activeRunId,
      workflow: definition.name,
      refused: `Workflow id "${child.workflowId}" is held by active run "${outcome.activeRunId}", which is not this run's child; the child was not started`,
    },
    created: false,
  };
}

/** The child_finished payload for a child run whose terminal event is `end`. */
export function childFinishedOf(
  runId: string,
  workflow: string,
  end: StoredEventOf<TerminalEventType>,
): WorkflowEventPayloads["child_finished"] {
  const base = { run_id: runId, workflow };
  if (end.type === "workflow_completed") return completedChild(base, end.payload.result);
  if (end.type === "workflow_failed") return { ...base, status: "failed", error: end.payload.reason };
  return { ...base, status: "cancelled", error: end.payload.reason };
}

/**
 * A completed child's payload. A result that would not fit in the parent's
 * event beside the rest (a child's own result may take all of its 1 MiB) is
 * left out, and `error` says where to read it: the parent still hears of it.
 */
function completedChild(
  base: { run_id: string; workflow: string },
  result: JsonValue,
): WorkflowEventPayloads["child_finished"] {
  const bytes = utf8ByteLength(JSON.stringify(result));
  if (bytes <= MAX_EVENT_PAYLOAD_BYTES - CHILD_FINISHED_ROOM) return { ...base, status: "completed", result };
  return {
    ...base,
    status: "completed",
    error: `The child's result (${bytes} bytes) is too large to pass to its parent; read it with workflow.get("${base.run_id}")`,
  };
}

/** Bytes of a child_finished kept for its other fields (run id, workflow name, status). */
const CHILD_FINISHED_ROOM = 2048;

/**
 * What a finished child tells its parent, read from the child's log: null
 * when the run has no parent or has not ended.
 */
export function childReportOf(
  events: readonly StoredEvent[],
): { parentRunId: string; finished: WorkflowEventPayloads["child_finished"] } | null {
  const first = events[0];
  const last = events[events.length - 1];
  if (first?.type !== "workflow_created" || first.payload.parent_run_id === undefined) return null;
  if (!last || !isTerminalEvent(last)) return null;
  return {
    parentRunId: first.payload.parent_run_id,
    finished: childFinishedOf(first.runId, first.payload.workflowName, last),
  };
}

/**
 * Records in the parent's log that a child ended (once: a second report of
 * the same child is dropped, as is one for a parent that has ended). Answers
 * whether it appended, and whether every child the parent waits for has now
 * ended: then the host drives the parent.
 */
export function recordChildFinished(
  store: WorkflowEventStore,
  { finished, ...report }: ChildEndReport<WorkflowEventPayloads["child_finished"]>,
): { appended: boolean; allFinished: boolean } {
  return recordChildrenFinished(store, { ...report, finished: [finished] });
}

/** The end of a child (or, for {@link recordChildrenFinished}, of several) as told to its parent's log. */
export interface ChildEndReport<Finished> {
  parentRunId: string;
  finished: Finished;
  now: number;
  /** What the host kept of the parent's log from earlier calls; a fresh one reads the log from its start. */
  log?: ParentLog;
}

/** How often recording children's ends re-reads the parent's log after losing its seq before giving up. */
const MAX_RECORD_TRIES = 20;

/**
 * What recording children's ends knows of a parent's log: folded up to
 * `last`, and read on from there (the log only grows), so a host that keeps
 * one per parent reads each event once however many children tell it.
 */
export interface ParentLog {
  readonly fold: ChildrenFold;
  last: StoredEvent | null;
  state: StoredEvent | null;
}

export function createParentLog(): ParentLog {
  return { fold: createChildrenFold(), last: null, state: null };
}

function readOn(
  store: WorkflowEventStore,
  runId: string,
  log: ParentLog,
  events = store.events(runId, log.last?.seq ?? 0),
) {
  for (const event of events) {
    log.fold.apply(event);
    log.last = event;
    if (!isControlEvent(event)) log.state = event;
  }
}

/**
 * {@link recordChildFinished} for several children at once, in one append
 * (a fan-out whose children ended within their start records them all
 * together). `log`: what the host kept of the parent's log from earlier calls.
 */
export function recordChildrenFinished(
  store: WorkflowEventStore,
  {
    parentRunId,
    finished: list,
    now,
    log = createParentLog(),
  }: ChildEndReport<readonly WorkflowEventPayloads["child_finished"][]>,
): { appended: boolean; allFinished: boolean } {
  for (let tries = 1; ; tries++) {
    readOn(store, parentRunId, log);
    const { fold, last, state } = log;
    if (!last || isTerminalEvent(last)) return { appended: false, allFinished: false };
    const fresh = new Map<string, WorkflowEventPayloads["child_finished"]>();
    for (const finished of list) if (!fold.finished.has(finished.run_id)) fresh.set(finished.run_id, finished);
    const waits = state?.type === "step_completed" && decodeContinuation(state.payload).kind === "children";
    if (fresh.size === 0) return { appended: false, allFinished: waits && fold.pending().length === 0 };
    const batch = [...fresh.values()].map((payload, index) =>
      nextEvent(last, { type: "child_finished", payload, at: now, offset: index + 1 }),
    );
    // Another writer (the parent's step loop, a cancel, another child) took the seq: read on and try again.
    if (store.append(batch).appended) {
      readOn(store, parentRunId, log, batch);
      return { appended: true, allFinished: waits && fold.pending().length === 0 };
    }
    if (tries >= MAX_RECORD_TRIES)
      throw new PlatformError(
        "conflict",
        `Could not record the end of a child of workflow run "${parentRunId}": its log kept moving for ${MAX_RECORD_TRIES} tries; try again`,
        { runId: parentRunId },
      );
  }
}

/**
 * The children of a run, folded from its log like the scratchpad: which
 * children have ended (from any point of the log: a child may end before its
 * parent's step has committed), how many steps have completed (the place of
 * the next completion, in child keys), and the children of the last
 * step_completed (those the run waits for, or the step after it reads).
 */
export interface ChildrenFold {
  readonly finished: Map<string, WorkflowEventPayloads["child_finished"]>;
  readonly completedSteps: number;
  /** The children of the last step_completed; null when it started none. */
  readonly current: readonly ChildRef[] | null;
  apply(event: StoredEvent): void;
  /** The current children that started and have not ended. */
  pending(): ChildRef[];
  /** `ctx.children` for the step after the current children: each one's outcome, in order; null without children. */
  outcomes(): readonly ChildOutcome[] | null;
}

export function createChildrenFold(events: Iterable<StoredEvent> = []): ChildrenFold {
  const finished = new Map<string, WorkflowEventPayloads["child_finished"]>();
  let completedSteps = 0;
  let current: readonly ChildRef[] | null = null;
  let outcomes: readonly ChildOutcome[] | null = null;
  const fold: ChildrenFold = {
    finished,
    get completedSteps() {
      return completedSteps;
    },
    get current() {
      return current;
    },
    apply(event) {
      if (event.type === "child_finished") {
        finished.set(event.payload.run_id, event.payload);
        outcomes = null;
      } else if (event.type === "step_completed") {
        completedSteps++;
        const next = decodeContinuation(event.payload);
        current = next.kind === "children" ? next.children : null;
        outcomes = null;
      }
    },
    pending: () => (current ?? []).filter((child) => child.refused === undefined && !finished.has(child.runId)),
    outcomes() {
      if (current === null || fold.pending().length > 0) return null;
      outcomes ??= freezeJson(
        current.map((child) => childOutcome(child, finished.get(child.runId))) as unknown as JsonValue,
      ) as unknown as readonly ChildOutcome[];
      return outcomes;
    },
  };
  for (const event of events) fold.apply(event);
  return fold;
}

/** A child as the parent's view lists it: its outcome, or `running` while it has not ended. */
export function childOutcome(
  child: ChildRef,
  finished: WorkflowEventPayloads["child_finished"] | undefined,
): ChildOutcome | (Omit<ChildOutcome, "status"> & { status: "running" }) {
  const { runId, workflow } = child;
  if (child.refused !== undefined) return { runId, workflow, status: "failed", error: child.refused };
  if (!finished) return { runId, workflow, status: "running" };
  const outcome: ChildOutcome = { runId, workflow, status: finished.status };
  if (finished.result !== undefined) outcome.result = finished.result;
  if (finished.error !== undefined) outcome.error = finished.error;
  return outcome;
}

/** The run ids of the children a run waits for that have not ended: what cancelling the run cancels. */
export function activeChildrenOf(events: readonly StoredEvent[]): string[] {
  return createChildrenFold(events)
    .pending()
    .map((child) => child.runId);
}

/** Whether cancelling a child failed only because it had ended meanwhile (or never was): nothing to cancel. */
export function isAlreadyEnded(error: unknown): boolean {
  return error instanceof PlatformError && (error.code === "conflict" || error.code === "not_found");
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}

/**
 * For a host whose children live in the same store as their parent (the
 * local backend): records the ends of the parent's pending children that
 * ended without telling it (the process died in between). Answers whether
 * every child it waits for has now ended.
 */
export function reconcileChildren(store: WorkflowEventStore, parentRunId: string, now: number): boolean {
  let allFinished = false;
  for (const child of createChildrenFold(store.events(parentRunId)).pending()) {
    const report = childReportOf(store.events(child.runId));
    if (report?.parentRunId === parentRunId)
      allFinished = recordChildFinished(store, { ...report, now }).allFinished || allFinished;
  }
  return allFinished;
}

/** The child_finished payload for a child whose start answered how it had already ended (its `outcome`). */
export function childFinishedOfOutcome(
  runId: string,
  workflow: string,
  outcome:
    | { status: "completed"; result: JsonValue }
    | { status: "failed"; error: string }
    | { status: "cancelled"; reason: string },
): WorkflowEventPayloads["child_finished"] {
  const base = { run_id: runId, workflow };
  if (outcome.status === "completed") return completedChild(base, outcome.result);
  if (outcome.status === "failed") return { ...base, status: "failed", error: outcome.error };
  return { ...base, status: "cancelled", error: outcome.reason };
}
