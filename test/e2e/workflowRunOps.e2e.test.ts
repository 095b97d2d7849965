import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DevProcess,
  getOnLoopback,
  loginToUp,
  devSession,
  getRun,
  initProject,
  RUN_ROUTES,
  type RunView,
  runCli,
  shape,
  startDev,
  startRuns,
  waitForRuns,
  useWorkDir,
  startPlatformUp,
  stopPlatformUp,
  type UpPlatform,
} from "#test/support/e2e/index.ts";

// Issue 22's "Done when": under `platform dev` (workerd), search, bulk cancel and rerun from a step, pause
// across a restart, retention; through `platform up`, the stranded-runs check with renamed and --force.
// Ports of this file: 8980 (platform dev), 8985 (platform up).
const work = useWorkDir("platform-e2e-runops-");

const RUN_OPS_PROJECT = `import { Router } from "itty-router";
import { NonRetryableError, workflow } from "platform";

workflow("checkout", {
  start: async (ctx) => {
    ctx.write("cart", ctx.data.cart);
    return { step: "charge" };
  },
  charge: async (ctx) => {
    // The reason names the cart the scratchpad holds: a rerun from charge shows it kept the original's.
    if (ctx.data.fail) throw new NonRetryableError("card_declined for cart " + ctx.scratchpad.cart);
    if (ctx.data.hold) return { step: "ship", waitFor: "go" };
    return { done: true, result: ctx.scratchpad.cart };
  },
  ship: async () => ({ done: true, result: "shipped" }),
});
workflow("nap", {
  start: async () => ({ step: "woke", sleepMS: 3000 }),
  woke: async () => ({ done: true, result: "rested" }),
});
workflow("brief", { start: async () => ({ done: true, result: 1 }) }, { retentionMS: 2000 });
${RUN_ROUTES}
router.post("/rerun-failed", async () =>
  Response.json(await workflow.rerunMany({ status: "failed", name: "checkout" }, { fromStep: "charge" })),
);
router.post("/pause/:runId", async ({ params }) => Response.json(await workflow.pause(params.runId, "e2e")));
`;

const ids = (page: { runs: { id: string }[] }) => page.runs.map((r) => r.id).sort();

