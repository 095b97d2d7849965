// Section D (where a run's cost goes): one worker holding a ladder of actors,
// each doing one more of the things a WorkflowRun actor does for a run, and
// the real WorkflowRun actors behind `workflow.start`. Each request starts
// `runs` fresh actors on one rung; the bench reads workerd's CPU around it, so
// the difference between two neighbouring rungs is what that part costs.
// Plain JS for the same reason as the bench project (the repository's Node
// typecheck includes bench/).
import { DurableObject } from "cloudflare:workers";
import { defineWorkflow } from "../../../src/engine/api/definition.ts";
import { createRun } from "../../../src/engine/execution/createRun.ts";
import { executeRun } from "../../../src/engine/execution/executeRun.ts";
import { createSqlEventStore } from "../../../src/engine/storage/sqlEventStore.ts";
import { createPlatformWorker } from "../../../src/runtime/entry/createPlatformWorker.ts";
import { workflow } from "../../../src/runtime/workflow/index.ts";
import { durableObjectSql } from "../../../src/objects/durableObjectSql.ts";

export { WorkflowRun, WorkflowRunIndex } from "../../../src/objects/index.ts";

const MAX_STEPS = 100;

/** start, s2, …: a run of N trivial steps (the bench project's chain, shorter). */
function chainSteps() {
  const steps = {
    start: (ctx) => (ctx.data.steps <= 1 ? { done: true, result: 1 } : { step: `s${MAX_STEPS - ctx.data.steps + 2}` }),
  };
  for (let k = 2; k <= MAX_STEPS; k++) {
    steps[`s${k}`] = k < MAX_STEPS ? () => ({ step: `s${k + 1}` }) : () => ({ done: true, result: MAX_STEPS });
  }
  return steps;
}

const OPTIONS = { maxAttempts: 3, stepTimeoutMS: 60_000 };
workflow("chain", chainSteps(), OPTIONS);
const definition = defineWorkflow("chain", chainSteps(), OPTIONS);

/**
 * The rungs, each adding one part to the one before:
 * floor   a fresh SQLite-backed actor, one RPC, one write (no engine at all)
 * schema  + the engine's tables and the run's creation (workflow_created)
 * steps   + the step loop: every step's events appended, as the actor does (one batch per synchronous stretch)
 * alarm   + the alarm's bookkeeping: armed before the first wait, deleted after if armed
 * index   + the run's summary put in the project's run index by the caller, batched
 * The real actor (`full`, through `workflow.start` and `result()`) adds the rest.
 */
export class Ladder extends DurableObject {
  async run(rung, steps) {
    const sql = this.ctx.storage.sql;
    if (rung === "floor") {
      sql.exec("CREATE TABLE t (x INTEGER)");
      sql.exec("INSERT INTO t VALUES (1)");
      return 1;
    }
    const store = createSqlEventStore(durableObjectSql(this.ctx.storage), { manyRuns: false });
    const runId = `${this.ctx.id.toString()}.bench`;
    createRun(store, definition, { steps }, { runId, now: Date.now() });
    if (rung === "schema") return 1;
    // As the actor does: the alarm is armed before the first wait (these steps never wait), deleted if armed.
    let armed = false;
    const beforeWaiting =
      rung === "steps"
        ? undefined
        : () => {
            armed = true;
            this.ctx.storage.setAlarm(Date.now());
          };
    const result = await executeRun(store, definition, runId, { now: Date.now, beforeWaiting, exclusive: true });
    if (result.status !== "terminal") throw new Error(`run ended ${result.status}`);
    if (armed) await this.ctx.storage.deleteAlarm();
    // The caller indexes the run from this report (see oneRun), as the actor reports it.
    return rung === "index" ? store.getReport(runId) : 1;
  }

  alarm() {}
}

const RUNGS = ["floor", "schema", "steps", "alarm", "index", "full"];

const int = (url, name, fallback, max) => {
  const raw = url.searchParams.get(name);
  const value = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) throw new Error(`${name} must be an integer 1..${max}`);
  return value;
};

async function oneRun(env, rung, steps) {
  if (rung === "full") {
    const run = await workflow.start("chain", { steps });
    return run.result();
  }
  const answer = await env.LADDER.get(env.LADDER.newUniqueId()).run(rung, steps);
  if (rung === "index") {
    await env.WORKFLOW_RUN_INDEX.get(env.WORKFLOW_RUN_INDEX.idFromName("index")).record([answer]);
  }
  return answer;
}

export default createPlatformWorker({
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      if (url.pathname === "/bench/ping") return Response.json({ ok: true });
      if (url.pathname === "/bench/rung") {
        const rung = url.searchParams.get("rung");
        if (!RUNGS.includes(rung)) throw new Error(`rung must be one of ${RUNGS.join(", ")}`);
        const runs = int(url, "runs", 200, 20_000);
        const steps = int(url, "steps", 10, MAX_STEPS);
        const t0 = Date.now();
        if (url.searchParams.get("sequential") === "1") for (let i = 0; i < runs; i++) await oneRun(env, rung, steps);
        else await Promise.all(Array.from({ length: runs }, () => oneRun(env, rung, steps)));
        return Response.json({ rung, runs, steps, ms: Date.now() - t0 });
      }
      return new Response("not found", { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
});
