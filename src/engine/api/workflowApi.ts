import { errorFromJSON, PlatformError } from "../../core/errors.ts";
import { defineWorkflow, type WorkflowDefinition, type WorkflowOptions, type WorkflowSteps } from "./definition.ts";
import type { AwaitedRun } from "../execution/continuation.ts";
import { awaitedRunOf, outcomeOfView, type RunOutcome, type WorkflowRunView } from "../execution/describeRun.ts";
import { checkEventName, MAX_WAIT_MS } from "../execution/continuation.ts";
import { encodePayload, toJsonValue, type JsonValue } from "./json.ts";
import { toBulkFilter, toBulkOptions, type BulkResult } from "../control/bulkOperation.ts";
import { toRunListQuery, type RunFilter, type RunListPage, type RunListQuery } from "../storage/runQuery.ts";
import { checkReason, receivedEventPayload } from "../control/runControl.ts";
import { checkId } from "../execution/createRun.ts";
import { refuseUnknownKeys } from "../../core/unknownKeys.ts";
import { DEFAULT_PRIORITY } from "../flow/flowControl.ts";
import { isLiveStatus } from "../storage/store.ts";
import type { StrandedRuns, WorkflowShape } from "../../contracts/workflowShapes.ts";
import { cronIsDue } from "../../core/cronSchedule.ts";
import { scheduleCronName } from "../../contracts/workflowSchedules.ts";
import { scheduledStartAt, type ScheduledStart } from "./workflowSchedule.ts";
import type { StreamBatch } from "../streams/liveRunStream.ts";
import type { StreamMessage } from "../streams/runStream.ts";
import { subscribeToRun } from "../streams/runSubscription.ts";
import { checkStreamLinkOptions, type StreamLinkIssuer } from "../streams/streamLink.ts";

/**
 * The user-facing `workflow` function of the `platform` module: a registry of
 * definitions plus `start/get/list`, which delegate to whichever backend the
 * runtime installed (Durable Objects when deployed, node:sqlite or memory
 * locally). Pure: no platform imports, module state is the registry, the
 * backend and the cron registrar, all resettable for tests. Registers the
 * recovery cron and one cron per scheduled workflow (workflowSchedule.ts).
 */

/** Registered through the injected registrar on the first `workflow()` call; it runs every minute. */
export const WORKFLOW_RECOVERY_CRON = Object.freeze({ name: "__workflow-recovery", schedule: "* * * * *" });

/** How often `run.result()` asks a backend without `waitForTerminal`: every second. */
export const RESULT_POLL_INTERVAL_MS = 1000;

export interface StartedRun {
  runId: string;
  workflowId: string;
  created: boolean;
  /**
   * Set by a backend whose run had already ended when `start` answered (its
   * steps needed no I/O): `result()` settles from it without asking again.
   */
  outcome?: RunOutcome;
}

/** What a backend's `start` is told besides the name and data. */
export interface BackendStartOptions {
  id?: string;
  once?: boolean;
  /** `workflow.start`'s idempotency key and its window (see createRun.ts). */
  idempotency?: { key: string; ttlMS: number };
  /** Among its flow key's queued runs, a higher one starts first (flowControl.ts); absent: the default, 5. */
  priority?: number;
}

