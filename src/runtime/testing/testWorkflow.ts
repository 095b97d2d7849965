import { PlatformError } from "../../core/errors.ts";
import type { WorkflowDefinition } from "../../engine/api/definition.ts";
import { createMemoryEventStore } from "../../engine/storage/memoryEventStore.ts";
import { backendStartOptions, getWorkflowDefinition } from "../../engine/api/workflowApi.ts";
import { driveOnSharedStore, useTestWorkflowBackend } from "./testBackend.ts";
import type { TestRun } from "./testRecords.ts";
import { driveRun } from "./testRun.ts";

/**
 * @example
 * const options: TestWorkflowOptions = { startAt: Date.UTC(2026, 0, 1), idempotencyKey: "order-42" };
 * const run = await testWorkflow("checkout", { orderId: 42 }, options);
 */
export interface TestWorkflowOptions {
  /** The virtual clock's start (epoch ms); default: the real time when the run starts. */
  startAt?: number;
  /** The run's workflow id; default: its run id. */
  id?: string;
  /** The project's variables and secrets, as `.dev.vars` would give them: its steps read them as `ctx.env.NAME`. */
  env?: Readonly<Record<string, string>>;
  /**
   * As `workflow.start`'s: a second start with the key within `idempotencyTTLMS` (virtual time) answers
   * the first run, as under `platform dev`. Keyed runs live in the test process's one store (the one
   * `testRequest` starts runs in), so a key means one run across the tests of a file.
   */
  idempotencyKey?: string;
  /** The key's window (default 24 h); only with `idempotencyKey`. */
  idempotencyTTLMS?: number;
}

/**
 * Runs a workflow in this process on the in-memory store
 * with a virtual clock, for tests of user code (`import { testWorkflow }
 * from "platform/testing"`). Sleeps and retry waits pass at once, but the
 * events record them at their real times: a step after `sleepMS: 86_400_000`
 * starts a day after the step before it. The run stops where only the test
 * can move it: finished, or waiting for an event (then `send`, `timeOut` or
 * `cancel`). Step functions run for real (their own awaits and their
 * `stepTimeoutMS` take real time); `Date.now()` inside them is the real clock.
 * Plugin calls from the steps reach in-process fakes (pluginFakes.ts): the
 * run's emails land in `run.outbox`, every call in `run.calls`. Given the
 * definition `workflow<Data, Pad, Result>(…)` returned, the data is checked
 * against `Data` and `run.result()` resolves a `Result`.
 * @example
 * const run = await testWorkflow(greet, { name: "Ada" }, { startAt: Date.UTC(2026, 0, 1) });
 * expect(await run.result()).toEqual({ hello: "Ada", n: 1 });
 */
export async function testWorkflow<Data, Result>(
  workflow: WorkflowDefinition<Data, object, Result>,
  ...rest: undefined extends Data
    ? [data?: Data, options?: TestWorkflowOptions]
    : [data: Data, options?: TestWorkflowOptions]
): Promise<TestRun<Result>>;
/**
 * By name: the workflow a module the test imported registered with `workflow(name, …)`.
 * @example
 * import "../src/index.ts";
 * const run = await testWorkflow("remind", { to: "ada@example.com" });
 * await run.send("approval", { by: "ada" });
 */
export async function testWorkflow(name: string, data?: unknown, options?: TestWorkflowOptions): Promise<TestRun>;
export async function testWorkflow(
  workflow: string | WorkflowDefinition,
  data?: unknown,
  options: TestWorkflowOptions = {},
): Promise<TestRun> {
  const definition = typeof workflow === "string" ? getWorkflowDefinition(workflow) : workflow;
  if (!definition)
    throw new PlatformError(
      "unknown_workflow",
      `No workflow named ${JSON.stringify(workflow)} is registered; import the module that calls workflow(${JSON.stringify(workflow)}, …) first`,
    );
  useTestWorkflowBackend();
  const { startAt = Date.now(), id, env, idempotencyKey, idempotencyTTLMS } = options;
  if (idempotencyKey !== undefined || idempotencyTTLMS !== undefined) {
    // The engine's own checks and keyed workflow id, as `workflow.start` gives them to a backend.
    const started = backendStartOptions(definition.name, { id, idempotencyKey, idempotencyTTLMS });
    return (await driveOnSharedStore(definition, data, { startAt, env, ...started })).run;
  }
  // Its own store: runs of different tests never meet.
  const driven = await driveRun(definition, data, { store: createMemoryEventStore(), startAt, id, env });
  if (!driven.created) throw new PlatformError("internal", "A fresh store had an active run.");
  return driven.run;
}
