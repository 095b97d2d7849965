// Live runs under `platform up` after a push, on the project's pushed host (the PLATFORM_PROJECT_URL the
// push binds): a page in Chromium reads workflow.streamURL (EventSource) and gets a step's first message
// while that step still runs (the page reads the run when the message comes), a reconnect with
// Last-Event-ID: 2 gets exactly the messages after offset 2 and an altered token answers 401; a step's
// callback URL delivers on POST only, once; a Stripe-signed delivery, its secret set with `platform secret
// put`, starts one run however often it comes, a tampered one answers 401, and `platform webhook list
// --dir` shows the endpoint and those deliveries. Ports of this file: 8996.
import path from "node:path";
import Stripe from "stripe";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  getOnLoopback,
  initProject,
  loginToUp,
  putSecretOnUp,
  requestOnLoopback,
  runCli,
  type StreamingCli,
  startPlatformUp,
  stopPlatformUp,
  waitForBody,
} from "#test/support/e2e/index.ts";

const PORT = 8996;
const API = `http://127.0.0.1:${PORT}`;
const SLUG = "up-live";
const PROJECT_URL = `http://${SLUG}.localhost:${PORT}/`;
const STRIPE_SECRET = "whsec_up_e2e_secret_of_the_project";
const stripe = new Stripe("sk_test_unused");

const PROJECT = `import { Router } from "itty-router";
import { webhook, workflow } from "platform";

workflow("approve", {
  start: async (ctx) => {
    ctx.write("link", await ctx.callbackURL("approval"));
    return { step: "decide", waitFor: "approval" };
  },
  decide: async (ctx) => ({ done: true, result: ctx.event.payload }),
});
workflow("report", {
  start: async (ctx) => {
    ctx.publish("progress", { pct: 10 });
    await new Promise((resolve) => setTimeout(resolve, 5000));
    ctx.publish("progress", { pct: 90 });
    return { step: "finish" };
  },
  finish: async (ctx) => {
    ctx.publish("progress", { pct: 100 });
    return { done: true, result: "ok" };
  },
});
workflow("fulfil", {
  start: async (ctx) => ({ done: true, result: { fulfilled: ctx.data.event.data.object.id } }),
});
webhook("stripe-orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" });

// The page also reads the run the moment the first message comes: what it was then shows the message was
// streamed while the step ran (it sleeps after publishing), not handed over once the run had ended.
const PAGE = \`<!doctype html><title>Report</title><p id="during"></p><ol id="log"></ol><script>
const query = new URLSearchParams(location.search);
const source = new EventSource(query.get("stream"));
for (const topic of ["progress", "run"])
  source.addEventListener(topic, async (event) => {
    const item = document.createElement("li");
    item.textContent = event.lastEventId + " " + topic + " " + event.data;
    document.getElementById("log").append(item);
    if (event.data === '{"pct":10}') {
      const run = await (await fetch("/runs/" + encodeURIComponent(query.get("run")))).json();
      document.getElementById("during").textContent = run.status + " " + run.events.at(-1).type;
    }
    if (topic === "run" && JSON.parse(event.data).type === "ended") source.close();
  });
</script>\`;

const router = Router();
router.get("/", (_request, env) => new Response(\`up live runs, \${env.STRIPE_WEBHOOK_SECRET ? "secret set" : "no secret"}\`));
router.get("/start/:name", async ({ params }) => Response.json({ id: (await workflow.start(params.name, {})).id }));
router.get("/runs/:id", async ({ params }) => Response.json(await workflow.get(params.id)));
router.get("/runs", async ({ query }) => Response.json(await workflow.list({ name: query.name, limit: 100 })));
router.get("/links/:id", async ({ params }) => Response.json({ url: await workflow.streamURL(params.id) }));
router.get("/page", () => new Response(PAGE, { headers: { "content-type": "text/html" } }));
export default router;
`;

interface Run {
  status: string;
  result?: unknown;
  waitingFor?: { name: string };
  events: { type: string; payload: { writes?: { link?: string } } }[];
}
const json = async <T>(pathname: string) => JSON.parse((await getOnLoopback(PROJECT_URL + pathname)).body) as T;
const runOf = (id: string) => json<Run>(`runs/${encodeURIComponent(id)}`);
const start = async (name: string) => (await json<{ id: string }>(`start/${name}`)).id;
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  requestOnLoopback(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

/** The SSE events of a body: `[id, event, data]` each. */
function eventsOf(text: string): [number, string, unknown][] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("id: "))
    .map((block) => {
      const [id, event, data] = block.split("\n").map((line) => line.slice(line.indexOf(": ") + 2));
      return [Number(id), event!, JSON.parse(data!)];
    });
}

let tmp: string;
let env: NodeJS.ProcessEnv;
let up: StreamingCli;
let browser: Browser;
let dir: string;

const push = async () => {
  const pushed = await runCli(["push", dir], { env, timeoutMS: 120_000 });
  expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
};

beforeAll(async () => {
  ({ tmp, env, up, browser } = await startPlatformUp(PORT, "platform-up-live-"));
  await loginToUp(browser, API, env, "ada@example.com");
  dir = path.join(tmp, SLUG);
  await initProject(dir, PROJECT);
  await push();
  await waitForBody(PROJECT_URL, /up live runs/);
  // platform up, a browser sign-in and a push: minutes on a loaded 2-core machine, not a bound on speed.
}, 360_000);

afterAll(async () => {
  await stopPlatformUp({ tmp, up, browser });
});

