import { PlatformError } from "../../core/errors.ts";
import { runIndexOf } from "../../objects/runIndexClient.ts";
import { actorIdOfRun, randomRunSuffix } from "../../objects/runIds.ts";
import { flowKeyActorOf } from "../../objects/flowKeyClient.ts";
import { workflowRunActor, type WorkflowActorEnv, type WorkflowRunClient } from "./workflowActorClient.ts";
import { getWorkflowDefinition, type WorkflowBackend } from "../../engine/api/workflowApi.ts";
import { flowKeyOf, flowRankOf } from "../../engine/flow/flowControl.ts";
import { onceRunKey } from "../../engine/execution/createRun.ts";
import { rerunBlockedBy } from "../../engine/control/rerun.ts";
import type { RunReport } from "../../engine/storage/store.ts";
import { budgetedStart } from "../../objects/budgetedStart.ts";
import { workflowRunHost } from "../../objects/workflowRunHost.ts";

/** How long one `waitForTerminal` call to the actor may hang before the caller asks again. */
const WAIT_SLICE_MS = 20_000;

/** The actor holding a run, from the run's id alone (see objects/runIds.ts); null for an id no actor holds. */
export function actorForRun(env: WorkflowActorEnv, runId: string): WorkflowRunClient | null {
  const actorId = actorIdOfRun(env.WORKFLOW_RUNS, runId);
  return actorId ? workflowRunActor(env, actorId) : null;
}

/** The workflow backend of a deployed (or `platform dev`) project: one WorkflowRunActor per workflow id. */
export function durableObjectWorkflowBackend(env: WorkflowActorEnv): WorkflowBackend {
  // Each start makes its own call: workerd cancels a request's I/O when that request ends, so a start
  // waiting on a call another request made (a batch shared across requests) could wait forever
  // (test/runtime/workflow/runIndexReport.workerd.test.ts).
  const indexRun = (summary: RunReport) => runIndexOf(env).record([summary]);
  const requireActor = (runId: string) => {
    const actor = actorForRun(env, runId);
    if (!actor) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist`);
    return actor;
  };
  /** One start under a slot of the account's live-run budget (objects/budgetedStart.ts). */
  const budgeted = async <T extends { runId: string; created: boolean }>(runId: string, start: () => Promise<T>) => {
    const exists = async (id: string) => (await actorForRun(env, id)?.status(id)) != null;
    const [started] = await budgetedStart(workflowRunHost.liveRuns(env), [runId], async () => [await start()], exists);
    return started!;
  };
  return {
    async start(name, data, { id, once, idempotency, priority }) {
      // Named actors make "at most one active run per workflow id" a single-threaded check.
      const actorId = id === undefined ? env.WORKFLOW_RUNS.newUniqueId() : env.WORKFLOW_RUNS.idFromName(id);
      // A `once` run's suffix comes from its workflow id, so its actor refuses a second one.
      const suffix = once && id !== undefined ? (await onceRunKey(id)).slice(0, 12) : randomRunSuffix();
      const runId = `${actorId.toString()}.${suffix}`;
      const input = {
        runId,
        workflowId: id ?? runId,
        name,
        data,
        once: once === true && id !== undefined,
        ...(idempotency ? { idempotency } : {}),
      };
      // A workflow with flow control starts through its key's actor, which holds the key's queue and slots.
      const flow = getWorkflowDefinition(name)?.flow;
      if (flow && !env.WORKFLOW_FLOW_KEYS)
        throw new PlatformError(
          "not_ready",
          `Workflow "${name}" has flow control, which this deployment has no actors for yet: deploy the project again.`,
        );
      const { summary, ...started } = await budgeted(runId, async () => {
        if (!flow || !env.WORKFLOW_FLOW_KEYS) return workflowRunActor(env, actorId).start(input);
        const key = flowKeyOf(name, flow, data);
        return flowKeyActorOf({ WORKFLOW_FLOW_KEYS: env.WORKFLOW_FLOW_KEYS }, name, key).start({
          ...input,
          key,
          rank: flowRankOf(name, flow, data, priority),
        });
      });
      // Listed by the time the caller hears of the run.
      if (summary) await indexRun(summary);
      return started;
    },

    async get(runId) {
      const actor = actorForRun(env, runId);
      const view = actor ? await actor.get(runId) : null;
      // A queued run: its key's actor says what it waits for.
      if (view?.status !== "queued" || !view.queued || !env.WORKFLOW_FLOW_KEYS) return view;
      const explained = await flowKeyActorOf({ WORKFLOW_FLOW_KEYS: env.WORKFLOW_FLOW_KEYS }, view.name, view.queued.key)
        .explain(runId)
        .catch(() => null);
      return explained ? { ...view, queued: { ...view.queued, ...explained } } : view;
    },

    list: (query) => runIndexOf(env).list(query),

    async send(runId, name, payload, callbackId) {
      await requireActor(runId).send(runId, name, payload, callbackId);
    },

    async sendOrStart(workflowId, event, start) {
      // The workflow id's actor decides alone, so two concurrent calls never start two runs.
      const actorId = env.WORKFLOW_RUNS.idFromName(workflowId);
      const runId = `${actorId.toString()}.${randomRunSuffix()}`;
      const { summary, ...started } = await budgeted(runId, () =>
        workflowRunActor(env, actorId).start({ runId, workflowId, name: start.name, data: start.data, event }),
      );
      if (summary) await indexRun(summary);
      return started;
    },

    async cancel(runId, reason) {
      return requireActor(runId).cancel(runId, reason);
    },

    async pause(runId, reason) {
      return requireActor(runId).pause(runId, reason);
    },

    async resume(runId) {
      return requireActor(runId).resume(runId);
    },

    async rerun(runId, { fromStep }) {
      // Planned where the original's log is; started in an actor of its own, or its workflow id's when it had one.
      const { name, workflowId: named, ...plan } = await requireActor(runId).planRerun(runId, fromStep);
      const actorId = named === undefined ? env.WORKFLOW_RUNS.newUniqueId() : env.WORKFLOW_RUNS.idFromName(named);
      const newRunId = `${actorId.toString()}.${randomRunSuffix()}`;
      const { summary, ...started } = await budgeted(newRunId, () =>
        workflowRunActor(env, actorId).start({
          runId: newRunId,
          workflowId: named ?? newRunId,
          name,
          data: plan.data,
          rerun: plan,
        }),
      );
      if (!started.created) throw rerunBlockedBy(started.runId, named, runId);
      if (summary) await indexRun(summary);
      return { ...started, name };
    },

    countRuns: (filter) => runIndexOf(env).count(filter),

    cancelMany: (filter, { reason }) => runIndexOf(env).cancelMany(filter, reason),

    rerunMany: (filter, { fromStep }) => runIndexOf(env).rerunMany(filter, fromStep),

    findStrandedRuns: (workflows) => runIndexOf(env).findStrandedRuns([...workflows]),

    readStream: (runId, query) => requireActor(runId).readStream(runId, query),

    async waitForTerminal(runId) {
      const actor = requireActor(runId);
      for (;;) {
        const view = await actor.waitForTerminal(runId, WAIT_SLICE_MS);
        if (view) return view;
      }
    },
  };
}
