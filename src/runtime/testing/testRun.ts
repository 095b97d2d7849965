import { PlatformError } from "../../core/errors.ts";
import {
  activeChildrenOf,
  type ChildRunPort,
  childReportOf,
  childDepthOf,
  createChildRun,
  recordChildFinished,
} from "../../engine/control/children.ts";
import type { ChildRef } from "../../engine/execution/continuation.ts";
import { createRun } from "../../engine/execution/createRun.ts";
import { sendOrStartRun } from "../../engine/control/sendOrStart.ts";
import type { WorkflowDefinition } from "../../engine/api/definition.ts";
import { awaitedRunOf, describeRun, outcomeOfView, type WorkflowRunView } from "../../engine/execution/describeRun.ts";
import { type AwaitRunPort, executeRun } from "../../engine/execution/executeRun.ts";
import type { JsonValue } from "../../engine/api/json.ts";
import type { MemoryEventStore } from "../../engine/storage/memoryEventStore.ts";
import type { RerunPlan } from "../../engine/control/rerun.ts";
import {
  appendCallbackEvent,
  appendReceivedEvent,
  cancelRun,
  deliverRunEnded,
  pauseRun,
  resumeRun,
  watchRunEnd,
} from "../../engine/control/runControl.ts";
import { getWorkflowDefinition, settleRunOutcome } from "../../engine/api/workflowApi.ts";
import { childRunIdOn, unplacedRunId } from "../../objects/runIds.ts";
import { hex } from "../../core/crypto/encoding.ts";
import { createRecording, type TestRun } from "./testRecords.ts";
import { createLiveRunStream, type LiveRunStream } from "../../engine/streams/liveRunStream.ts";
import { createMemoryRunStream } from "../../engine/streams/memoryRunStream.ts";
import { inNestedTestScope } from "./testScope.ts";
import { readTestCallback, testCallbackLinks } from "./testCallbacks.ts";

export interface DriveOptions {
  store: MemoryEventStore;
  /** The virtual clock's start (epoch ms). */
  startAt: number;
  /** The run's workflow id; default: its run id. */
  id?: string;
  /** The run is a rerun (`workflow.rerun`). */
  rerun?: RerunPlan;
  /** The project's variables its steps read as `ctx.env`. */
  env?: Readonly<Record<string, string>>;
  /** Start-or-send: the event the run is created with, as its first event_received (sendOrStart.ts). */
  firstEvent?: { name: string; payload: JsonValue };
  /** `workflow.start`'s idempotency key and window: the engine's createRun answers the keyed run. */
  idempotency?: { key: string; ttlMS: number };
}

/**
 * Creates a run in `store` and drives it on a virtual clock until it is
 * finished or waits for an event. Answers `created: false` with the active
 * run's id when the workflow id is taken (the caller holds its handle).
 */
export async function driveRun(
  definition: WorkflowDefinition,
  data: unknown,
  { store, startAt, id, rerun, env, idempotency, firstEvent }: DriveOptions,
): Promise<{ created: true; run: TestRun } | { created: false; runId: string }> {
  const options = {
    runId: unplacedRunId(),
    workflowId: id,
    now: startAt,
    ...(rerun ? { rerun } : {}),
    ...(idempotency ? { idempotency } : {}),
  };
  const startData = data === undefined ? null : data;
  const created = firstEvent
    ? sendOrStartRun(store, definition, { event: firstEvent, data: startData, runOptions: options })
    : createRun(store, definition, startData, options);
  if (!created.created) return { created: false, runId: created.runId };
  const driver = createDriver(definition, store, created.runId, created.workflowId, startAt, env);
  await driver.settle();
  return { created: true, run: driver.run };
}

/**
 * A child's run id as the platform names it: its actor's id (one per workflow id, as `idFromName`
 * gives it) and a suffix from its key, so starting it again names the same run.
 */
