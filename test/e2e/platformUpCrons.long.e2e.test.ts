import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  getOnLoopback,
  initProject,
  loginToUp,
  runCli,
  startPlatformUp,
  stopPlatformUp,
  type UpPlatform,
} from "#test/support/e2e/index.ts";

// Issue 29 item 1: `platform up` fires the platform workers' cron triggers each minute, as Cloudflare does
// deployed: a `* * * * *` schedule starts its runs, and the recovery sweep fails a run stranded by `push --force`.
// It waits on real minutes (the next cron tick, then the sweep's), so it is in `npm run test:long`; the fast
// checks of the same parts stay in `npm test` (minuteCronDriver.test.ts: one delivery per minute on an injected
// clock; workflowExecution.queueAndCrons.workerd.test.ts: the scheduler's call runs the registered cron).
// Ports of this file: 8987.
const PORT = 8987;
const SLUG = "up-crons";
const PROJECT_URL = `http://${SLUG}.localhost:${PORT}/`;

const project = (waiting: string) => `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("tick", { start: async () => ({ done: true, result: "ticked" }) }, { schedule: "* * * * *" });

workflow("order", {
  start: async () => ({ step: "${waiting}", waitFor: "ok" }),
  ${JSON.stringify(waiting)}: async () => ({ done: true }),
});

const router = Router();
router.get("/", () => new Response("crons project ${waiting}"));
router.get("/start", async () => Response.json({ id: (await workflow.start("order")).id }));
router.get("/ticks", async () => Response.json(await workflow.list({ name: "tick" })));
router.get("/runs/:id", async ({ params }) => Response.json(await workflow.get(params.id)));
export default router;
`;

interface Run {
  id: string;
  status: string;
  error?: string;
  waitingFor?: unknown;
}

let platform: UpPlatform | undefined;
let dir: string;

beforeAll(async () => {
  platform = await startPlatformUp(PORT, "platform-e2e-upcrons-");
  await loginToUp(platform.browser, `http://127.0.0.1:${PORT}`, platform.env, "ada@example.com");
  dir = path.join(platform.tmp, SLUG);
  await initProject(dir, project("approve"));
}, 180_000);

afterAll(async () => {
  await stopPlatformUp(platform ?? {});
});

const push = (...flags: string[]) => runCli(["push", dir, ...flags], { env: platform!.env, timeoutMS: 120_000 });
const json = async <T>(route: string) => JSON.parse((await getOnLoopback(PROJECT_URL + route)).body) as T;

/** Polls until `done`; the bound is a minute's tick plus the slack of a busy machine, not the behaviour checked. */
async function until<T>(check: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

it("starts the schedule's run on the next minute and fails the run stranded by push --force at the next sweep", async () => {
  const first = await push();
  expect(first.code, first.stdout + first.stderr).toBe(0);
  const pushedAt = Date.now();
  await until(
    () => getOnLoopback(PROJECT_URL).then((r) => r.body),
    (b) => b.includes("approve"),
    "v1 serving",
  );
  const { id: stranded } = await json<{ id: string }>("start");
  await until(
    () => json<Run>(`runs/${stranded}`),
    (run) => run.waitingFor !== undefined,
    `run ${stranded} waiting`,
  );

  // v2 drops the step the run waits in: --force takes it and strands the run.
  writeFileSync(path.join(dir, "src/index.ts"), project("signoff"));
  const forced = await push("--force");
  expect(forced.code, forced.stdout + forced.stderr).toBe(0);
  expect(forced.stdout).toContain(`${stranded}  order  approve`);

  // Nothing here calls a cron: only platform up's minute driver can start the tick or run the sweep.
  const ticks = await until(
    () => json<{ runs: { workflowId: string }[] }>("ticks"),
    (page) => page.runs.length > 0,
    "a scheduled tick run",
  );
  // A run's workflow id names its tick (`tick@<ISO minute>`): the first is the first minute after the push, within 70 s.
  const firstTick = Math.min(...ticks.runs.map((run) => Date.parse(run.workflowId.replace(/^tick@/, ""))));
  expect(firstTick - pushedAt).toBeLessThanOrEqual(70_000);

  const failed = await until(
    () => json<Run>(`runs/${stranded}`),
    (run) => run.status !== "running",
    `run ${stranded}`,
  );
  expect(failed.status).toBe("failed");
  expect(failed.error).toContain('Workflow "order" has no step "approve"');
  expect(platform!.up.output()).not.toContain("The minute cron failed");
}, 600_000);
