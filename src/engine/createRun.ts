import { PlatformError } from "../core/errors.ts";
import type { WorkflowDefinition } from "./definition.ts";
import { START_DATA_KEY, type StoredEventOf } from "./events.ts";
import { encodePayload, toJsonValue } from "./json.ts";
import type { WorkflowEventStore } from "./store.ts";

export interface CreateRunOptions {
  /** Chosen by the adapter (e.g. crypto.randomUUID()). */
  runId: string;
  /** At most one active run per workflow id; defaults to the run id. */
  workflowId?: string;
  /** Epoch ms for the workflow_created event. */
  now: number;
  /** Beyond the spec: the run whose step starts this one as a child (see children.ts). */
  parentRunId?: string;
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
 * is taken (run ids are the adapter's to choose unique).
 */
export function createRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  data: unknown,
  options: CreateRunOptions,
): CreatedRun {
  const event = createdEvent(definition, data, options);
  const { runId, workflowId } = event;
  const outcome = store.createRunIfNoActive(event);
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
  if (options.parentRunId !== undefined) payload.parent_run_id = options.parentRunId;
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