async function childRunIdIn(workflowId: string, key: string): Promise<string> {
  const actorHex = hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(workflowId)));
  return childRunIdOn(actorHex, key);
}

/** One run the kit drives: its handle, and how to run it on (also from its children when they end). */
interface RunDriver {
  readonly run: TestRun;
  settle(): Promise<WorkflowRunView>;
  /** Moves the run's clock to at least `at` (a child ended then). */
  advanceTo(at: number): void;
}

/** The streams of the runs the kit drives, per store (children publish beside their parents). */
const streamsOf = new WeakMap<MemoryEventStore, { live: LiveRunStream }>();

function streamsIn(store: MemoryEventStore): { live: LiveRunStream } {
  let streams = streamsOf.get(store);
  if (!streams) {
    streams = { live: createLiveRunStream(createMemoryRunStream(), store) };
    streamsOf.set(store, streams);
  }
  return streams;
}

/** The runs the kit drives, per store, by run id: a child that ends finds its parent's driver here. */
const driversOf = new WeakMap<MemoryEventStore, Map<string, RunDriver>>();

function createDriver(
  definition: WorkflowDefinition,
  store: MemoryEventStore,
  runId: string,
  workflowId: string,
  startAt: number,
  env: Readonly<Record<string, string>> | undefined,
): RunDriver {
  let clock = startAt;
  const now = () => clock;
  const view = () => describeRun(store.events(runId)) as WorkflowRunView;
  const recording = createRecording();
  const streams = streamsIn(store);
  const drivers = driversOf.get(store) ?? new Map<string, RunDriver>();
  driversOf.set(store, drivers);

  /**
   * Children start at this run's time and are driven at once, as `workflow.start` drives a run (until they
   * end or wait for an event); their handles are in this run's `runs`. One that ends tells this run.
   */
  const children: ChildRunPort = {
    async start(parentRunId, requests) {
      const definitions = requests.map((child) => {
        const known = getWorkflowDefinition(child.workflow);
        if (!known) throw new PlatformError("unknown_workflow", `No workflow named "${child.workflow}" is registered`);
        return known;
      });
      const refs: ChildRef[] = [];
      const childDepth = childDepthOf(store, parentRunId);
      for (const [index, child] of requests.entries()) {
        const definition = definitions[index] as WorkflowDefinition;
        const made = createChildRun(
          store,
          definition,
          {
            runId: await childRunIdIn(child.workflowId, child.key),
            workflowId: child.workflowId,
            data: child.data,
            parentRunId,
            childDepth,
          },
          clock,
        );
        refs.push(made.ref);
        if (!made.created) continue;
        const driver = createDriver(definition, store, made.ref.runId, child.workflowId, clock, env);
        recording.runs.push(driver.run);
        await driver.settle();
      }
      return refs;
    },
    async cancel(runIds, reason) {
      for (const id of runIds) await drivers.get(id)?.run.cancel(reason);
    },
  };

  /** A run waited for (`waitForRun`) is a run of this store: it tells its waiters when it ends. */
  const awaitRun: AwaitRunPort = {
    watch: async (waiterRunId, awaitedRunId) => watchRunEnd(store, awaitedRunId, waiterRunId),
  };

  /** The runs waiting for this one to end are told, and run on. */
  async function tellWatchers(): Promise<void> {
    const ended = awaitedRunOf(view());
    for (const watcher of store.runWatchers(runId)) {
      if (!deliverRunEnded(store, watcher, ended, clock)) continue;
      const waiting = drivers.get(watcher);
      waiting?.advanceTo(clock);
      await waiting?.settle();
    }
  }

  /** A child that ended tells its parent, which runs on once its last child has. */
  async function tellParent(): Promise<void> {
    const report = childReportOf(store.events(runId));
    if (!report) return;
    const parent = drivers.get(report.parentRunId);
    parent?.advanceTo(clock);
    if (recordChildFinished(store, { ...report, now: clock }).allFinished) await parent?.settle();
  }

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
            children,
            awaitRun,
            stream: streams.live,
            callbackLinks: testCallbackLinks,
            onEvent: (event) => streams.live.publishLifecycle(event),
          }),
        env,
      );
      switch (result.status) {
        case "waiting":
          // A wait for an event stops here even with a timeout: the test chooses send, timeOut or cancel.
          if (view().waitingFor || view().waitingForRun) return view();
          clock = Math.max(clock, result.wakeAt);
          continue;
        case "in_flight":
          // Only after a step outlived its stepTimeoutMS: let the engine record the timeout.
          clock = Math.max(clock, result.timeoutAt);
          continue;
        case "budget_exhausted":
          continue;
        case "terminal":
          await tellParent();
          await tellWatchers();
          return view();
        case "idle":
        case "stopped":
        case "paused":
          return view();
      }
    }
  }

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
    get stream() {
      return streams.live.messages(runId, { from: 0, limit: Number.POSITIVE_INFINITY });
    },
    now,
    async send(name, payload) {
      appendReceivedEvent(store, runId, { name, payload }, clock);
      return settle();
    },
    async callback(url, body) {
      const callback = await readTestCallback(url, clock);
      // A URL of another run of this test (a child's, say) delivers there, as on the platform.
      const target = drivers.get(callback.runId);
      if (!target)
        throw new PlatformError(
          "unauthorized",
          "This callback URL is not valid: it was altered or is for another run.",
        );
      if (target !== driver) return target.run.callback(url, body);
      appendCallbackEvent(
        store,
        runId,
        { name: callback.event, payload: body, callbackId: callback.callbackId },
        clock,
      );
      return settle();
    },
    async timeOut() {
      const timeoutAt = view().waitingFor?.timeoutAt ?? view().waitingForRun?.timeoutAt;
      if (timeoutAt === undefined)
        throw new PlatformError(
          "conflict",
          `Workflow run "${runId}" is not waiting for an event or a run with a timeout; there is nothing to time out`,
        );
      clock = Math.max(clock, timeoutAt);
      return settle();
    },
    async cancel(reason) {
      const cancelled = cancelRun(store, { runId, reason, now: clock, definition });
      streams.live.publishLifecycle(cancelled);
      if (cancelled.type === "cancel_requested") await settle();
      await tellParent();
      await tellWatchers();
      await children.cancel(activeChildrenOf(store.events(runId)), `Its parent run "${runId}" was cancelled`);
      return view();
    },
    async pause(reason) {
      pauseRun(store, runId, reason, clock);
      return view();
    },
    async resume() {
      resumeRun(store, runId, clock);
      return settle();
    },
    async result() {
      const current = view();
      if (current.status === "waiting") {
        const counts = current.waitingForChildren;
        throw new PlatformError(
          "conflict",
          `Workflow run "${runId}" is still waiting for its children${counts ? ` (${counts.finished} of ${counts.total} ended)` : ""}; move them on through run.runs, or cancel it first`,
        );
      }
      if (current.status === "paused")
        throw new PlatformError("conflict", `Workflow run "${runId}" is paused; resume it or cancel it first`);
      if (current.status === "running")
        throw new PlatformError(
          "conflict",
          current.waitingForRun
            ? `Workflow run "${runId}" is still running (waiting for run "${current.waitingForRun.runId}" to end); move that run on, time it out or cancel it first`
            : `Workflow run "${runId}" is still running (waiting for "${current.waitingFor?.name}"); send it, time it out or cancel it first`,
        );
      // As `workflow.start(…).result()` settles: a failed step's error (its stack the user's) is the `cause`.
      return settleRunOutcome(runId, outcomeOfView(current)) as never;
    },
  };
  const driver: RunDriver = {
    run,
    settle,
    advanceTo: (at) => {
      clock = Math.max(clock, at);
    },
  };
  drivers.set(runId, driver);
  return driver;
}
