import { PlatformError } from "../../core/errors.ts";
import { createRun } from "../../engine/createRun.ts";
import type { WorkflowDefinition } from "../../engine/definition.ts";
import { describeRun, outcomeOfView, type WorkflowRunView } from "../../engine/describeRun.ts";
import { executeRun } from "../../engine/executeRun.ts";
import type { JsonValue } from "../../engine/json.ts";
import type { MemoryEventStore } from "../../engine/memoryEventStore.ts";
import { appendReceivedEvent, cancelRun } from "../../engine/runControl.ts";
import { createRecording, type TestRun } from "./testRecords.ts";
import { inNestedTestScope } from "./testScope.ts";

export interface DriveOptions {
  store: MemoryEventStore;
  /** The virtual clock's start (epoch ms). */
  startAt: number;
  /** The run's workflow id; default: its run id. */
  id?: string;
  /** The project's variables its steps read as `ctx.env`. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Creates a run in `store` and drives it on a virtual clock until it is
 * finished or waits for an event. Answers `created: false` with the active
 * run's id when the workflow id is taken (the caller holds its handle).
 */
export async function driveRun(
  definition: WorkflowDefinition,
  data: unknown,
  { store, startAt, id, env }: DriveOptions,
): Promise<{ created: true; run: TestRun } | { created: false; runId: string }> {
  let clock = startAt;
  const now = () => clock;
  const created = createRun(store, definition, data === undefined ? null : data, {
    runId: crypto.randomUUID(),
    workflowId: id,
    now: clock,
  });
  if (!created.created) return { created: false, runId: created.runId };
  const { runId, workflowId } = created;
  const view = () => describeRun(store.events(runId)) as WorkflowRunView;
  const recording = createRecording();

  /** Executes until the run is finished or waits for an event, moving the clock over every other wait. */
  async function settle(): Promise<WorkflowRunView> {
    for (;;) {
      const result = await inNestedTestScope(
        recording,
        () =>
          executeRun(store, definition, runId, {
            now,
            budgetMS: Number.POSITIVE_INFINITY,
            // A lost seq race cannot happen with one executor; no real pause either way.
            sleep: async () => {},
          }),
        env,
      );
      switch (result.status) {
        case "waiting":
          // A wait for an event stops here even with a timeout: the test chooses send, timeOut or cancel.
          if (view().waitingFor) return view();
          clock = Math.max(clock, result.wakeAt);
          continue;
        case "in_flight":
          // Only after a step outlived its stepTimeoutMS: let the engine record the timeout.
          clock = Math.max(clock, result.timeoutAt);
          continue;
        case "budget_exhausted":
          continue;
        case "terminal":
        case "idle":
        case "stopped":
          return view();
      }
    }
  }

  await settle();
  const run: TestRun = {
    id: runId,
    workflowId,
    name: definition.name,
    get view() {
      return view();
    },
    outbox: recording.outbox,
    calls: recording.calls,
    runs: recording.runs,
    now,
    async send(name, payload) {
      appendReceivedEvent(store, runId, name, payload, clock);
      return settle();
    },
    async timeOut() {
      const timeoutAt = view().waitingFor?.timeoutAt;
      if (timeoutAt === undefined)
        throw new PlatformError(
          "conflict",
          `Workflow run "${runId}" is not waiting for an event with a timeout; there is nothing to time out`,
        );
      clock = Math.max(clock, timeoutAt);
      return settle();
    },
    async cancel(reason) {
      cancelRun(store, runId, reason, clock);
      return view();
    },
    async result() {
      const current = view();
      if (current.status === "running")
        throw new PlatformError(
          "conflict",
          `Workflow run "${runId}" is still running (waiting for "${current.waitingFor?.name}"); send it, time it out or cancel it first`,
        );
      const outcome = outcomeOfView(current);
      if (outcome.status === "completed") return outcome.result as JsonValue as never;
      if (outcome.status === "cancelled")
        throw new PlatformError("cancelled", `Workflow run "${runId}" was cancelled: ${outcome.reason}`, {
          runId,
          reason: outcome.reason,
        });
      throw new PlatformError("workflow_failed", outcome.error, { runId, cause: outcome.cause });
    },
  };
  return { created: true, run };
}
