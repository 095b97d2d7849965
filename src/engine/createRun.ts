import { PlatformError } from "../core/errors.ts";
import type { WorkflowDefinition } from "./definition.ts";
import {
  nextEvent,
  START_DATA_KEY,
  type StoredEvent,
  type StoredEventOf,
  type WorkflowEventPayloads,
} from "./events.ts";
import { encodePayload, toJsonValue } from "./json.ts";
import type { RerunPlan } from "./rerun.ts";
import type { WorkflowEventStore } from "./store.ts";

export interface CreateRunOptions {
  /** Chosen by the adapter (e.g. crypto.randomUUID()). */
  runId: string;
  /** At most one active run per workflow id; defaults to the run id. */
  workflowId?: string;
  /** Epoch ms for the workflow_created event. */
  now: number;
  /** Beyond the spec: the project version running this code (`v3`), recorded in workflow_created. */
  version?: string;
  /** Beyond the spec: the run is a rerun (see planRerun); its copied steps follow workflow_created. */
  rerun?: RerunPlan;
}

export interface CreatedRun {
  runId: string;
  workflowId: string;
  /** False when an active run with this workflow id already existed; `runId` is then that run's id. */
  created: boolean;
}

const MAX_ID_LENGTH = 256;

/**
 * Writes a run's workflow_created event unless its workflow id already has an
 * active run. Validates everything first, so invalid input appends nothing.
 * The caller enqueues execution when `created` is true.
 *
 * Throws `invalid_input` (bad id or data that is not JSON), `payload_too_large`
 * (data over 1 MiB), `already_active` when the workflow id is active as a
 * run of a *different* workflow (returning that run as "the existing handle"
 * would hand back another workflow's result), or `conflict` when the run id
 * is taken (run ids are the adapter's to choose unique).
 */
export function createRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  data: unknown,
  options: CreateRunOptions,
): CreatedRun {
  const runId = checkId(options.runId, "run id");
  const workflowId = checkId(options.workflowId ?? runId, "workflow id");
  // Top-level undefined means "no data"; undefined inside data is refused by toJsonValue.
  const startData = toJsonValue(data === undefined ? null : data, `start data of workflow "${definition.name}"`);
  const payload: WorkflowEventPayloads["workflow_created"] = {
    workflowName: definition.name,
    writes: { [START_DATA_KEY]: startData },
    ...(options.version === undefined ? {} : { version: options.version }),
    ...(options.rerun ? { rerunOf: options.rerun.rerunOf } : {}),
  };
  encodePayload(payload, `Start data of workflow "${definition.name}"`);
  const event: StoredEventOf<"workflow_created"> = {
    runId,
    workflowId,
    seq: 1,
    type: "workflow_created",
    payload,
    at: options.now,
  };

  const outcome = store.createRunIfNoActive(event, {
    retentionMS: definition.retentionMS,
    following: options.rerun ? rerunEvents(event, options.rerun) : [],
  });
  if (outcome.created) return { runId, workflowId, created: true };
  if ("seqTaken" in outcome)
    throw new PlatformError("conflict", `A workflow run with id "${runId}" already exists; run ids must be unique`, {
      runId,
    });

  const active = store.events(outcome.activeRunId)[0];
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

function checkId(id: unknown, what: string): string {
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
    previous = nextEvent(previous, "step_completed", payload, created.at);
    events.push(previous);
  }
  if (plan.event) events.push(nextEvent(previous, "event_received", plan.event, created.at));
  return events;
}
