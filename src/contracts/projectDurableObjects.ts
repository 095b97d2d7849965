import { PlatformError } from "../core/errors.ts";

/**
 * The Durable Object classes a project worker exports when it uses workflows (`src/objects/index.ts`
 * exports them under these names) and the binding each is given in the project's script.
 */
export const PROJECT_DURABLE_OBJECTS = {
  WorkflowRun: "WORKFLOW_RUNS",
  WorkflowRunIndex: "WORKFLOW_RUN_INDEX",
  WorkflowFlowKey: "WORKFLOW_FLOW_KEYS",
} as const satisfies Record<string, string>;

export type ProjectDurableObjectClass = keyof typeof PROJECT_DURABLE_OBJECTS;

/** The binding of a project Durable Object class; any other class name is refused. */
export function projectDurableObjectBinding(className: string): string {
  if (!isProjectDurableObjectClass(className)) {
    throw new PlatformError(
      "invalid_input",
      `${JSON.stringify(className)} is not a platform Durable Object class; the classes are ${Object.keys(PROJECT_DURABLE_OBJECTS).join(", ")}.`,
    );
  }
  return PROJECT_DURABLE_OBJECTS[className];
}

export function isProjectDurableObjectClass(name: unknown): name is ProjectDurableObjectClass {
  return typeof name === "string" && Object.hasOwn(PROJECT_DURABLE_OBJECTS, name);
}
