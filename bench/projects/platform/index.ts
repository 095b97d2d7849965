/**
 * The platform's side of a run's cost, for section M: the API worker's two live-run routes in front
 * of the real `LiveRunBudget` actor, so a bench run starts and ends as under the platform (a slot held
 * before the start, given back at the end) and the meter counts the budget's rows and requests.
 * The routes verify the project's identity token as the API worker does; the project's secret comes
 * from this worker's bindings instead of the projects table (D1, which Cloudflare does not bill as a
 * Durable Object's rows).
 */
import { LIVE_RUN_ROUTES, runIdsOf } from "../../../src/contracts/liveRunBudget.ts";
import { IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../../src/core/requestToken.ts";
import { accountLiveRunBudget, LiveRunBudget } from "../../../src/objects/LiveRunBudget.ts";
import { meterRpcCall, readStorageMeter, resetStorageMeter } from "../../../src/objects/storageMeter.ts";

export { LiveRunBudget };

interface Env {
  LIVE_RUN_BUDGET: DurableObjectNamespace<LiveRunBudget>;
  PROJECT_ID: string;
  PROJECT_SECRET: string;
}

/** The API worker's default cap (src/workers/api/liveRunsPerAccount.ts). */
const CAP = 10_000;
const ACCOUNT = 1;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/bench/meter") return Response.json(readStorageMeter());
    if (pathname === "/bench/meter/reset") {
      resetStorageMeter();
      return Response.json({ ok: true });
    }
    if (pathname !== LIVE_RUN_ROUTES.hold && pathname !== LIVE_RUN_ROUTES.release)
      return Response.json({ error: `no route ${pathname}` }, { status: 404 });
    const body = new Uint8Array(await request.arrayBuffer());
    const check = await verifyRequestToken(
      "identity",
      request.headers.get(IDENTITY_HEADER),
      { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body },
      { lookupSecret: (projectId) => (projectId === env.PROJECT_ID ? env.PROJECT_SECRET : null) },
    );
    if (!check.ok) return Response.json({ error: check.reason }, { status: 401 });
    const runIds = runIdsOf(JSON.parse(new TextDecoder().decode(body)));
    const budget = accountLiveRunBudget(env.LIVE_RUN_BUDGET, ACCOUNT);
    // One Durable Object request each, as the API worker's call to the actor is billed.
    meterRpcCall();
    if (pathname === LIVE_RUN_ROUTES.release)
      return Response.json({ released: await budget.release(Number(check.projectId), runIds) });
    const outcome = await budget.hold(Number(check.projectId), runIds, CAP);
    if (!outcome.held) return Response.json({ error: "rate_limited" }, { status: 429 });
    return Response.json({ held: outcome.added, live: outcome.live, cap: CAP });
  },
};
