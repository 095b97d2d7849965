import { PlatformError } from "../../core/errors.ts";
import {
  acceptBulkOperation,
  type BulkAction,
  type BulkRunControls,
  carryOnBulkOperation,
} from "../../engine/control/bulkOperation.ts";
import type { WorkflowDefinition } from "../../engine/api/definition.ts";
import { outcomeOfView, type WorkflowRunView } from "../../engine/execution/describeRun.ts";
import type { JsonValue } from "../../engine/api/json.ts";
import { createMemoryEventStore } from "../../engine/storage/memoryEventStore.ts";
import { planRerun, rerunBlockedBy } from "../../engine/control/rerun.ts";
import type { RunFilter } from "../../engine/storage/runQuery.ts";
import { isLiveStatus } from "../../engine/storage/store.ts";
import { findStrandedRuns } from "../../engine/control/strandedRuns.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  type StartedRun,
  type WorkflowBackend,
} from "../../engine/api/workflowApi.ts";
import { currentRecording, type TestRun } from "./testRecords.ts";
import { type DriveOptions, driveRun } from "./testRun.ts";

/**
 * `workflow.start/get/list/send/cancel` while the kit runs a project's code:
 * a run started by a request handler or a step is driven as `testWorkflow`
 * drives one (in memory, virtual clock) before `start` answers, and is
 * recorded in the caller's `runs`. One store for the test process, so
 * `workflow.get` and `workflow.list` see every run started so far.
 */
const store = createMemoryEventStore();
const runs = new Map<string, TestRun>();

function runOf(runId: string): TestRun {
  const run = runs.get(runId);
  if (!run) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
  return run;
}

function definitionNamed(name: string) {
  const definition = getWorkflowDefinition(name);
  if (!definition)
    throw new PlatformError("unknown_workflow", `No workflow named ${JSON.stringify(name)} is registered`);
  return definition;
}

/**
 * Drives a new run (or a rerun) on the process's store as `testWorkflow` does and records it; a start
 * the engine answers with an existing run (its workflow id active, its idempotency key seen) answers that run.
 */
export async function driveOnSharedStore(
  definition: WorkflowDefinition,
  data: unknown,
  options: Omit<DriveOptions, "store">,
): Promise<{ created: boolean; run: TestRun }> {
  const driven = await driveRun(definition, data, { store, ...options });
  if (!driven.created) return { created: false, run: runOf(driven.runId) };
  const { run } = driven;
  runs.set(run.id, run);
  currentRecording()?.runs.push(run);
  return { created: true, run };
}

async function drive(
  name: string,
  data: JsonValue,
  options: Omit<DriveOptions, "store" | "startAt">,
): Promise<StartedRun> {
  const { created, run } = await driveOnSharedStore(definitionNamed(name), data, { startAt: Date.now(), ...options });
  if (!created) return { runId: run.id, workflowId: run.workflowId, created: false };
  const view = run.view;
  return {
    runId: run.id,
    workflowId: run.workflowId,
    created: true,
    ...(isLiveStatus(view.status) ? {} : { outcome: outcomeOfView(view) }),
  };
}

async function rerun(runId: string, fromStep: string | undefined): Promise<StartedRun & { name: string }> {
  const original = store.events(runId);
  const created = original[0];
  if (created?.type !== "workflow_created")
    throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
  const name = created.payload.workflowName;
  const plan = planRerun(original, definitionNamed(name), fromStep);
  const started = await drive(name, plan.data, {
    ...(created.workflowId === runId ? {} : { id: created.workflowId }),
    rerun: plan,
  });
  if (!started.created) throw rerunBlockedBy(started.runId, created.workflowId, runId);
  return { ...started, name };
}

/** What a bulk operation acts on one run through: what `cancel` and `rerun` do. */
const bulkRunControls: BulkRunControls = {
  cancel: (runId, reason) => runOf(runId).cancel(reason),
  rerun: (runId, { fromStep }) => rerun(runId, fromStep),
};

/** A bulk operation as the platform carries one out, done at once (the kit's store lives as long as the test process). */
function bulk(action: BulkAction, filter: RunFilter) {
  const operation = acceptBulkOperation(store, store, {
    id: crypto.randomUUID(),
    action,
    filter,
    now: Date.now(),
    what: `workflow.${action.kind}Many`,
  });
  return carryOnBulkOperation(store, store, operation, { controls: bulkRunControls });
}

const testWorkflowBackend: WorkflowBackend = {
  start: (name, data, options) =>
    drive(name, data, {
      ...(options.id === undefined ? {} : { id: options.id }),
      ...(options.idempotency ? { idempotency: options.idempotency } : {}),
    }),
  async get(runId) {
    return runs.get(runId)?.view ?? null;
  },
  async list(query) {
    return store.listRuns(query);
  },
  // `run.result()` of a run that waits for an event would wait for ever in a test: answer as run.result() does.
  async waitForTerminal(runId): Promise<WorkflowRunView> {
    const run = runOf(runId);
    await run.result().catch((error: unknown) => {
      if (error instanceof PlatformError && error.code === "conflict") throw error;
    });
    return run.view;
  },
  async send(runId, name, payload, callbackId) {
    // The kit's callback URLs are signed with its own secret, not the project's: a test delivers them with run.callback.
    if (callbackId !== undefined)
      throw new PlatformError("not_ready", "In a test, deliver a callback URL with run.callback(url, body)");
    await runOf(runId).send(name, payload);
  },
  async sendOrStart(workflowId, event, start) {
    const active = store.latestRunOf(workflowId);
    if (active && isLiveStatus(active.status)) {
      await runOf(active.id).send(event.name, event.payload);
      return { runId: active.id, workflowId, created: false };
    }
    return drive(start.name, start.data, { id: workflowId, firstEvent: event });
  },
  async cancel(runId, reason) {
    return runOf(runId).cancel(reason);
  },
  async pause(runId, reason) {
    return runOf(runId).pause(reason);
  },
  async resume(runId) {
    return runOf(runId).resume();
  },
  rerun: (runId, options) => rerun(runId, options.fromStep),
  countRuns: async (filter) => store.matchRunIds(filter, 0).matched,
  cancelMany: (filter, options) => bulk({ kind: "cancel", ...options }, filter),
  rerunMany: (filter, options) => bulk({ kind: "rerun", ...options }, filter),
  async findStrandedRuns(workflows) {
    return findStrandedRuns(store, workflows);
  },
};

/** Makes `workflow.start` and the rest run on the kit (called by testWorkflow and testRequest). */
export function useTestWorkflowBackend(): void {
  installWorkflowBackend(testWorkflowBackend);
}