/** What a runtime backend provides; installed with {@link installWorkflowBackend}. */
export interface WorkflowBackend {
  /**
   * Creates the run and enqueues its execution; `created: false` with the active run when the id is taken.
   * With `once` (scheduled starts; `id` required) the id names at most one run ever: `created: false`
   * with that run, ended or not (see `once` in createRun.ts).
   */
  start(name: string, data: JsonValue, options: BackendStartOptions): Promise<StartedRun>;
  get(runId: string): Promise<WorkflowRunView | null>;
  list(query: RunListQuery): Promise<RunListPage>;
  /** Optional: resolves with the run's view once it is terminal, faster than polling `get`. */
  waitForTerminal?(runId: string): Promise<WorkflowRunView>;
  /**
   * Appends event_received and wakes the run; `not_found`, `conflict` (finished run). With `callbackId`
   * (a callback URL's POST) the event spends it: `conflict` if it was spent (appendCallbackEvent).
   */
  send(runId: string, name: string, payload: JsonValue, callbackId?: string): Promise<void>;
  /**
   * Start-or-send (sendOrStart.ts): the event to the active run of `workflowId`, or a new run of
   * `start.name` with that id whose first event it is; atomic per workflow id.
   */
  sendOrStart(
    workflowId: string,
    event: { name: string; payload: JsonValue },
    start: { name: string; data: JsonValue },
  ): Promise<StartedRun>;
  /** Appends workflow_cancelled and answers the run's view; `not_found`, `conflict` (finished run). */
  cancel(runId: string, reason: string | undefined): Promise<WorkflowRunView>;
  /** Appends workflow_paused and answers the run's view; `not_found`, `conflict` (finished or paused). */
  pause(runId: string, reason: string | undefined): Promise<WorkflowRunView>;
  /** Appends workflow_resumed, drives the run and answers its view; `not_found`, `conflict` (not paused). */
  resume(runId: string): Promise<WorkflowRunView>;
  /**
   * A new run of a finished one with the same data (from `fromStep`: see planRerun);
   * `not_found`, `conflict` (not finished), `invalid_input` (a step the code or the run lacks).
   */
  rerun(runId: string, options: { fromStep?: string }): Promise<StartedRun & { name: string }>;
  /** How many runs the (checked) filter matches, all of them (what a bulk operation would act on). */
  countRuns(filter: RunFilter): Promise<number>;
  /** Cancels every live run the (checked, non-empty) filter matches, durably, in batches. */
  cancelMany(filter: RunFilter, options: { reason?: string }): Promise<BulkResult>;
  /** Reruns every finished run the filter matches, durably, in batches. */
  rerunMany(filter: RunFilter, options: { fromStep?: string }): Promise<BulkResult>;
  /** The stranded-runs check: the live runs code with these workflows would strand. */
  findStrandedRuns(workflows: readonly WorkflowShape[]): Promise<StrandedRuns>;
  /** One batch of a run's stream (liveRunStream.ts); `not_found` for an unknown run. Without it `workflow.subscribe` refuses. */
  readStream?(runId: string, query: { from: number; topics?: string[] }): Promise<StreamBatch>;
}

/**
 * The handle `workflow.start` returns. `Result` is the workflow's result type when it was started with
 * the definition `workflow<Data, Pad, Result>(…)` returned; `any` when started by name.
 * @example
 * const run: WorkflowRun = await workflow.start("greet", { name: "Ada" });
 * console.log(run.id, run.created, await run.result());
 */
// biome-ignore lint/suspicious/noExplicitAny: public default: a run's result is user JSON read without declaring a type
export interface WorkflowRun<Result = any> {
  readonly id: string;
  readonly workflowId: string;
  readonly name: string;
  /** False when an active run with the same workflow id existed and this is that run. */
  readonly created: boolean;
  /**
   * Resolves with the run's result; rejects with PlatformError("workflow_failed") whose message is the failure
   * reason (and whose `cause` is the failing step's error as it was thrown: name, message,
   * stack, causes), or PlatformError("cancelled") when the run was cancelled.
   * @example
   * try { console.log(await run.result()); } catch (error) { console.error(error.message, error.cause); }
   */
  result<T = Result>(): Promise<T>;
}

/**
 * `workflow.list`'s filter (all but `name` and `status`):
 * every field given must hold. Newest first; `since`/`until` are epoch ms on
 * the start time, `step` the run's position, `error` a substring of the
 * failure reason.
 * @example
 * const filter: WorkflowListFilter = { name: "import", status: "failed", since: Date.now() - 86_400_000, limit: 20 };
 * const { runs } = await workflow.list(filter);
 */
export interface WorkflowListFilter extends RunFilter {
  /** 1-100, default 50. */
  limit?: number;
  cursor?: string;
}

/** The start options of `workflow.start`. */
export interface WorkflowStartOptions {
  /** The workflow id: while a run with this id is active, starting again answers that run (`created: false`). */
  id?: string;
  /**
   * A start with the same key within `idempotencyTTLMS` of the first answers the first
   * run (`created: false`), whether it is still active or has ended. Without `id`, the key names the
   * workflow id (`idempotency/<workflow>/<key>`).
   */
  idempotencyKey?: string;
  /** How long the key answers the first run; default 24 hours, at most 30 days. */
  idempotencyTTLMS?: number;
  /**
   * 1-10, default 5: among the queued runs of its flow control key (`concurrency`, `throttle`), a
   * higher priority starts first; arrival order within a priority. No effect on a run that starts at once.
   */
  priority?: number;
}

/** Idempotency keys: the default window and the longest one. */
export const IDEMPOTENCY_DEFAULTS = Object.freeze({ ttlMS: 86_400_000, maxTTLMS: 30 * 86_400_000, maxKeyLength: 256 });

