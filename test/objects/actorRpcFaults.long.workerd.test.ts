import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { START_DATA_KEY, type StoredEvent } from "#src/engine/execution/events.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { actorCalls } from "#src/objects/actorClient.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import { sweepStuckRuns } from "#src/runtime/workflow/recoverySweep.ts";
import { actorEnv, actorOfRun } from "#test/support/workerd/workflowActors.ts";
import { faultyActorCalls, type InjectedRpcFaults, logProblems } from "#test/support/workflow/actorRpcFaults.ts";
import { faultSwitch } from "#test/support/workflow/storageFaults.ts";
import { useActorTestHost } from "./WorkflowRun.fixture.ts";

/**
 * The actors under failed RPCs: every call between them (a run's reports to
 * the run index, flow-key gates, parent ↔ child starts and notifications,
 * waitForRun, the runtime's start/send/cancel) may fail before the callee
 * acts or after it acted, by a seeded schedule. Then the faults stop, the
 * recovery sweep runs, and the promises are checked: every acknowledged
 * start has its run, a failed start answered the RPC's error and its run (if
 * it landed) ends as its code says, each step is committed once, one
 * terminal event is last, children's results reach their parents, the index
 * agrees with the runs. The 200 seeds take a minute of the actors' own work,
 * so this file is in `npm run test:long` (CI runs it); each bug the seeds
 * found is one deterministic case in `npm test` (see lastSeed below).
 */
const FAULTED = new Set([
  // the runtime's calls into run actors and flow keys
  "start",
  "send",
  "cancel",
  // a run's reports, parent ↔ child, waitForRun
  "record",
  "childFinished",
  "watchRun",
  "runEnded",
  // a run's flow key and the key's calls back
  "ended",
  "dequeue",
  "status",
]);
/**
 * The seeds run. A seed fixes which calls fail and how, not the actors' timing: run alone, a seed may
 * interleave otherwise. The bugs these seeds found have deterministic tests of their own
 * (test/objects/WorkflowFlowKeyActor.rpcFaults.workerd.test.ts).
 */
const firstSeed = 1;
const lastSeed = 200;
const RETRY = { maxAttempts: 100, backoff: { initialMS: 5, maxMS: 5, jitter: 0 } };

/** What each run ends with when no promise breaks, by workflow (the `events` run by what the test did to it). */
const EXPECTED: Record<string, (data: unknown) => { status: string; result?: unknown }> = {
  "rpc.chain": () => ({ status: "completed", result: 20 }),
  "rpc.child": (n) => ({ status: "completed", result: (n as number) * 10 }),
  "rpc.parent": () => ({ status: "completed", result: 30 }),
  "rpc.waiter": () => ({ status: "completed", result: "completed" }),
  "rpc.keyed": () => ({ status: "completed", result: "keyed" }),
  "rpc.events": (data) => (data === "cancel" ? { status: "cancelled" } : { status: "completed", result: "got it" }),
};

/**
 * A step that waits on a timer: its run ends after its start answered, so its end travels by the
 * calls under test (childFinished, runEnded, the key's dequeue) rather than in the start's answer.
 */
const outliveTheStart = () => new Promise((resolve) => setTimeout(resolve, 2));

function register(): void {
  workflow(
    "rpc.chain",
    {
      start: async (ctx) => {
        ctx.write("a", 1);
        return { step: "b" };
      },
      b: async (ctx) => {
        await outliveTheStart();
        ctx.write("b", (ctx.scratchpad.a as number) + 1);
        return { step: "c" };
      },
      c: async (ctx) => ({ done: true, result: (ctx.scratchpad.b as number) * 10 }),
    },
    RETRY,
  );
  workflow(
    "rpc.child",
    {
      start: async (ctx) => {
        await outliveTheStart();
        return { done: true, result: (ctx.data as number) * 10 };
      },
    },
    RETRY,
  );
  workflow(
    "rpc.parent",
    {
      start: async () => ({
        step: "sum",
        children: [
          { workflow: "rpc.child", data: 1 },
          { workflow: "rpc.child", data: 2 },
        ],
      }),
      sum: async (ctx) => ({
        done: true,
        result: (ctx.children ?? []).reduce((sum, c) => sum + (c.result as number), 0),
      }),
    },
    RETRY,
  );
  workflow(
    "rpc.waiter",
    {
      start: async (ctx) => ({ step: "after", waitForRun: ctx.data as string }),
      after: async (ctx) => ({ done: true, result: ctx.awaited?.status ?? "timed out" }),
    },
    RETRY,
  );
  workflow(
    "rpc.keyed",
    {
      start: async () => {
        await outliveTheStart();
        return { done: true, result: "keyed" };
      },
    },
    { ...RETRY, concurrency: { limit: 1, key: (data: string) => data } },
  );
  workflow(
    "rpc.events",
    {
      start: async () => ({ step: "after", waitFor: "go" }),
      after: async () => ({ done: true, result: "got it" }),
    },
    RETRY,
  );
}

