import { PlatformError } from "../../core/errors.ts";
import { outcomeOfView, type WorkflowRunView } from "../../engine/describeRun.ts";
import { createMemoryEventStore } from "../../engine/memoryEventStore.ts";
import { getWorkflowDefinition, installWorkflowBackend, type WorkflowBackend } from "../../engine/workflowApi.ts";
import { currentRecording, type TestRun } from "./testRecords.ts";
import { driveRun } from "./testRun.ts";

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

const testWorkflowBackend: WorkflowBackend = {
  async start(name, data, options) {
    const definition = getWorkflowDefinition(name);
    if (!definition)
      throw new PlatformError("unknown_workflow", `No workflow named ${JSON.stringify(name)} is registered`);
    const driven = await driveRun(definition, data, { store, startAt: Date.now(), id: options.id });
    if (!driven.created) {
      const active = runOf(driven.runId);
      return { runId: active.id, workflowId: active.workflowId, created: false };
    }
    const { run } = driven;
    runs.set(run.id, run);
    currentRecording()?.runs.push(run);
    const view = run.view;
    return {
      runId: run.id,
      workflowId: run.workflowId,
      created: true,
      ...(view.status === "running" ? {} : { outcome: outcomeOfView(view) }),
    };
  },
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
  async send(runId, name, payload) {
    await runOf(runId).send(name, payload);
  },
  async cancel(runId, reason) {
    return runOf(runId).cancel(reason);
  },
};

/** Makes `workflow.start` and the rest run on the kit (called by testWorkflow and testRequest). */
export function useTestWorkflowBackend(): void {
  installWorkflowBackend(testWorkflowBackend);
}
