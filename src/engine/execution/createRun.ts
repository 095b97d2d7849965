import { PlatformError } from "../../core/errors.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import { DEFAULT_RANK, type QueueRank } from "../flow/flowControl.ts";
import { nextEvent, START_DATA_KEY, type StoredEvent, type StoredEventOf } from "./events.ts";
import { encodePayload, toJsonValue } from "../api/json.ts";
import type { RerunPlan } from "../control/rerun.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

export interface CreateRunOptions {
  /** Chosen by the adapter (e.g. crypto.randomUUID()). */
  runId: string;
  /** At most one active run per workflow id; defaults to the run id. */
  workflowId?: string;
  /** Epoch ms for the workflow_created event. */
  now: number;
  /** The project version running this code (`v3`), recorded in workflow_created. */
  version?: string;
  /** The run is a rerun (see planRerun); its copied steps follow workflow_created. */
  rerun?: RerunPlan;
  /**
   * The workflow id names at most one run ever (scheduled starts): the adapter
   * derives the run id from the workflow id ({@link onceRunKey}), so the store's unique run id
   * refuses a second run atomically, and starting again answers the first run, ended or not.
   */
  once?: boolean;
  /** The flow control key the run is counted under (flowControl.ts). */
  flowKey?: string;
  /** Created queued; its queue starts it later (workflow_dequeued). */
  queued?: boolean;
  /** Its rank among its flow key's queued runs (flowControl.ts); recorded when not the default. */
  rank?: QueueRank;
  /**
   * An idempotency key. If the newest run of the workflow id was started with the
   * same key less than its window ago, that run is the answer (ended or not) and nothing is written;
   * otherwise the run keeps the key for `ttlMS` from now.
   */
  idempotency?: { key: string; ttlMS: number };
  /** The run whose step starts this one as a child (see children.ts). */
  parentRunId?: string;
  /** A child's nesting depth (see children.ts). */
  childDepth?: number;
}

export interface CreatedRun {
  runId: string;
  workflowId: string;
  /** False when an active run with this workflow id already existed; `runId` is then that run's id. */
  created: boolean;
}

export const MAX_ID_LENGTH = 256;

/**
 * Writes a run's workflow_created event unless its workflow id already has an
 * active run. Validates everything first, so invalid input appends nothing.
 * The caller enqueues execution when `created` is true.
 *
 * Throws `invalid_input` (bad id or data that is not JSON), `payload_too_large`
 * (data over 1 MiB), `already_active` when the workflow id is active as a
 * run of a *different* workflow (returning that run as "the existing handle"
 * would hand back another workflow's result), or `conflict` when the run id
 * is taken (run ids are the adapter's to choose unique) by anything but the
 * same `once` start.
 */
export function createRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  data: unknown,
  options: CreateRunOptions,
): CreatedRun {
  const event = createdEvent(definition, data, options);
  const { runId, workflowId } = event;
  if (options.idempotency) {
    const earlier = idempotentRun(store, workflowId, definition.name, options.idempotency.key, options.now);
    if (earlier) return { runId: earlier, workflowId, created: false };
  }
  const outcome = store.createRunIfNoActive(event, {
    retentionMS: definition.retentionMS,
    following: options.rerun ? rerunEvents(event, options.rerun) : [],
  });
  if (outcome.created) return { runId, workflowId, created: true };
  if ("seqTaken" in outcome) {
    const existing = options.once ? store.createdEvent(runId) : undefined;
    if (
      existing?.type === "workflow_created" &&
      existing.workflowId === workflowId &&
      existing.payload.workflowName === definition.name
    )
      return { runId, workflowId, created: false };
    throw new PlatformError("conflict", `A workflow run with id "${runId}" already exists; run ids must be unique`, {
      runId,
    });
  }

  const active = store.createdEvent(outcome.activeRunId);
  const activeName = active?.type === "workflow_created" ? active.payload.workflowName : undefined;
  if (activeName !== definition.name) {
    throw new PlatformError(
      "already_active",
      `Workflow id "${workflowId}" is in use by an active run of workflow "${activeName ?? "unknown"}"; pick another id or wait for that run to finish`,
      { activeRunId: outcome.activeRunId, activeWorkflowName: activeName },
    );
  }
  return { runId: outcome.activeRunId, workflowId, created: false };
}