export interface WorkflowFunction {
  /**
   * Registers a workflow at top level; its first step must be named `start`. The type parameters type
   * `ctx.data` (the start data), `ctx.scratchpad` / `ctx.write` and the result a step ends with; the
   * returned definition carries them to `workflow.start(definition, data)` and `testWorkflow`.
   * @example
   * workflow("greet", {
   *   start: async (ctx) => { ctx.write("n", 1); return { step: "finish" }; },
   *   finish: async (ctx) => ({ done: true, result: { hello: ctx.data.name } }),
   * }, { maxAttempts: 3 });
   */
  // biome-ignore lint/suspicious/noExplicitAny: public defaults, as StepContext's
  <Data = any, Pad extends object = Record<string, any>, Result = any>(
    name: string,
    steps: WorkflowSteps<Data, Pad, Result>,
    options?: WorkflowOptions,
  ): WorkflowDefinition<Data, Pad, Result>;
  /**
   * Starts a run by name: data and result are untyped.
   * @example
   * const run = await workflow.start("greet", { name: "Ada" }, { id: "order-42" });
   * if (!run.created) console.log("already running:", run.id);
   * const result = await run.result();
   */
  start(name: string, data?: unknown, options?: WorkflowStartOptions): Promise<WorkflowRun>;
  /**
   * Starts a run of the definition `workflow(…)` returned: the data is checked and `run.result()` typed.
   * @example
   * const greet = workflow<{ name: string }, {}, string>("greet", { start: async (ctx) => ({ done: true, result: ctx.data.name }) });
   * const name: string = await (await workflow.start(greet, { name: "Ada" })).result();
   */
  start<Data, Result>(
    workflow: WorkflowDefinition<Data, object, Result>,
    data: Data,
    options?: WorkflowStartOptions,
  ): Promise<WorkflowRun<Result>>;
  /**
   * A run's status, result or error, position and every event; null for an unknown run.
   * @example
   * const run = await workflow.get(runId);
   * if (run?.status === "failed") console.log(run.error, run.rolledBack);
   */
  get(runId: string): Promise<WorkflowRunView | null>;
  /**
   * Waits for a run of this project to end and answers how: `{ runId, status, result? | error? }`
   * (`error` is the failure reason or the cancel reason); null when `timeoutMS` passes first. The
   * run's actor says when it ends: the caller does not poll. Rejects with `not_found` for an unknown run.
   * @example
   * const ended = await workflow.result(runId, { timeoutMS: 60_000 });
   * if (ended?.status === "completed") return Response.json(ended.result);
   */
  result(runId: string, options?: { timeoutMS?: number }): Promise<AwaitedRun | null>;
  /**
   * Runs newest first, filtered; pass `cursor` back for the next page.
   * @example
   * const { runs, cursor } = await workflow.list({ name: "greet", status: "failed", limit: 20 });
   */
  list(filter?: WorkflowListFilter): Promise<RunListPage>;
  /**
   * Sends an event to a run (JSON payload, at most 1 MiB). A step that returned
   * `{ step, waitFor: name }` makes the next step run with it as `ctx.event`; an event sent before
   * the run waits for it is kept until it does. Rejects with `not_found` or `conflict` (finished run).
   * @example
   * // in a step: return { step: "approved", waitFor: "approval", timeoutMS: 3_600_000 };
   * await workflow.send(runId, "approval", { by: "ada" });
   */
  send(runId: string, name: string, payload?: unknown): Promise<void>;
  /**
   * Start-or-send: delivers the event to the run holding `workflowId` if one is active (of any
   * workflow), else starts `start.name` with that id and `start.data` and delivers the event as the
   * new run's first event_received, atomically: two concurrent calls never start two runs. Answers
   * the run that got the event and whether this call created it. A workflow with flow control
   * (concurrency, throttle, debounce) cannot be started this way: its key's queue decides when its
   * runs start.
   * @example
   * const { runId, created } = await workflow.send("cart-42", "item_added", { sku: "A1" }, {
   *   start: { name: "cart", data: { cartId: 42 } },
   * });
   */
  send(
    workflowId: string,
    name: string,
    payload: unknown,
    options: { start: { name: string; data?: unknown } },
  ): Promise<{ runId: string; created: boolean }>;
  /**
   * Ends a run with workflow_cancelled (a step in flight may finish; its result is
   * dropped) and resolves with its view. Rejects with `not_found` or `conflict` (finished run).
   * @example
   * await workflow.cancel(runId, "the customer cancelled the order");
   */
  cancel(runId: string, reason?: string): Promise<WorkflowRunView>;
  /**
   * Pauses a run: it claims no new step (a step in flight finishes and is committed);
   * sleeps, waits' timeouts and retries that fall due meanwhile take effect on resume. Status `paused`.
   * A parent `waiting` for its children may be paused: they go on, and their ends are recorded.
   * Rejects with `not_found`, or `conflict` for a finished, paused or queued run.
   * @example
   * await workflow.pause(runId, "waiting for the payment provider's incident to end");
   */
  pause(runId: string, reason?: string): Promise<WorkflowRunView>;
  /**
   * Resumes a paused run: `running`, or `waiting` again for a parent whose children have not all ended
   * (if they have, it claims its next step). Rejects with `not_found`, or `conflict` when it is not paused.
   * @example
   * await workflow.resume(runId);
   */
  resume(runId: string): Promise<WorkflowRunView>;
  /**
   * Starts a new run of a finished run's workflow with the same data. With `fromStep`,
   * its log begins with the original's completed steps before that step (their writes: the scratchpad is
   * as it was) and it goes on by claiming `fromStep`. Its workflow_created records `rerunOf`. Rejects with
   * `conflict` while the original is live.
   * @example
   * const again = await workflow.rerun(failedRunId, { fromStep: "charge" });
   */
  rerun(runId: string, options?: { fromStep?: string }): Promise<WorkflowRun>;
  /**
   * Cancels every run the filter matches (an empty filter is refused; at most 10,000
   * runs), durably and in batches; `affected` counts those it cancelled (not those that ended meanwhile).
   * @example
   * const { matched, affected } = await workflow.cancelMany({ name: "import", status: "queued" }, { reason: "bad file" });
   */
  cancelMany(filter: RunFilter, options?: { reason?: string }): Promise<BulkResult>;
  /**
   * Reruns every finished run the filter matches (as `rerun`, optionally from a step).
   * @example
   * await workflow.rerunMany({ name: "import", status: "failed", error: "timeout" }, { fromStep: "load" });
   */
  rerunMany(filter: RunFilter, options?: { fromStep?: string }): Promise<BulkResult>;
  /**
   * The run's live stream (`ctx.publish` and the lifecycle on topic `run`): its messages in offset
   * order from `from` (default 0), only `topics` when given, ending after its last message once the
   * run has ended. Rejects (on the first read) with `not_found` for an unknown run.
   * @example
   * for await (const message of workflow.subscribe(runId, { topics: ["progress"] })) console.log(message.data);
   */
  subscribe(runId: string, options?: { from?: number; topics?: readonly string[] }): AsyncIterable<StreamMessage>;
  /**
   * A URL on the project's origin that serves the run's stream as `text/event-stream` to whoever
   * holds it (a browser's `EventSource`, no session): only `topics` when given, for `ttlMS`
   * (default 1 hour, at most 24). Rejects with `not_found` for an unknown run.
   * @example
   * const url = await workflow.streamURL(run.id, { topics: ["progress"], ttlMS: 600_000 });
   * // in the page: new EventSource(url).addEventListener("progress", (e) => show(JSON.parse(e.data)));
   */
  streamURL(runId: string, options?: { topics?: readonly string[]; ttlMS?: number }): Promise<string>;
}