async function until<T>(check: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("operating many runs under platform dev", () => {
  const dir = path.join(work, "runops");
  const workflowCli = (...args: string[]) => runCli(["workflow", ...args, "--dir", dir]);
  const listJson = async (...filters: string[]) => {
    const listed = await workflowCli("list", ...filters, "--limit", "100", "--json");
    // (One CLI process per call: slow on a busy machine, so only where the CLI is what is tested.)
    expect(listed.code, listed.stderr).toBe(0);
    return JSON.parse(listed.stdout) as { runs: { id: string; status: string; step?: string }[] };
  };
  /** The API worker's list route, as the CLI and the console call it (faster than a CLI process per call). */
  const apiList = async (query: Record<string, string>) => {
    const session = devSession(dir);
    const response = await fetch(
      `${session.apiUrl}/projects/${session.slug}/workflows?${new URLSearchParams({ limit: "100", ...query })}`,
      { headers: { authorization: `Bearer ${session.cliToken}` } },
    );
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as { runs: { id: string; status: string; step?: string }[] };
  };
  let dev: DevProcess;
  const failing: string[] = [];
  const held: string[] = [];

  beforeAll(async () => {
    await initProject(dir, RUN_OPS_PROJECT);
    dev = await startDev([dir, "--port", "8980"], { readyTimeoutMs: 120_000 });
    for (let i = 0; i < 10; i++) {
      failing.push(...(await startRuns(dev.url, "checkout", 1, { cart: `f${i}`, fail: true })));
      held.push(...(await startRuns(dev.url, "checkout", 1, { cart: `h${i}`, hold: true })));
      await startRuns(dev.url, "checkout", 1, { cart: `c${i}` });
    }
    await waitForRuns(dev.url, failing);
  }, 240_000);
  afterAll(async () => {
    await dev?.stop("SIGTERM");
  });

  it("30 runs, 10 failing in charge: list --status failed --step charge lists exactly those 10", async () => {
    const failed = await until(
      () => listJson("--status", "failed", "--step", "charge"),
      (page) => page.runs.length >= 10,
      "failed runs in the index",
    );
    expect(ids(failed)).toEqual([...failing].sort());
    expect(ids(await listJson("--name", "checkout", "--error", "card_declined for cart f3"))).toEqual([failing[3]]);
    const text = await workflowCli("list", "--status", "failed", "--step", "charge");
    expect(text.stdout).toContain("at charge");
  }, 180_000);

  it("workflow cancel --status running without --yes changes nothing and prints the count", async () => {
    await until(
      () => listJson("--status", "running", "--step", "ship"),
      (page) => page.runs.length === 10,
      "held runs parked at ship",
    );
    const dry = await workflowCli("cancel", "--status", "running", "--name", "checkout");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("10 run(s) match. Nothing was changed");
    expect(dry.stdout).toContain("--yes");
    for (const runId of held) expect((await getRun(dev.url, runId)).status).toBe("running");
  }, 180_000);

  it("rerunMany({ status: failed }, { fromStep: charge }) reruns 10, each first claiming charge with the original's scratchpad", async () => {
    const answer = await (await fetch(`${dev.url}/rerun-failed`, { method: "POST" })).json();
    expect(answer).toEqual({ matched: 10, affected: 10 });
    for (const original of failing) {
      const reruns = await until(
        () => apiList({ rerunOf: original }),
        (page) => page.runs.length === 1,
        `the rerun of ${original}`,
      );
      const [rerun] = await waitForRuns(dev.url, [reruns.runs[0]!.id]);
      const cart = (await getRun(dev.url, original)).events[0]!.payload.writes as { data: { cart: string } };
      expect(shape(rerun!.events).slice(0, 3)).toEqual([
        "workflow_created",
        "step_completed(start->charge)",
        "step_started(charge,1)",
      ]);
      expect(rerun!.events[0]!.payload.rerunOf).toEqual({ runId: original, fromStep: "charge" });
      expect(rerun!.error).toBe(`card_declined for cart ${cart.data.cart}`);
    }
  }, 240_000);

  it("a paused run stays paused across a restart of platform dev and completes after resume", async () => {
    const [runId] = await startRuns(dev.url, "nap");
    // Paused by the project itself at once (a CLI process may start slower than the 3 s sleep).
    const paused = await fetch(`${dev.url}/pause/${encodeURIComponent(runId!)}`, { method: "POST" });
    expect(paused.status, await paused.clone().text()).toBe(200);
    expect(((await paused.json()) as RunView).status).toBe("paused");
    await dev.stop("SIGTERM");
    dev = await startDev([dir, "--port", "8980"], { readyTimeoutMs: 120_000 });
    // Past its wake time and through the start-up sweep: still paused, nothing claimed.
    const createdAt = (await getRun(dev.url, runId!)).events[0]!.at;
    await until(
      async () => Date.now(),
      (now) => now > createdAt + 4000,
      "the nap's wake time",
    );
    const still = await getRun(dev.url, runId!);
    expect(still.status).toBe("paused");
    expect(shape(still.events).at(-1)).toBe("workflow_paused");
    const resumed = await workflowCli("resume", runId!);
    expect(resumed.code, resumed.stderr).toBe(0);
    const [done] = await waitForRuns(dev.url, [runId!]);
    expect(done).toMatchObject({ status: "completed", result: "rested" });
  }, 240_000);

  it("a run with retentionMS 2000 is gone (get null, not listed) after a recovery sweep past its retention", async () => {
    const [runId] = await startRuns(dev.url, "brief");
    const [ended] = await waitForRuns(dev.url, [runId!]);
    expect(ended!.status).toBe("completed");
    const endedAt = ended!.events.at(-1)!.at;
    await until(
      async () => Date.now(),
      (now) => now > endedAt + 2000,
      "its retention",
    );
    const session = devSession(dir);
    const sweep = await fetch(`${session.apiUrl}/projects/${session.slug}/crons/__workflow-recovery/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${session.cliToken}` },
    });
    expect(sweep.status).toBe(200);
    expect((await fetch(`${dev.url}/runs/${encodeURIComponent(runId!)}`)).status).toBe(404);
    expect((await apiList({ name: "brief" })).runs).toEqual([]);
  });
});