/** The run an idempotency key answers: the newest run of the workflow id, if it has the key and its window is open at `now`. */
function idempotentRun(
  store: WorkflowEventStore,
  workflowId: string,
  workflowName: string,
  key: string,
  now: number,
): string | null {
  const latest = store.latestRunOf(workflowId);
  if (!latest || latest.name !== workflowName) return null;
  const created = store.createdEvent(latest.id);
  if (created?.type !== "workflow_created") return null;
  const { idempotency_key, idempotent_until } = created.payload;
  return idempotency_key === key && idempotent_until !== undefined && now < idempotent_until ? latest.id : null;
}

/**
 * The key a `once` start derives its run id from: 64 hex digits of SHA-256 over the workflow id, the
 * same for every start with that id and (for all practical purposes) no other.
 */
export async function onceRunKey(workflowId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(workflowId));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A run's workflow_created event, checked: throws `invalid_input` or `payload_too_large` as `createRun` does. */
export function createdEvent(
  definition: WorkflowDefinition,
  data: unknown,
  options: CreateRunOptions,
): StoredEventOf<"workflow_created"> {
  const runId = checkId(options.runId, "run id");
  const workflowId = checkId(options.workflowId ?? runId, "workflow id");
  // Top-level undefined means "no data"; undefined inside data is refused by toJsonValue.
  const startData = toJsonValue(data === undefined ? null : data, `start data of workflow "${definition.name}"`);
  const payload: StoredEventOf<"workflow_created">["payload"] = {
    workflowName: definition.name,
    writes: { [START_DATA_KEY]: startData },
  };
  if (options.version !== undefined) payload.version = options.version;
  if (options.rerun) payload.rerunOf = options.rerun.rerunOf;
  if (options.flowKey !== undefined) payload.flow_key = options.flowKey;
  if (options.rank && options.rank.priority !== DEFAULT_RANK.priority) payload.flow_priority = options.rank.priority;
  if (options.rank && options.rank.fairness !== DEFAULT_RANK.fairness) payload.flow_fairness = options.rank.fairness;
  if (options.queued) payload.queued = true;
  if (options.idempotency) {
    payload.idempotency_key = options.idempotency.key;
    payload.idempotent_until = options.now + options.idempotency.ttlMS;
  }
  if (options.parentRunId !== undefined) payload.parent_run_id = options.parentRunId;
  if (options.childDepth !== undefined) payload.child_depth = options.childDepth;
  encodePayload(payload, `Start data of workflow "${definition.name}"`);
  return { runId, workflowId, seq: 1, type: "workflow_created", payload, at: options.now };
}

/** Checks a run or workflow id: 1-256 characters without control characters; throws `invalid_input`. */
export function checkId(id: unknown, what: string): string {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH || /[\u0000-\u001f\u007f]/.test(id)) {
    throw new PlatformError(
      "invalid_input",
      `The ${what} must be a string of 1-${MAX_ID_LENGTH} characters without control characters, got ${JSON.stringify(id) ?? String(id)}`,
    );
  }
  return id;
}

/** A rerun's copied steps (and the event its first step runs with), after its workflow_created. */
function rerunEvents(created: StoredEventOf<"workflow_created">, plan: RerunPlan): StoredEvent[] {
  const events: StoredEvent[] = [];
  let previous: StoredEvent = created;
  for (const payload of plan.copied) {
    previous = nextEvent(previous, { type: "step_completed", payload, at: created.at });
    events.push(previous);
  }
  if (plan.event) events.push(nextEvent(previous, { type: "event_received", payload: plan.event, at: created.at }));
  return events;
}
