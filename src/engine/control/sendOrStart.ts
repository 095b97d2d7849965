import { PlatformError } from "../../core/errors.ts";
import { type CreatedRun, type CreateRunOptions, createdEvent } from "../execution/createRun.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import { nextEvent } from "../execution/events.ts";
import { appendReceivedEvent, receivedEventPayload, type SentEvent } from "./runControl.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/** The event to send, and the start data and creation options of the run started when none is active. */
export interface SendOrStartRequest {
  event: SentEvent;
  data: unknown;
  runOptions: CreateRunOptions;
}

/**
 * `workflow.send(workflowId, event, payload, { start })`: the event goes to the run holding the
 * workflow id if one is active (of any workflow); otherwise a run of `definition` is created with
 * that id and the event is its first event_received, written with its workflow_created in one
 * append. No await separates the check from the writes, so in a single-threaded host (the workflow
 * id's actor, one Node process) two calls never start two runs: the second finds the first active.
 * Validates everything first, so a bad event or bad data writes nothing. A workflow with flow control
 * is refused: its key's queue, not this call, decides when its runs start.
 */
export function sendOrStartRun(
  store: WorkflowEventStore,
  definition: WorkflowDefinition,
  { event, data, runOptions }: SendOrStartRequest,
): CreatedRun {
  if (definition.flow)
    throw new PlatformError(
      "invalid_input",
      `workflow.send(workflowId, event, payload, { start }): workflow "${definition.name}" has flow control (concurrency, throttle or debounce), so its key's queue decides when its runs start; start it with workflow.start and send with workflow.send(runId, …)`,
    );
  const received = receivedEventPayload(event.name, event.payload);
  const created = createdEvent(definition, data, runOptions);
  const { runId, workflowId } = created;
  const outcome = store.createRunIfNoActive(created, {
    retentionMS: definition.retentionMS,
    following: [nextEvent(created, { type: "event_received", payload: received, at: runOptions.now })],
  });
  if (outcome.created) return { runId, workflowId, created: true };
  if ("seqTaken" in outcome)
    throw new PlatformError("conflict", `A workflow run with id "${runId}" already exists; run ids must be unique`, {
      runId,
    });
  appendReceivedEvent(store, outcome.activeRunId, received, runOptions.now);
  return { runId: outcome.activeRunId, workflowId, created: false };
}