/** A cron the engine needs run: the recovery sweep, or a schedule's, which names the workflow each tick starts. */
export interface EngineCron {
  name: string;
  schedule: string;
  /** A schedule's IANA zone; absent: UTC. */
  timezone?: string;
  /** A schedule's workflow: each delivery starts its run for the tick ({@link startScheduledRun}). */
  workflow?: string;
}

export type CronRegistrar = (cron: EngineCron) => void;

/** What one delivery of a schedule's cron did. */
export interface ScheduledRunOutcome extends ScheduledStart {
  run: StartedRun;
}

const definitions = new Map<string, WorkflowDefinition>();
let backend: WorkflowBackend | null = null;
let cronRegistrar: CronRegistrar | null = null;
let recoveryCronRegistered = false;
/** Names of the workflows whose schedule's cron the current registrar has. */
const scheduleCronsRegistered = new Set<string>();

function registerWorkflow(name: string, steps: WorkflowSteps, options?: WorkflowOptions): WorkflowDefinition {
  const definition = defineWorkflow(name, steps, options);
  if (definitions.has(name))
    throw new PlatformError(
      "invalid_input",
      `A workflow named "${name}" is already registered; workflow names must be unique`,
    );
  definitions.set(name, definition);
  registerEngineCrons();
  return definition;
}