const isEnded = (events: readonly StoredEvent[]) =>
  ["workflow_completed", "workflow_failed", "workflow_cancelled"].includes(events.at(-1)?.type ?? "");

const isInjected = (error: unknown) => error instanceof Error && /\(injected\)/.test(error.message);

/** A caller that repeats a call its RPC lost (at-least-once delivery): until it is answered. */
async function untilAnswered(call: () => Promise<unknown>, alreadyDone: (error: unknown) => boolean): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      await call();
      return;
    } catch (error) {
      if (alreadyDone(error)) return;
      if (!isInjected(error)) throw error;
    }
  }
  throw new Error("50 calls in a row failed");
}

/** Every run one actor holds, with its log, read from the actor's SQLite without calling it. */
function runsOfActor(stub: DurableObjectStub): Promise<{ id: string; name: string; events: StoredEvent[] }[]> {
  return runInDurableObject(stub, (_instance, state) => {
    const store = createSqlEventStore(durableObjectSql(state.storage));
    return store
      .listRuns({ limit: 100 })
      .runs.map((run) => ({ id: run.id, name: run.name, events: store.events(run.id) }));
  });
}

async function runSeed(seed: number, injected: InjectedRpcFaults): Promise<string[]> {
  const faults = faultSwitch(seed, 0.2);
  actorCalls.around = faultyActorCalls(faults, FAULTED, injected);
  const acknowledged = new Map<string, string>();
  const broken: string[] = [];
  /** The actors the seed's runs live in, found by their runs' ids (an unacknowledged start's by its workflow id). */
  const actors = new Map<string, DurableObjectStub>();
  const start = async (name: string, data: unknown, id: string) => {
    actors.set(id, actorEnv.WORKFLOW_RUNS.get(actorEnv.WORKFLOW_RUNS.idFromName(id)));
    try {
      const run = await workflow.start(name, data, { id });
      acknowledged.set(run.id, name);
      return run.id;
    } catch (error) {
      // A start that failed says so with the RPC's error; its run, if it landed, must still end well.
      if (!isInjected(error)) broken.push(`start of ${name} failed with ${String(error)}`);
      return null;
    }
  };
  const prefix = `rpc-${seed}`;
  const flowKey = actorEnv.WORKFLOW_FLOW_KEYS!.get(
    actorEnv.WORKFLOW_FLOW_KEYS!.idFromName(JSON.stringify(["rpc.keyed", `${prefix}-key`])),
  );
  await start("rpc.chain", null, `${prefix}-chain`);
  await start("rpc.parent", null, `${prefix}-parent`);
  const target = await start("rpc.chain", null, `${prefix}-target`);
  if (target) await start("rpc.waiter", target, `${prefix}-waiter`);
  // Together, so the second waits in the key's queue until the first ends (dequeue).
  const keyed = [1, 2].map((i) => `${prefix}-keyed-${i}`);
  await Promise.all(keyed.map((id) => start("rpc.keyed", `${prefix}-key`, id)));
  // A keyed run tells its key it ended (`ended`) as its step loop ends, after its start answered: wait, faults
  // still on, until one has, so that call is made on the faulted path (otherwise it came after the faults).
  for (let poll = 0; poll < 100; poll++) {
    const logs = await Promise.all(keyed.map(async (id) => (await runsOfActor(actors.get(id)!))[0]?.events ?? []));
    if (logs.some(isEnded)) break;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const sent = await start("rpc.events", "send", `${prefix}-send`);
  const cancelled = await start("rpc.events", "cancel", `${prefix}-cancel`);
  const alreadyEnded = (error: unknown) =>
    error instanceof Error && /already|has ended|is cancelled/i.test(error.message);
  if (sent) await untilAnswered(() => workflow.send(sent, "go", null), alreadyEnded);
  if (cancelled) await untilAnswered(() => workflow.cancel(cancelled, "rpc faults"), alreadyEnded);
  // Faults stop; what they left half-way must be finished by the actors' alarms and the recovery sweep.
  actorCalls.around = (_call, invoke) => invoke();
  let runs: Awaited<ReturnType<typeof runsOfActor>> = [];
  for (let round = 0; round < 100; round++) {
    runs = [];
    const seen = new Set<string>();
    const pending = [...actors.values()];
    while (pending.length > 0) {
      for (const run of await runsOfActor(pending.pop()!)) {
        if (seen.has(run.id)) continue;
        seen.add(run.id);
        runs.push(run);
        for (const e of run.events)
          if (e.type === "step_completed")
            for (const child of e.payload.children ?? []) pending.push(actorOfRun(child.run_id));
      }
    }
    // An unacknowledged start of a run the test sends to or cancels is told now, so it ends too.
    for (const run of runs.filter((r) => r.name === "rpc.events" && r.id !== sent && r.id !== cancelled)) {
      const created = run.events[0];
      if (created?.type !== "workflow_created" || isEnded(run.events)) continue;
      if (created.payload.writes[START_DATA_KEY] === "cancel")
        await workflow.cancel(run.id, "rpc faults").catch(() => {});
      else if (!run.events.some((e) => e.type === "event_received")) await workflow.send(run.id, "go", null);
    }
    if (runs.every((run) => isEnded(run.events))) break;
    await sweepStuckRuns(actorEnv);
    // Time passes: the alarms armed (a failed execution's retry 5 s on, the key's reconcile 30 s on) fire now.
    await runDurableObjectAlarm(flowKey);
    for (const run of runs) if (!isEnded(run.events)) await runDurableObjectAlarm(actorOfRun(run.id));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // The sweep that follows: whatever report was lost, it repeats for every run the index lists as live.
  await sweepStuckRuns(actorEnv);
  for (const runId of acknowledged.keys())
    if (!runs.some((run) => run.id === runId)) broken.push(`acknowledged start ${runId} has no run`);
  const index = runIndexOf(actorEnv);
  for (const run of runs) {
    const where = `${run.name} ${run.id}`;
    const log = run.events.map((e) => e.type).join(",");
    for (const problem of logProblems(run.events)) broken.push(`${where}: ${problem} in ${log}`);
    const created = run.events[0];
    const end = run.events.at(-1);
    const expected = EXPECTED[run.name]?.(
      created?.type === "workflow_created" ? created.payload.writes[START_DATA_KEY] : null,
    );
    const status = end?.type.replace("workflow_", "");
    if (expected && status !== expected.status)
      broken.push(`${where}: ended ${status}, expected ${expected.status} in ${log}`);
    const result = end?.type === "workflow_completed" ? end.payload.result : undefined;
    if (expected && "result" in expected && JSON.stringify(result) !== JSON.stringify(expected.result))
      broken.push(`${where}: result ${JSON.stringify(result)}, expected ${JSON.stringify(expected.result)}`);
    const listed = await index.get(run.id);
    // A run whose start failed may be missing from the index (not promised, docs/guarantees.md); if listed, it agrees.
    const unacknowledged =
      created?.type === "workflow_created" && created.payload.parent_run_id === undefined && !acknowledged.has(run.id);
    if (listed?.status !== status && !(listed === null && unacknowledged))
      broken.push(`${where}: the index lists it ${listed?.status ?? "nowhere"}, its log ends ${status}`);
  }
  return broken;
}

describe("the actors under failed RPCs", () => {
  useActorTestHost();
  beforeEach(register);
  afterEach(() => {
    actorCalls.around = (_call, invoke) => invoke();
  });

  it(`keeps every promise over fault seeds ${firstSeed} to ${lastSeed}`, async () => {
    const injected: InjectedRpcFaults = new Map();
    const broken: string[] = [];
    for (let seed = firstSeed; seed <= lastSeed; seed++)
      for (const problem of await runSeed(seed, injected)) broken.push(`seed ${seed}: ${problem}`);
    expect(broken).toEqual([]);
    // Over the seeds, every call on the workload's fixed paths failed both ways at least once, a keyed run's
    // `ended` among them. The key's own calls (`dequeue`, `status`) are made only when a keyed run happened to
    // queue behind the other, which the actors' timing decides, not the seed: they are counted and printed,
    // not required.
    const timingDependent = new Set(["dequeue", "status"]);
    const uncovered = (methods: string[]) =>
      methods.flatMap((m) => ["before", "after"].filter((k) => !injected.get(`${m}:${k}`)).map((k) => `${m}:${k}`));
    console.log(`faults injected: ${JSON.stringify(Object.fromEntries(injected))}`);
    expect(uncovered([...FAULTED].filter((m) => !timingDependent.has(m)))).toEqual([]);
  }, 900_000);
});