/** A project whose "order" workflow waits for "ok" in the step `waiting` (the name each version gives it). */
const orderProject = (waiting: string, options = "{}") => `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("order", {
  start: async () => ({ step: "${waiting}", waitFor: "ok" }),
  ${JSON.stringify(waiting)}: async (ctx) => ({ done: true, result: { approvedBy: ctx.event.payload } }),
}, ${options});

const router = Router();
router.get("/", () => new Response("order project"));
router.get("/start", async () => Response.json({ id: (await workflow.start("order")).id }));
router.get("/runs/:id", async ({ params }) => Response.json(await workflow.get(params.id)));
export default router;
`;

describe("the stranded-runs check through platform up", () => {
  const PORT = 8985;
  const API = `http://127.0.0.1:${PORT}`;
  const SLUG = "order-desk";
  const PROJECT_URL = `http://${SLUG}.localhost:${PORT}/`;
  let platform: UpPlatform | undefined;
  let token: string;
  let dir: string;

  beforeAll(async () => {
    platform = await startPlatformUp(PORT, "platform-e2e-pushcheck-");
    token = await loginToUp(platform.browser, API, platform.env, "ada@example.com");
    dir = path.join(platform.tmp, SLUG);
    await initProject(dir, orderProject("approve"));
  }, 180_000);
  afterAll(async () => {
    await stopPlatformUp(platform ?? {});
  });

  const push = (...flags: string[]) => runCli(["push", dir, ...flags], { env: platform!.env, timeoutMS: 120_000 });
  const run = async (id: string) =>
    JSON.parse((await getOnLoopback(`${PROJECT_URL}runs/${id}`)).body) as RunView & {
      version?: string;
      waitingFor?: { name: string };
    };
  const startWaiting = async () => {
    const { id } = JSON.parse((await getOnLoopback(`${PROJECT_URL}start`)).body) as { id: string };
    await until(
      () => run(id),
      (view) => view.waitingFor !== undefined,
      `run ${id} waiting`,
    );
    return id;
  };

  it("refuses a push that renames the step a run waits in, takes it with renamed, and --force fails the stranded run", async () => {
    const first = await push();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain("as version v1");
    const waiting = await startWaiting();
    expect((await run(waiting)).version).toBe("v1");

    // v2 renames approve → approval without keeping the old name: refused, naming the run and its step.
    writeFileSync(path.join(dir, "src/index.ts"), orderProject("approval"));
    const refused = await push();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Push refused: it would strand 1 live workflow run(s):");
    expect(refused.stderr).toMatch(new RegExp(`${waiting.replace(/\./g, "\\.")}  order +approve`));
    expect(refused.stderr).toContain("--force");

    // With renamed it goes through, and the run completes in the new step after `workflow send`.
    writeFileSync(path.join(dir, "src/index.ts"), orderProject("approval", '{ renamed: { approve: "approval" } }'));
    const renamed = await push();
    expect(renamed.code, renamed.stdout + renamed.stderr).toBe(0);
    expect(renamed.stdout).toContain("as version v2");
    await until(
      async () => (await getOnLoopback(PROJECT_URL)).body,
      (body) => body.includes("order project"),
      "v2 serving",
    );
    const sent = await runCli(["workflow", "send", waiting, "ok", "--data", '"ada"', "--api", API, "--dir", dir], {
      env: platform!.env,
    });
    expect(sent.code, sent.stderr).toBe(0);
    const done = await until(
      () => run(waiting),
      (view) => view.status !== "running",
      `run ${waiting} ending`,
    );
    expect(done).toMatchObject({ status: "completed", result: { approvedBy: "ada" } });
    expect(done.events.some((e) => e.type === "step_started" && e.payload.step === "approval")).toBe(true);

    // v3 renames approval → signoff: --force takes it, and the stranded run fails naming the step.
    const stranded = await startWaiting();
    expect((await run(stranded)).version).toBe("v2");
    writeFileSync(path.join(dir, "src/index.ts"), orderProject("signoff"));
    const forced = await push("--force");
    expect(forced.code, forced.stdout + forced.stderr).toBe(0);
    expect(forced.stdout).toContain("as version v3");
    expect(forced.stdout).toContain(`${stranded}  order  approval`);
    const sweep = await fetch(`${API}/projects/${SLUG}/crons/__workflow-recovery/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(sweep.status, await sweep.text()).toBe(200);
    const failed = await until(
      () => run(stranded),
      (view) => view.status !== "running",
      `run ${stranded} failing`,
    );
    expect(failed.status).toBe("failed");
    expect(failed.error).toContain('Workflow "order" has no step "approval"');
  }, 600_000);
});
