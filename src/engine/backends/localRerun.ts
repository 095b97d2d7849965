/** A rerun started in the local backend's store: a new run of the original's workflow, planned by control/rerun.ts. */
import { PlatformError } from "../../core/errors.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import { planRerun, rerunBlockedBy } from "../control/rerun.ts";
import { createRun, type CreatedRun } from "../execution/createRun.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/** Which run to rerun from which step, and the new run's id, time and workflow version. */
export interface LocalRerunRequest {
  runId: string;
  fromStep: string | undefined;
  /** Called only once the rerun is planned, as the host's other starts call it. */
  newRunId: () => string;
  now: number;
  version?: string;
}

/** Starts the rerun (the host drives it); throws as `workflow.rerun` answers: not_found, unknown_workflow, a blocked start. */
export function startLocalRerun(
  store: WorkflowEventStore,
  definitions: (name: string) => WorkflowDefinition | undefined,
  { runId, fromStep, newRunId, now, version }: LocalRerunRequest,
): CreatedRun & { name: string } {
  const original = store.events(runId);
  const created = original[0];
  if (created?.type !== "workflow_created")
    throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
  const name = created.payload.workflowName;
  const definition = definitions(name);
  if (!definition) throw new PlatformError("unknown_workflow", `No workflow named "${name}" is registered`);
  const plan = planRerun(original, definition, fromStep);
  // A run started under a workflow id of its own keeps it (it is free: the original has finished).
  const workflowId = created.workflowId === runId ? undefined : created.workflowId;
  const started = createRun(store, definition, plan.data, {
    runId: newRunId(),
    ...(workflowId === undefined ? {} : { workflowId }),
    now,
    ...(version === undefined ? {} : { version }),
    rerun: plan,
  });
  if (!started.created) throw rerunBlockedBy(started.runId, created.workflowId, runId);
  return { ...started, name: definition.name };
}
