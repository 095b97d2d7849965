import { runIdsOf } from "../../contracts/liveRunBudget.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import { accountLiveRunBudget } from "../../objects/LiveRunBudget.ts";
import { identifiedProjectCall } from "../db/identifiedProjectCall.ts";
import type { ApiEnv } from "./env.ts";
import { liveRunBudgetError, maxLiveRunsPerAccount } from "./liveRunsPerAccount.ts";

/** 1,000 run ids of up to 200 characters, as JSON. */
const MAX_BODY_BYTES = 256 * 1024;

/** The verified project's run ids and its account's budget actor. */
async function liveRunCall(request: Request, env: ApiEnv) {
  const { project, body } = await identifiedProjectCall(request, env.DB, MAX_BODY_BYTES);
  const runIds = runIdsOf(parseJsonObject(body));
  return { project, runIds, budget: accountLiveRunBudget(env.LIVE_RUN_BUDGET, project.owner_id) };
}

/**
 * `POST /internal/workflow/live-runs/hold`: a slot for each run about to
 * start, all or none. Past the account's budget: 429 `rate_limited` naming
 * the cap, nothing held. A replayed call holds the same ids again: nothing more.
 */
export async function holdLiveRuns(request: Request, env: ApiEnv): Promise<Response> {
  const cap = maxLiveRunsPerAccount(env);
  const { project, runIds, budget } = await liveRunCall(request, env);
  const outcome = await budget.hold(project.id, runIds, cap);
  if (!outcome.held) throw liveRunBudgetError(cap, outcome.live, outcome.asked);
  return Response.json({ held: outcome.added, live: outcome.live, cap });
}

/** `POST /internal/workflow/live-runs/release`: the slots of runs that ended; ids this project does not hold free nothing. */
export async function releaseLiveRuns(request: Request, env: ApiEnv): Promise<Response> {
  const { project, runIds, budget } = await liveRunCall(request, env);
  return Response.json({ released: await budget.release(project.id, runIds) });
}
