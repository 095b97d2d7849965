import type { WorkflowDefinition } from "#src/engine/api/definition.ts";
import { getWorkflowDefinition } from "#src/engine/api/workflowApi.ts";

/** The definition of a workflow the test registered (with `workflow(...)`), to drive executeRun by hand. */
export function definitionOf(name: string): WorkflowDefinition {
  const found = getWorkflowDefinition(name);
  if (!found) throw new Error(`workflow ${name} is not registered`);
  return found;
}
