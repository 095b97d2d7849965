import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PLUGINS } from "#src/contracts/pluginRegistry.ts";
import {
  getOnLoopback,
  initProject,
  loginToUp,
  runCli,
  startPlatformUp,
  stopPlatformUp,
} from "#test/support/e2e/index.ts";
import { waitForBody, type StreamingCli } from "#test/support/e2e/index.ts";

// A project using workflows, sign-in and a plugin (email-send), pushed to `platform up`, works as under `platform dev`.
// Ports of this file: 8860.
const PORT = 8860;
const API = `http://127.0.0.1:${PORT}`;
const SLUG = "up-project";
const PROJECT_URL = `http://${SLUG}.localhost:${PORT}/`;

const PROJECT = `import { Router } from "itty-router";
import { auth, email, workflow } from "platform";

workflow("greet", {
  start: async (ctx) => ({ step: "finish" }),
  finish: async (ctx) => ({ done: true, result: { greeted: ctx.data.name } }),
});

const router = Router();
router.get("/", () => new Response("up project"));
router.get("/start", async ({ query }) => Response.json({ id: (await workflow.start("greet", { name: query.name })).id }));
router.get("/runs/:id", async ({ params }) => Response.json(await workflow.get(params.id)));
router.all("/private", auth.require());
router.get("/private", async (request) => new Response("signed in as " + (await auth.user(request)).email));
router.get("/email", async () =>
  Response.json(await email.send({ to: ["ada@example.com"], subject: "Hello from up", html: "<p>Pushed.</p>" })),
);
export default router;
`;

let tmp: string;
let env: NodeJS.ProcessEnv;
let up: StreamingCli;
let browser: Browser;
let token: string;
let dir: string;

beforeAll(async () => {
  ({ tmp, env, up, browser } = await startPlatformUp(PORT, "platform-up-project-"));
  token = await loginToUp(browser, API, env, "ada@example.com");
  dir = path.join(tmp, SLUG);
  await initProject(dir, PROJECT);
});

afterAll(async () => {
  await stopPlatformUp({ tmp, up, browser });
});

it("pushes the project, registering it with no plugin it has no handlers for", async () => {
  const pushed = await runCli(["push", dir], { env, timeoutMS: 120_000 });
  expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
  // It sends email but registers no command or event handler: no plugin is told anything.
  for (const plugin of PLUGINS.map((p) => p.id)) expect(pushed.stdout).not.toContain(`${plugin} plugin:`);
  expect(pushed.stdout).toContain(`Open ${PROJECT_URL}`);
  expect(pushed.stdout).toContain(`${PROJECT_URL}api/auth/signin/idp`);
  await waitForBody(PROJECT_URL, /up project/);
});

it("runs a workflow started from a route to completion, readable with `platform workflow get --api`", async () => {
  const { id } = JSON.parse((await getOnLoopback(`${PROJECT_URL}start?name=ada`)).body) as { id: string };
  await expect
    .poll(async () => JSON.parse((await getOnLoopback(`${PROJECT_URL}runs/${id}`)).body).status, { timeout: 30_000 })
    .toBe("completed");
  const got = await runCli(["workflow", "get", id, "--api", API, "--dir", dir, "--json"], { env });
  expect(got.code, got.stderr).toBe(0);
  expect(JSON.parse(got.stdout)).toMatchObject({ id, status: "completed", result: { greeted: "ada" } });
});

it("guards /private with auth.require() and answers the user signed in through the login worker", async () => {
  // A request that is not a page navigation is refused; a navigation is sent to sign in, and back.
  expect((await getOnLoopback(`${PROJECT_URL}private`)).status).toBe(401);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${PROJECT_URL}private`);
  await page.getByLabel("Email").fill("ada@example.com");
  await page.getByLabel("Password").fill("password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("button", { name: "Allow" }).click();
  await page.waitForURL(`${PROJECT_URL}private`);
  await expect.poll(() => page.locator("body").textContent()).toBe("signed in as ada@example.com");
  await context.close();
});

it("sends an email through the email-send plugin to the fake provider, whose outbox `platform up` names", async () => {
  const sent = await getOnLoopback(`${PROJECT_URL}email`);
  expect(sent.status, sent.body).toBe(200);
  const { id } = JSON.parse(sent.body) as { id: string };
  expect(id).toBeTruthy();
  const [, outboxUrl] = await up.waitFor(/email projects sent, kept by the fake email provider, at (http:\S+)/);
  // The outbox answers only the operator token `platform up` printed (src/dev/fakes/operatorGate.ts).
  const [, header, operatorToken] = await up.waitFor(/send (x-[a-z-]+): ([0-9a-f]{64})/);
  const outbox = await fetch(`${outboxUrl}?from=${SLUG}@mail.platform.local`, {
    headers: { [header!]: operatorToken! },
  });
  expect(outbox.status).toBe(200);
  const { emails } = (await outbox.json()) as { emails: { id: string; to: string[]; subject: string }[] };
  expect(emails).toContainEqual(expect.objectContaining({ id, to: ["ada@example.com"], subject: "Hello from up" }));
  // The API is the deployed one: `platform dev`'s outbox route is not there.
  const route = await fetch(`${API}/projects/${SLUG}/outbox`, { headers: { authorization: `Bearer ${token}` } });
  expect(route.status).toBe(404);
  expect(await route.json()).toEqual({
    error: { code: "not_found", message: `No route for GET /projects/${SLUG}/outbox.` },
  });
});
