import { createRun } from "#src/engine/execution/createRun.ts";
import { defineWorkflow, type WorkflowOptions, type WorkflowSteps } from "#src/engine/api/definition.ts";
import type { StoredEvent, WorkflowEventPayloads, WorkflowEventType } from "#src/engine/execution/events.ts";
import { executeRun, type ExecuteRunOptions } from "#src/engine/execution/executeRun.ts";
import { createMemoryEventStore } from "#src/engine/storage/memoryEventStore.ts";
import { manualClock } from "#test/support/workflow/index.ts";

export const RUN = "run-1";

/** One event to plant, as [type, payload]. */
export type Planted = { [T in WorkflowEventType]: [T, WorkflowEventPayloads[T]] }[WorkflowEventType];

/**
 * A run of workflow "w" (1 s backoff, no jitter unless `options` say otherwise) created in a
 * memory store on a manual clock; `run` executes it once with that clock and a sleep that
 * returns at once; `plant` appends events as another executor would have left them.
 */
export function setup(
  steps: WorkflowSteps,
  options: WorkflowOptions = {},
  data: unknown = { name: "Ada" },
  clock = manualClock(),
) {
  const store = createMemoryEventStore();
  const definition = defineWorkflow("w", steps, { backoff: { initialMS: 1000, jitter: 0 }, ...options });
  createRun(store, definition, data, { runId: RUN, now: clock.now() });
  const run = (extra: Partial<ExecuteRunOptions> = {}) =>
    executeRun(store, definition, RUN, { now: clock.now, sleep: async () => {}, ...extra });
  const events = () => store.events(RUN);
  const last = () => store.lastEvent(RUN) as StoredEvent;
  const plant = (...planted: Planted[]) => {
    const next = events().length + 1;
    store.append(
      planted.map(
        ([type, payload], i) =>
          ({ runId: RUN, workflowId: RUN, seq: next + i, type, payload, at: clock.now() }) as StoredEvent,
      ),
    );
  };
  return { clock, store, definition, run, events, last, plant };
}
