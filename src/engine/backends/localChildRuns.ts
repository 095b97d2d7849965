/**
 * The local backend's children: runs of its own store, started there exactly once (their run id
 * is their key) and driven at once.
 */
import { PlatformError } from "../../core/errors.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import { type ChildRunPort, childDepthOf, createChildRun } from "../control/children.ts";
import type { WorkflowEventStore } from "../storage/store.ts";

/** What starting and cancelling children goes through: the store, the definitions, the clock, the host's drive and cancel. */
export interface LocalChildRunHost {
  store: WorkflowEventStore;
  definitions: (name: string) => WorkflowDefinition | undefined;
  now: () => number;
  kick: (runId: string) => void;
  cancelIfActive: (runId: string, reason: string) => void;
}

export function createLocalChildRuns({
  store,
  definitions,
  now,
  kick,
  cancelIfActive,
}: LocalChildRunHost): ChildRunPort {
  return {
    async start(parentRunId, requests) {
      const known = requests.map((child) => {
        const definition = definitions(child.workflow);
        if (!definition)
          throw new PlatformError("unknown_workflow", `No workflow named "${child.workflow}" is registered`);
        return definition;
      });
      const childDepth = childDepthOf(store, parentRunId);
      return requests.map((child, index) => {
        const { ref, created } = createChildRun(
          store,
          known[index] as WorkflowDefinition,
          { runId: child.key, workflowId: child.workflowId, data: child.data, parentRunId, childDepth },
          now(),
        );
        if (created) kick(ref.runId);
        return ref;
      });
    },
    async cancel(runIds, reason) {
      for (const runId of runIds) cancelIfActive(runId, reason);
    },
  };
}