async function start(
  workflow: string | WorkflowDefinition,
  data?: unknown,
  options: WorkflowStartOptions = {},
): Promise<WorkflowRun> {
  const active = requireBackend("workflow.start");
  const name = typeof workflow === "object" && workflow !== null ? workflow.name : workflow;
  if (typeof name !== "string" || !definitions.has(name)) {
    const known = [...definitions.keys()];
    throw new PlatformError(
      "unknown_workflow",
      `No workflow named ${JSON.stringify(name)} is registered${known.length ? ` (registered: ${known.join(", ")})` : ""}; call workflow(name, steps) at top level first`,
    );
  }
  const startOptions = backendStartOptions(name, options);
  // Checked here too so a remote backend never sees unstorable data.
  const json = toJsonValue(data === undefined ? null : data, `start data of workflow "${name}"`);
  const started = await active.start(name, json, startOptions);
  return runHandle(active, name, started);
}

async function sendOrStart(
  workflowId: string,
  name: string,
  payload: unknown,
  options: unknown,
): Promise<{ runId: string; created: boolean }> {
  const active = requireBackend("workflow.send");
  const where = "workflow.send(workflowId, event, payload, { start })";
  if (typeof options !== "object" || options === null || Array.isArray(options))
    throw new PlatformError("invalid_input", `${where}: the options must be an object { start: { name, data } }`);
  refuseUnknownKeys(options, ["start"], `${where} options`);
  const { start } = options as { start?: unknown };
  if (typeof start !== "object" || start === null || Array.isArray(start))
    throw new PlatformError("invalid_input", `${where}: start must be an object { name, data? }`);
  refuseUnknownKeys(start, ["name", "data"], `${where} start`);
  const { name: workflowName, data } = start as { name?: unknown; data?: unknown };
  const definition = typeof workflowName === "string" ? definitions.get(workflowName) : undefined;
  if (!definition) {
    throw new PlatformError(
      "unknown_workflow",
      `${where}: no workflow named ${JSON.stringify(workflowName)} is registered${definitions.size ? ` (registered: ${[...definitions.keys()].join(", ")})` : ""}`,
    );
  }
  checkId(workflowId, "workflow id");
  const event = receivedEventPayload(name, payload);
  const json = toJsonValue(data === undefined ? null : data, `start data of workflow "${definition.name}"`);
  const started = await active.sendOrStart(workflowId, event, { name: definition.name, data: json });
  return { runId: started.runId, created: started.created };
}

