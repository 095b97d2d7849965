import { PlatformError } from "../../core/errors.ts";
import { stepNamed, type WorkflowDefinition } from "../api/definition.ts";
import {
  isTerminalEvent,
  START_DATA_KEY,
  type RerunOf,
  type StoredEvent,
  type WorkflowEventPayloads,
} from "../execution/events.ts";
import type { JsonValue } from "../api/json.ts";

/** What a rerun of a finished run starts with (`workflow.rerun`). */
export interface RerunPlan {
  /** The original's start data. */
  data: JsonValue;
  rerunOf: RerunOf;
  /**
   * The step_completed payloads the new log begins with, after its
   * workflow_created: the original's completed steps before `fromStep`, in
   * order, each marked with the original's seq (`copied_from_seq`). The last
   * one continues with `fromStep`, with the event the original's first
   * attempt of it received (then `event` is that event, sent again after it).
   */
  copied: WorkflowEventPayloads["step_completed"][];
  event?: WorkflowEventPayloads["event_received"];
}

/**
 * The error of a rerun that found the workflow id it keeps (`workflowId`) taken by an active run
 * (`activeRunId`): `already_active`, the rerun of `runId` waits for that run to finish.
 */
export function rerunBlockedBy(activeRunId: string, workflowId: string | undefined, runId: string): PlatformError {
  return new PlatformError(
    "already_active",
    `Workflow id "${workflowId}" has an active run (${activeRunId}); a rerun of ${runId} would share it: wait for it to finish`,
    { activeRunId },
  );
}

/**
 * Plans a rerun of the run whose log is `original`: the same data, and with
 * `fromStep` the completed steps before the original's first claim of that
 * step (their writes, so `ctx.scratchpad` is as it was). `fromStep` names a
 * step of the code running now (an old name the definition's `renamed` maps
 * is followed, in both the request and the original's log). Throws
 * `not_found` (no such run), `conflict` (the run has not finished: a rerun
 * of a live run would run the same steps twice at once) and `invalid_input`
 * (a step the code or the run does not have).
 */
export function planRerun(
  original: readonly StoredEvent[],
  definition: WorkflowDefinition,
  fromStep: string | undefined,
): RerunPlan {
  const created = original[0];
  const last = original[original.length - 1];
  if (!created || !last || created.type !== "workflow_created")
    throw new PlatformError("not_found", "The run to rerun does not exist");
  const runId = created.runId;
  if (!isTerminalEvent(last))
    throw new PlatformError(
      "conflict",
      `Workflow run "${runId}" has not finished: only a completed, failed or cancelled run can be rerun (cancel it first)`,
      { runId },
    );
  // A debounced start may have replaced the data the run was created with: the last one is what it ran with.
  const started = original.findLast((e) => e.type === "workflow_created" || e.type === "start_replaced") ?? created;
  const data =
    (started.type === "workflow_created" || started.type === "start_replaced"
      ? started.payload.writes[START_DATA_KEY]
      : undefined) ?? null;
  if (fromStep === undefined) return { data, rerunOf: { runId }, copied: [] };
  const step = stepNamed(definition, fromStep);
  if (step === undefined)
    throw new PlatformError(
      "invalid_input",
      `Workflow "${definition.name}" has no step "${fromStep}" (its steps: ${Object.keys(definition.steps).join(", ")})`,
    );
  const rerunOf = { runId, fromStep: step };
  const claim = original.findIndex((e) => e.type === "step_started" && stepNamed(definition, e.payload.step) === step);
  if (claim < 0) {
    const reached = [
      ...new Set(
        original.flatMap((e) =>
          e.type === "step_started" ? [stepNamed(definition, e.payload.step) ?? e.payload.step] : [],
        ),
      ),
    ];
    throw new PlatformError(
      "invalid_input",
      `Workflow run "${runId}" never reached step "${step}"${reached.length ? ` (it reached ${reached.join(", ")})` : ""}: rerun it from one of those, or from the start`,
      { runId, reached },
    );
  }
  const completions = original.slice(0, claim).filter((e) => e.type === "step_completed");
  const claimed = original[claim] as Extract<StoredEvent, { type: "step_started" }>;
  const delivered =
    claimed.payload.event_seq === undefined ? undefined : original.find((e) => e.seq === claimed.payload.event_seq);
  const event = delivered?.type === "event_received" ? delivered.payload : undefined;
  const copied = completions.map((e, index): WorkflowEventPayloads["step_completed"] => {
    const ownStep = stepNamed(definition, e.payload.step) ?? e.payload.step;
    const isLast = index === completions.length - 1;
    const next = isLast
      ? step
      : e.payload.next_step && (stepNamed(definition, e.payload.next_step) ?? e.payload.next_step);
    return {
      step: ownStep,
      writes: e.payload.writes,
      ...(next === undefined ? {} : { next_step: next }),
      // The original's first attempt of fromStep ran with an event: the copy waits for it, and it is sent again.
      ...(isLast && event ? { waiting_for: event.name } : {}),
      copied_from_seq: e.seq,
    };
  });
  return event ? { data, rerunOf, copied, event } : { data, rerunOf, copied };
}