it("a page on the pushed host shows a step's first message while the step still runs, then the rest", async () => {
  const runId = await start("report");
  const { url } = await json<{ url: string }>(`links/${encodeURIComponent(runId)}`);
  expect(url.startsWith(`${PROJECT_URL}__platform/streams/`)).toBe(true);
  const page = await browser.newPage();
  try {
    await page.goto(`${PROJECT_URL}page?${new URLSearchParams({ stream: url, run: runId })}`);
    // Read the moment the step's first message came: the step had not ended.
    await page.locator("#during", { hasText: /\w/ }).waitFor({ timeout: 30_000 });
    expect(await page.locator("#during").textContent()).toBe("running step_started");
    await page.locator("#log li", { hasText: '"type":"ended"' }).waitFor({ timeout: 30_000 });
    expect(await page.locator("#log li").allTextContents()).toEqual([
      '0 run {"type":"step_started","step":"start"}',
      '1 progress {"pct":10}',
      '2 progress {"pct":90}',
      '3 run {"type":"step_completed","step":"start","next":"finish"}',
      '4 run {"type":"step_started","step":"finish"}',
      '5 progress {"pct":100}',
      '6 run {"type":"step_completed","step":"finish"}',
      '7 run {"type":"ended","status":"completed"}',
    ]);
  } finally {
    await page.close();
  }

  const all = await requestOnLoopback(url);
  expect(all.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
  expect(eventsOf(all.body).map(([id]) => id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  const resumed = await requestOnLoopback(url, { headers: { "last-event-id": "2" } });
  expect(resumed.status).toBe(200);
  expect(eventsOf(resumed.body)).toEqual(eventsOf(all.body).slice(3));

  const altered = await requestOnLoopback(url.slice(0, -1) + (url.at(-1) === "A" ? "B" : "A"));
  expect(altered.status).toBe(401);
  expect(JSON.parse(altered.body)).toMatchObject({ error: { code: "unauthorized" } });
}, 120_000);

it("a step's callback URL is on the pushed host; GET delivers nothing, POST completes the run, a second POST is 409", async () => {
  const id = await start("approve");
  await expect.poll(async () => (await runOf(id)).waitingFor?.name, { timeout: 30_000 }).toBe("approval");
  const link = (await runOf(id)).events.find((e) => e.type === "step_completed")?.payload.writes?.link ?? "";
  expect(link.startsWith(`${PROJECT_URL}__platform/callbacks/`)).toBe(true);

  const page = await getOnLoopback(link);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<form method="post"><button type="submit">Confirm</button></form>');
  expect((await runOf(id)).events.some((e) => e.type === "event_received")).toBe(false);

  const first = await post(link, JSON.stringify({ approved: true }));
  expect(first.status, first.body).toBe(200);
  await expect.poll(async () => (await runOf(id)).status, { timeout: 30_000 }).toBe("completed");
  expect((await runOf(id)).result).toEqual({ approved: true });

  const second = await post(link, JSON.stringify({ approved: false }));
  expect(second.status).toBe(409);
  expect(JSON.parse(second.body)).toMatchObject({ error: { code: "conflict" } });
}, 120_000);

it("a Stripe-signed delivery on the pushed host starts one run however often it comes; a tampered one is 401", async () => {
  const put = await putSecretOnUp(env, dir, "STRIPE_WEBHOOK_SECRET", STRIPE_SECRET);
  expect(put.code, put.stderr).toBe(0);
  await push();
  const endpoint = `${PROJECT_URL}__platform/webhooks/stripe-orders`;
  const body = JSON.stringify({
    id: "evt_up_1",
    type: "checkout.session.completed",
    data: { object: { id: "cs_up" } },
  });
  const signed = (payload: string) => ({
    "stripe-signature": stripe.webhooks.generateTestHeaderString({
      payload,
      secret: STRIPE_SECRET,
      timestamp: Math.floor(Date.now() / 1000),
    }),
  });
  // The new version, which has the secret, is served a moment after the push answers.
  await waitForBody(PROJECT_URL, /secret set/);
  const first = await post(endpoint, body, signed(body));
  expect(first.status, first.body).toBe(200);
  const answer = JSON.parse(first.body) as { runId: string; created: boolean };
  expect(answer.created).toBe(true);
  await expect.poll(async () => (await runOf(answer.runId)).status, { timeout: 30_000 }).toBe("completed");
  expect((await runOf(answer.runId)).result).toEqual({ fulfilled: "cs_up" });

  const again = await post(endpoint, body, signed(body));
  expect(again.status).toBe(200);
  expect(JSON.parse(again.body)).toEqual({ delivery: "evt_up_1", runId: answer.runId, created: false });

  const tampered = await post(endpoint, body.replace("cs_up", "cs_evil"), signed(body));
  expect(tampered.status).toBe(401);
  expect((await json<{ runs: unknown[] }>("runs?name=fulfil")).runs).toHaveLength(1);

  // Deliveries reach the project's log a moment after they are answered.
  const list = async () => (await runCli(["webhook", "list", "--dir", dir], { env })).stdout;
  await expect.poll(list, { timeout: 30_000 }).toMatch(/refused: bad_signature/);
  const listed = await list();
  expect(listed).toContain(`stripe-orders  ${endpoint}\n`);
  expect(listed).toContain(`evt_up_1     verified, started run ${answer.runId.slice(0, 8)}`);
  expect(listed).toContain(`evt_up_1     verified, run ${answer.runId.slice(0, 8)} (already started: redelivery)`);
}, 240_000);
