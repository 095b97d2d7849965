// A step's callback URL under `platform up` after a push: it is on the project's pushed host (the
// PLATFORM_PROJECT_URL the push binds), a GET delivers nothing, a POST completes the waiting run with
// its body and a second POST answers 409. Ports of this file: 8996.
import { request } from "node:http";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  getOnLoopback,
  initProject,
  loginToUp,
  runCli,
  type StreamingCli,
  startPlatformUp,
  stopPlatformUp,
  waitForBody,
} from "#test/support/e2e/index.ts";

const PORT = 8996;
const API = `http://127.0.0.1:${PORT}`;
const SLUG = "up-callbacks";
const PROJECT_URL = `http://${SLUG}.localhost:${PORT}/`;

const PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("approve", {
  start: async (ctx) => {
    ctx.write("link", await ctx.callbackURL("approval"));
    return { step: "decide", waitFor: "approval" };
  },
  decide: async (ctx) => ({ done: true, result: ctx.event.payload }),
});

const router = Router();
router.get("/", () => new Response("up callbacks"));
router.get("/start", async () => Response.json({ id: (await workflow.start("approve", {})).id }));
router.get("/runs/:id", async ({ params }) => Response.json(await workflow.get(params.id)));
export default router;
`;

/** POST a JSON body to `url` on loopback with its own Host header (the resolver need not know `*.localhost`). */
function postOnLoopback(url: string, body: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: "POST",
        path: target.pathname,
        headers: { host: target.host, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

interface Run {
  status: string;
  result?: unknown;
  waitingFor?: { name: string };
  events: { type: string; payload: { writes?: { link?: string } } }[];
}
const runOf = async (id: string) => JSON.parse((await getOnLoopback(`${PROJECT_URL}runs/${id}`)).body) as Run;

let tmp: string;
let env: NodeJS.ProcessEnv;
let up: StreamingCli;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  ({ tmp, env, up, browser } = await startPlatformUp(PORT, "platform-up-callbacks-"));
  await loginToUp(browser, API, env, "ada@example.com");
  dir = path.join(tmp, SLUG);
  await initProject(dir, PROJECT);
}, 180_000);

afterAll(async () => {
  await stopPlatformUp({ tmp, up, browser });
});

it("a pushed project's callback URL is on its host; GET delivers nothing, POST completes the run, a second POST is 409", async () => {
  const pushed = await runCli(["push", dir], { env, timeoutMS: 120_000 });
  expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
  await waitForBody(PROJECT_URL, /up callbacks/);

  const { id } = JSON.parse((await getOnLoopback(`${PROJECT_URL}start`)).body) as { id: string };
  await expect.poll(async () => (await runOf(id)).waitingFor?.name, { timeout: 30_000 }).toBe("approval");
  const link = (await runOf(id)).events.find((e) => e.type === "step_completed")?.payload.writes?.link ?? "";
  expect(link.startsWith(`${PROJECT_URL}__platform/callbacks/`)).toBe(true);

  const page = await getOnLoopback(link);
  expect(page.status).toBe(200);
  expect(page.body).toContain('<form method="post"><button type="submit">Confirm</button></form>');
  expect((await runOf(id)).events.some((e) => e.type === "event_received")).toBe(false);

  const first = await postOnLoopback(link, JSON.stringify({ approved: true }));
  expect(first.status, first.body).toBe(200);
  await expect.poll(async () => (await runOf(id)).status, { timeout: 30_000 }).toBe("completed");
  expect((await runOf(id)).result).toEqual({ approved: true });

  const second = await postOnLoopback(link, JSON.stringify({ approved: false }));
  expect(second.status).toBe(409);
  expect(JSON.parse(second.body)).toMatchObject({ error: { code: "conflict" } });
});
