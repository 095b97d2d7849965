import { PlatformError } from "../../core/errors.ts";
import { createRun } from "../../engine/createRun.ts";
import type { WorkflowDefinition } from "../../engine/definition.ts";
import { describeRun, outcomeOfView, type WorkflowRunView } from "../../engine/describeRun.ts";
import { executeRun } from "../../engine/executeRun.ts";
import type { JsonValue } from "../../engine/json.ts";
import { createMemoryEventStore } from "../../engine/memoryEventStore.ts";
import { appendReceivedEvent, cancelRun } from "../../engine/runControl.ts";
import { getWorkflowDefinition } from "../../engine/workflowApi.ts";
import { createRecording, type PluginCallRecord, type SentEmail } from "./pluginFakes.ts";
import { inTestScope } from "./testScope.ts";

export interface TestWorkflowOptions {
  /** The virtual clock's start (epoch ms); default: the real time when the run starts. */
  startAt?: number;
  /** The run's workflow id; default: its run id. */
  id?: string;
}

/**
 * A run driven by {@link testWorkflow}. Every method runs the workflow on
 * until it is finished or waits for an event, and answers its view then.
 * `Result` is the workflow's result type when the test passed the definition
 * `workflow<Data, Pad, Result>(…)` returned.
 */
// biome-ignore lint/suspicious/noExplicitAny: public default: a run's result is user JSON read without declaring a type
export interface TestRun<Result = any> {
  readonly id: string;
  /** The emails the run's steps sent with `email.send`, in order: `{ to, subject, html }` (`to` always a list). */
  readonly outbox: readonly SentEmail[];
  /** Every plugin call the run's steps made (email, chat server, workspace chat), in order, with the fake's answer. */
  readonly calls: readonly PluginCallRecord[];
  /** The run's view as `workflow.get` shows it: status, result or error, and every event with its (virtual) time. */
  readonly view: WorkflowRunView;
  /** The virtual clock (epoch ms): the start time plus every sleep, retry wait and timeout passed so far. */
  now(): number;
  /** `workflow.send(runId, name, payload)`: the step after a `waitFor: name` runs with it as `ctx.event`. */
  send(name: string, payload?: unknown): Promise<WorkflowRunView>;
  /** Lets the wait's `timeoutMS` pass: the next step runs with `ctx.event === null`. */
  timeOut(): Promise<WorkflowRunView>;
  /** `workflow.cancel(runId, reason)`. */
  cancel(reason?: string): Promise<WorkflowRunView>;
  /** What `run.result()` would settle with: the result, or a PlatformError `workflow_failed` / `cancelled`. */
  result<T = Result>(): Promise<T>;
}

/**
 * Beyond the spec: runs a workflow in this process on the in-memory store
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
 */
export async function testWorkflow<Data, Result>(
  workflow: WorkflowDefinition<Data, object, Result>,
  ...rest: undefined extends Data
    ? [data?: Data, options?: TestWorkflowOptions]
    : [data: Data, options?: TestWorkflowOptions]
): Promise<TestRun<Result>>;
/** By name: the workflow a module the test imported registered with `workflow(name, …)`. */
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
  const store = createMemoryEventStore();
  let clock = options.startAt ?? Date.now();
  const now = () => clock;
  const { runId } = createRun(store, definition, data === undefined ? null : data, {
    runId: crypto.randomUUID(),
    workflowId: options.id,
    now: clock,
  });
  const view = () => describeRun(store.events(runId)) as WorkflowRunView;
  const recording = createRecording();

  /** Executes until the run is finished or waits for an event, moving the clock over every other wait. */
  async function settle(): Promise<WorkflowRunView> {
    for (;;) {
      const result = await inTestScope(recording, () =>
        executeRun(store, definition!, runId, {
          now,
          budgetMS: Number.POSITIVE_INFINITY,
          // A lost seq race cannot happen with one executor; no real pause either way.
          sleep: async () => {},
        }),
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
  return {
    id: runId,
    get view() {
      return view();
    },
    outbox: recording.outbox,
    calls: recording.calls,
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
}
