import { platformRuntime } from "../entry/platformRuntime.ts";
import type { WorkflowFunction } from "../../engine/api/workflowApi.ts";
import { installWorkflowCapability } from "./workflowCapability.ts";

/**
 * Durable workflows: `workflow(name, steps, options)` registers one (top level), `workflow.start`
 * runs it, `workflow.get`, `.list`, `.send`, `.cancel`, … act on runs. Each method's own doc has an example.
 *
 * @example
 * const greet = workflow("greet", {
 *   start: async (ctx) => ({ done: true, result: `hello ${ctx.data.name}` }),
 * });
 * const run = await workflow.start(greet, { name: "Ada" });
 * console.log(await run.result());
 *
 * (The engine's registry, which installing the capability on the worker's runtime answers: the one
 * place the workflow routes, crons and backend are wired.)
 */
export const workflow: WorkflowFunction = installWorkflowCapability(platformRuntime);
export { NonRetryableError } from "../../engine/execution/nonRetryableError.ts";
export { RetryAfterError } from "../../engine/execution/retryAfterError.ts";