async function result(runId: string, options: { timeoutMS?: number } = {}): Promise<AwaitedRun | null> {
  const active = requireBackend("workflow.result");
  checkRunId(runId, "workflow.result");
  if (typeof options !== "object" || options === null)
    throw new PlatformError("invalid_input", "workflow.result options must be an object like { timeoutMS: 60000 }");
  refuseUnknownKeys(options, ["timeoutMS"], "workflow.result options");
  const { timeoutMS } = options;
  if (timeoutMS !== undefined && (!Number.isInteger(timeoutMS) || timeoutMS < 0 || timeoutMS > MAX_WAIT_MS))
    throw new PlatformError(
      "invalid_input",
      `workflow.result option timeoutMS must be a whole number of milliseconds from 0 to ${MAX_WAIT_MS} (a year), got ${JSON.stringify(timeoutMS)}`,
    );
  const ended = active.waitForTerminal ? active.waitForTerminal(runId) : pollUntilTerminal(active, runId);
  if (timeoutMS === undefined) return awaitedRunOf(await ended);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMS);
  });
  try {
    const view = await Promise.race([ended, timedOut]);
    return view && awaitedRunOf(view);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

async function get(runId: string): Promise<WorkflowRunView | null> {
  const active = requireBackend("workflow.get");
  checkRunId(runId, "workflow.get");
  return active.get(runId);
}

async function list(filter: WorkflowListFilter = {}): Promise<RunListPage> {
  const active = requireBackend("workflow.list");
  return active.list(toRunListQuery(filter));
}

async function pause(runId: string, reason?: string): Promise<WorkflowRunView> {
  const active = requireBackend("workflow.pause");
  checkRunId(runId, "workflow.pause");
  checkReason(reason, "pause");
  return active.pause(runId, reason);
}

async function resume(runId: string): Promise<WorkflowRunView> {
  const active = requireBackend("workflow.resume");
  checkRunId(runId, "workflow.resume");
  return active.resume(runId);
}

async function rerun(runId: string, options: { fromStep?: string } = {}): Promise<WorkflowRun> {
  const active = requireBackend("workflow.rerun");
  checkRunId(runId, "workflow.rerun");
  const { name, ...started } = await active.rerun(runId, toBulkOptions("rerun", options, "workflow.rerun"));
  return runHandle(active, name, started);
}

async function cancelMany(filter: RunFilter, options: { reason?: string } = {}): Promise<BulkResult> {
  const active = requireBackend("workflow.cancelMany");
  const checked = toBulkFilter(filter, "workflow.cancelMany");
  return active.cancelMany(checked, toBulkOptions("cancel", options, "workflow.cancelMany"));
}

async function rerunMany(filter: RunFilter, options: { fromStep?: string } = {}): Promise<BulkResult> {
  const active = requireBackend("workflow.rerunMany");
  const checked = toBulkFilter(filter, "workflow.rerunMany");
  return active.rerunMany(checked, toBulkOptions("rerun", options, "workflow.rerunMany"));
}

async function send(
  runId: string,
  name: string,
  payload?: unknown,
  options?: { start: { name: string; data?: unknown } },
  // biome-ignore lint/suspicious/noConfusingVoidType: the overloads answer void without `start`
): Promise<void | { runId: string; created: boolean }> {
  if (options !== undefined) return sendOrStart(runId, name, payload, options);
  const active = requireBackend("workflow.send");
  checkRunId(runId, "workflow.send");
  checkEventName(name, "workflow.send: the event name");
  // Checked here too so a remote backend never sees an unstorable payload.
  const json = toJsonValue(payload === undefined ? null : payload, `payload of event "${name}"`);
  encodePayload({ name, payload: json }, `The payload of event "${name}"`);
  await active.send(runId, name, json);
}

async function cancel(runId: string, reason?: string): Promise<WorkflowRunView> {
  const active = requireBackend("workflow.cancel");
  checkRunId(runId, "workflow.cancel");
  checkReason(reason, "cancel");
  return active.cancel(runId, reason);
}

/**
 * Checks `workflow.start`'s options (also as the CLI's start routes receive them) and answers what the
 * backend is told: an idempotent start without an id gets the workflow id `idempotency/<workflow>/<key>`.
 * Throws `invalid_input` naming the bad option.
 */
export function backendStartOptions(name: string, options: unknown): BackendStartOptions {
  if (typeof options !== "object" || options === null)
    throw new PlatformError("invalid_input", 'workflow.start options must be an object like { id: "order-42" }');
  refuseUnknownKeys(options, START_OPTION_KEYS, "workflow.start options");
  const { id, priority } = options as WorkflowStartOptions;
  if (id !== undefined && typeof id !== "string")
    throw new PlatformError("invalid_input", "workflow.start option id must be a string");
  if (priority !== undefined && (!Number.isInteger(priority) || priority < 1 || priority > 10))
    throw new PlatformError(
      "invalid_input",
      `workflow.start option priority must be an integer from 1 to 10 (default 5), got ${JSON.stringify(priority)}`,
    );
  const idempotency = idempotencyOf(options as WorkflowStartOptions);
  const workflowId = id ?? (idempotency ? `idempotency/${name}/${idempotency.key}` : undefined);
  return {
    ...(workflowId === undefined ? {} : { id: workflowId }),
    ...(idempotency ? { idempotency } : {}),
    ...(priority === undefined || priority === DEFAULT_PRIORITY ? {} : { priority }),
  };
}

const START_OPTION_KEYS = [
  "id",
  "idempotencyKey",
  "idempotencyTTLMS",
  "priority",
] as const satisfies readonly (keyof WorkflowStartOptions)[];

function idempotencyOf(options: WorkflowStartOptions): { key: string; ttlMS: number } | undefined {
  const { idempotencyKey: key, idempotencyTTLMS: ttlMS = IDEMPOTENCY_DEFAULTS.ttlMS } = options;
  if (key === undefined) {
    if (options.idempotencyTTLMS !== undefined)
      throw new PlatformError("invalid_input", "workflow.start option idempotencyTTLMS needs an idempotencyKey");
    return undefined;
  }
  if (
    typeof key !== "string" ||
    key.length === 0 ||
    key.length > IDEMPOTENCY_DEFAULTS.maxKeyLength ||
    /[\u0000-\u001f\u007f]/.test(key)
  )
    throw new PlatformError(
      "invalid_input",
      `workflow.start option idempotencyKey must be a string of 1-${IDEMPOTENCY_DEFAULTS.maxKeyLength} characters without control characters`,
    );
  if (!Number.isInteger(ttlMS) || ttlMS < 1 || ttlMS > IDEMPOTENCY_DEFAULTS.maxTTLMS)
    throw new PlatformError(
      "invalid_input",
      `workflow.start option idempotencyTTLMS must be a whole number of milliseconds from 1 to ${IDEMPOTENCY_DEFAULTS.maxTTLMS} (30 days), got ${String(ttlMS)}`,
    );
  return { key, ttlMS };
}

function checkRunId(runId: unknown, what: string): void {
  if (typeof runId !== "string" || runId === "")
    throw new PlatformError("invalid_input", `${what} needs a run id string`);
}

/**
 * Durable workflows: `workflow(name, steps, options)` registers one (top level), `workflow.start`
 * runs it, `workflow.get`, `.list`, `.send`, `.cancel`, … act on runs. Each method's own doc has an example.
 * @example
 * const greet = workflow("greet", {
 *   start: async (ctx) => ({ done: true, result: `hello ${ctx.data.name}` }),
 * });
 * const run = await workflow.start(greet, { name: "Ada" });
 * console.log(await run.result());
 */
export const workflow: WorkflowFunction = Object.assign(registerWorkflow, {
  start,
  get,
  result,
  list,
  send: send as WorkflowFunction["send"],
  cancel,
  pause,
  resume,
  rerun,
  cancelMany,
  rerunMany,
  subscribe,
  streamURL,
});

let streamLinkIssuer: StreamLinkIssuer | null = null;

/** The runtime says how stream URLs are signed and where they point (runtime/workflow/streamLinks.ts). */
export function setStreamLinkIssuer(issuer: StreamLinkIssuer | null): void {
  streamLinkIssuer = issuer;
}

async function streamURL(runId: string, options?: { topics?: readonly string[]; ttlMS?: number }): Promise<string> {
  const grant = checkStreamLinkOptions(runId, options);
  const active = requireBackend("workflow.streamURL");
  if (!(await active.get(runId))) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
  if (!streamLinkIssuer)
    throw new PlatformError(
      "not_ready",
      "workflow.streamURL: this runtime serves no stream URLs (run the project with platform dev or deploy it)",
    );
  return streamLinkIssuer(grant);
}

function subscribe(
  runId: string,
  options?: { from?: number; topics?: readonly string[] },
): AsyncIterable<StreamMessage> {
  const active = requireBackend("workflow.subscribe");
  const read = active.readStream?.bind(active);
  if (!read) throw new PlatformError("not_ready", "workflow.subscribe: this workflow backend keeps no run streams");
  return subscribeToRun((query) => read(runId, query), runId, options);
}

function runHandle(from: WorkflowBackend, name: string, started: StartedRun): WorkflowRun {
  return Object.freeze({
    id: started.runId,
    workflowId: started.workflowId,
    name,
    created: started.created,
    result: <T>() =>
      (started.outcome
        ? settleRunOutcome(started.runId, started.outcome)
        : waitForResult(from, started.runId)) as Promise<T>,
  });
}

async function waitForResult(from: WorkflowBackend, runId: string): Promise<JsonValue> {
  const view = from.waitForTerminal ? await from.waitForTerminal(runId) : await pollUntilTerminal(from, runId);
  return settleRunOutcome(runId, outcomeOfView(view));
}

/** What `run.result()` settles with for a finished run: its result, or the rejection (a failed step's error as `cause`). */
export async function settleRunOutcome(runId: string, outcome: RunOutcome): Promise<JsonValue> {
  if (outcome.status === "completed") return outcome.result;
  if (outcome.status === "cancelled")
    throw new PlatformError("cancelled", `Workflow run "${runId}" was cancelled: ${outcome.reason}`, {
      runId,
      reason: outcome.reason,
    });
  throw new PlatformError(
    "workflow_failed",
    outcome.error ?? `Workflow run "${runId}" failed`,
    { runId, cause: outcome.cause },
    outcome.stepError === undefined ? undefined : { cause: errorFromJSON(outcome.stepError) },
  );
}

async function pollUntilTerminal(from: WorkflowBackend, runId: string): Promise<WorkflowRunView> {
  for (;;) {
    const view = await from.get(runId);
    if (!view) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
    if (!isLiveStatus(view.status)) return view;
    await new Promise((resolve) => setTimeout(resolve, RESULT_POLL_INTERVAL_MS));
  }
}

function requireBackend(what: string): WorkflowBackend {
  if (!backend) {
    throw new PlatformError(
      "not_ready",
      `${what} is not available yet: the workflow engine starts with the platform runtime. Call it from a request, cron or step handler, not at the top level of your module.`,
    );
  }
  return backend;
}

function registerEngineCrons(): void {
  if (!cronRegistrar || definitions.size === 0) return;
  if (!recoveryCronRegistered) {
    cronRegistrar({ ...WORKFLOW_RECOVERY_CRON });
    recoveryCronRegistered = true;
  }
  for (const { name, schedule } of definitions.values()) {
    if (!schedule || scheduleCronsRegistered.has(name)) continue;
    cronRegistrar({
      name: scheduleCronName(name),
      schedule: schedule.cron,
      timezone: schedule.timezone,
      workflow: name,
    });
    scheduleCronsRegistered.add(name);
  }
}

/**
 * One delivery of `name`'s schedule at `deliveredAt` (epoch ms; the platform passes the minute it
 * scheduled): starts the run for the tick it belongs to, unless a run for that tick was ever started
 * (then `run.created` is false and `run` is that run). Null when the schedule has had no tick yet.
 * Throws `unknown_workflow` for a workflow that is not registered with a schedule.
 */
export async function startScheduledRun(
  name: string,
  deliveredAt: number,
  from: WorkflowBackend = requireBackend("A scheduled start"),
): Promise<ScheduledRunOutcome | null> {
  const schedule = definitions.get(name)?.schedule;
  if (!schedule)
    throw new PlatformError(
      "unknown_workflow",
      `No workflow named ${JSON.stringify(name)} is registered with a schedule`,
    );
  const start = scheduledStartAt(name, schedule, deliveredAt);
  if (!start) return null;
  const run = await from.start(name, { ...start.data }, { id: start.workflowId, once: true });
  return { ...start, run };
}

/** What a schedule's cron reports for one delivery (the console and `platform dev` show it). */
export function describeScheduledRun(name: string, outcome: ScheduledRunOutcome | null): string {
  if (!outcome) return `${name}: no tick yet`;
  return outcome.run.created
    ? `Started run ${outcome.run.runId} of ${name} for ${outcome.data.scheduledAt} (workflow id ${outcome.workflowId})`
    : `The run of ${name} for ${outcome.data.scheduledAt} was already started: run ${outcome.run.runId}`;
}

/**
 * The platform's minute tick where no scheduler calls the crons (the Node host): starts the run of
 * every scheduled workflow due in the minute of `scheduledTime`. Answers one line per due schedule;
 * a start that fails is reported in its line and the others go on.
 */
export async function startDueScheduledRuns(from: WorkflowBackend, scheduledTime: number): Promise<string[]> {
  const due = [...definitions.values()].filter((d) => d.schedule && cronIsDue(d.schedule, scheduledTime));
  return Promise.all(
    due.map(async ({ name }) => {
      try {
        return describeScheduledRun(name, await startScheduledRun(name, scheduledTime, from));
      } catch (error) {
        return `${name}: the scheduled start failed: ${error instanceof Error ? error.message : String(error)}`;
      }
    }),
  );
}

/**
 * The runtime installs its backend (entry wrapper, Node backend); installing the same one again changes nothing.
 * @example
 * import { createNodeWorkflowBackend, installWorkflowBackend } from "platform/node";
 * installWorkflowBackend(createNodeWorkflowBackend({ path: ":memory:" }));
 */
export function installWorkflowBackend(next: WorkflowBackend): void {
  backend = next;
}

/** The backend `workflow.start/get/list` use now, or null before initialization. */
export function installedWorkflowBackend(): WorkflowBackend | null {
  return backend;
}

/**
 * Injected by the runtime's workflow capability, which user code imports
 * before it can call `workflow()`. If workflows were registered earlier (e.g.
 * a test importing the engine directly first), the recovery cron and their
 * schedules' crons are registered with this registrar at once.
 */
export function setCronRegistrar(registrar: CronRegistrar | null): void {
  if (registrar !== cronRegistrar) {
    recoveryCronRegistered = false;
    scheduleCronsRegistered.clear();
  }
  cronRegistrar = registrar;
  registerEngineCrons();
}

export function getWorkflowDefinition(name: string): WorkflowDefinition | undefined {
  return definitions.get(name);
}

/** Every registered definition, in registration order (for build metadata). */
export function workflowDefinitions(): WorkflowDefinition[] {
  return [...definitions.values()];
}

/**
 * Forgets the registered workflows and the backend but keeps the cron registrar: the runtime's
 * capability installs it once per module graph, and a test runner that shares one graph between
 * test files (`isolate: false`) calls this after each file so the next sees no workflow of it.
 */
export function forgetWorkflowRegistrations(): void {
  definitions.clear();
  backend = null;
  recoveryCronRegistered = false;
  scheduleCronsRegistered.clear();
}

/** Forgets registrations, backend and registrar. Tests only. */
export function resetWorkflowsForTests(): void {
  forgetWorkflowRegistrations();
  cronRegistrar = null;
}
