/**
 * Callback URLs through a project worker's entry in workerd, on the Durable Object backend: what a
 * POST, a GET and every refusal answer, and what reaches the run. The token is signed by the
 * runtime's issuer with the project's secret; time is the actors' injected clock.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signRunCallbackToken } from "#src/core/runCallbackToken.ts";
import { setCallbackLinkIssuer } from "#src/engine/control/callbackLink.ts";
import { workflowRunHost } from "#src/objects/workflowRunHost.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { workflow } from "#src/runtime/index.ts";
import { createCallbackLinkIssuer } from "#src/runtime/workflow/callbackLinks.ts";

const ORIGIN = "https://approvals.example.test";
const WORKER_SECRET = "cd".repeat(32);
const DAY = 86_400_000;

workflow("approve-by-link", {
  start: async (ctx) => {
    ctx.write("url", await ctx.callbackURL("approval", { ttlMS: DAY }));
    return { step: "decide", waitFor: "approval" };
  },
  decide: async (ctx) => ({ done: true, result: ctx.event }),
});

const worker = createPlatformWorker({ fetch: () => new Response("the project's own answer") });
const projectEnv = {
  ...env,
  PLATFORM_WORKER_SECRET: WORKER_SECRET,
  PLATFORM_PROJECT_ID: "7",
  PLATFORM_PROJECT_URL: `${ORIGIN}/`,
} as unknown as PlatformEnv;

let skewMS = 0;
const savedClock = workflowRunHost.clock;
beforeAll(async () => {
  workflowRunHost.clock = () => Date.now() + skewMS;
  await fetchProject(new Request(`${ORIGIN}/`));
  // The run actors get the test harness's environment: the project's own is handed to the issuer here.
  setCallbackLinkIssuer(createCallbackLinkIssuer(() => projectEnv));
});
afterAll(() => {
  workflowRunHost.clock = savedClock;
  setCallbackLinkIssuer(null);
});

async function fetchProject(request: Request): Promise<Response> {
  return worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, projectEnv, createExecutionContext());
}

/** A run waiting for "approval", and the URL its step made. */
async function waitingRun(): Promise<{ id: string; url: string }> {
  const run = await workflow.start("approve-by-link", {});
  for (;;) {
    const view = await workflow.get(run.id);
    const completed = view?.events.find((e) => e.type === "step_completed");
    if (view?.waitingFor && completed)
      return { id: run.id, url: String((completed.payload as { writes: Record<string, unknown> }).writes.url) };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The run's view once it has completed (its actor drives it on after the delivery). */
async function completedView(runId: string) {
  for (;;) {
    const view = await workflow.get(runId);
    if (view?.status === "completed") return view;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const post = (url: string, body: BodyInit, contentType = "application/json", accept = "application/json") =>
  new Request(url, { method: "POST", headers: { "content-type": contentType, accept }, body });

/** The same URL with one character of its token's signature changed. */
function altered(url: string): string {
  const at = url.length - 5;
  return url.slice(0, at) + (url[at] === "A" ? "B" : "A") + url.slice(at + 1);
}

interface Case {
  name: string;
  /** What to do before the request (spend the URL, end the run, move the clock). */
  before?: (run: { id: string; url: string }) => Promise<void>;
  request: (run: { id: string; url: string }) => Promise<Request>;
  status: number;
  code?: string;
  /** What the run then received (event_received payloads); default nothing. */
  received?: unknown[];
}

const CASES: Case[] = [
  {
    name: "a JSON POST delivers its body",
    request: async (run) => post(run.url, JSON.stringify({ approved: true, by: "ada" })),
    status: 200,
    received: [{ name: "approval", payload: { approved: true, by: "ada" }, via: "callback" }],
  },
  {
    name: "a form POST delivers its fields",
    request: async (run) => post(run.url, "approved=yes&note=ok", "application/x-www-form-urlencoded"),
    status: 200,
    received: [{ name: "approval", payload: { approved: "yes", note: "ok" }, via: "callback" }],
  },
  {
    name: "a second POST is 409 conflict and delivers nothing more",
    before: async (run) => void (await fetchProject(post(run.url, '"first"'))),
    request: async (run) => post(run.url, '"second"'),
    status: 409,
    code: "conflict",
    received: [{ name: "approval", payload: "first", via: "callback" }],
  },
  {
    name: "an expired URL is 410 gone",
    before: async () => {
      skewMS = DAY + 1;
    },
    request: async (run) => post(run.url, "{}"),
    status: 410,
    code: "gone",
  },
  {
    name: "a POST to an ended run is 409 conflict",
    before: async (run) => void (await workflow.cancel(run.id, "no longer needed")),
    request: async (run) => post(run.url, "{}"),
    status: 409,
    code: "conflict",
  },
  {
    name: "an altered token is 401",
    request: async (run) => post(altered(run.url), "{}"),
    status: 401,
    code: "unauthorized",
  },
  {
    name: "another run's token on this run's path is 401",
    request: async (run) => {
      const other = await waitingRun();
      return post(run.url.replace(/[^/]+$/, other.url.split("/").pop()!), "{}");
    },
    status: 401,
    code: "unauthorized",
  },
  {
    name: "a genuine token of a run that does not exist is 401, as an altered one (nothing said about runs)",
    request: async () => {
      const token = await signRunCallbackToken(WORKER_SECRET, {
        run: "no-such-run",
        evt: "approval",
        exp: Date.now() + DAY,
      });
      return post(`${ORIGIN}/__platform/callbacks/no-such-run/${token}`, "{}");
    },
    status: 401,
    code: "unauthorized",
  },
  {
    name: "a body over 1 MiB is 413",
    request: async (run) => post(run.url, JSON.stringify("x".repeat(1024 * 1024 + 1))),
    status: 413,
    code: "payload_too_large",
  },
  {
    name: "malformed JSON is 400 malformed_json",
    request: async (run) => post(run.url, '{"approved": tru'),
    status: 400,
    code: "malformed_json",
  },
  {
    name: "a body that is neither JSON nor a form is 400",
    request: async (run) => post(run.url, "approved", "text/plain"),
    status: 400,
    code: "invalid_input",
  },
  {
    name: "another method is 404",
    request: async (run) => new Request(run.url, { method: "DELETE" }),
    status: 404,
    code: "not_found",
  },
];

describe("/__platform/callbacks/<run>/<token> in workerd (Durable Object backend)", () => {
  it.each(CASES)("$name", async ({ before, request, status, code, received = [] }) => {
    skewMS = 0;
    const run = await waitingRun();
    await before?.(run);
    const response = await fetchProject(await request(run));
    expect(response.status).toBe(status);
    const body = (await response.json()) as { error?: { code: string } };
    if (code) expect(body.error?.code).toBe(code);
    else expect(body).toEqual({ delivered: true, event: "approval" });
    const view = await workflow.get(run.id);
    const events = view?.events.filter((e) => e.type === "event_received") ?? [];
    expect(events.map(({ payload: { callback: _id, ...rest } }) => rest)).toEqual(received);
    // A delivered event completes the wait: the next step ran with it as ctx.event.
    if (status === 200) {
      const { name, payload } = received[0] as { name: string; payload: unknown };
      expect((await completedView(run.id)).result).toEqual({ name, payload });
    }
  });

  it("a GET delivers nothing: it answers a page whose button POSTs the same URL, then that POST delivers", async () => {
    skewMS = 0;
    const run = await waitingRun();
    const page = await fetchProject(new Request(run.url, { headers: { accept: "text/html" } }));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const html = await page.text();
    expect(html).toContain('<html lang="en">');
    expect(html).toMatch(/<form method="post"><button type="submit">Confirm<\/button><\/form>/);
    expect(html).toContain("approval");
    const view = await workflow.get(run.id);
    expect(view?.events.some((e) => e.type === "event_received")).toBe(false);
    expect(view?.waitingFor?.name).toBe("approval");

    const clicked = await fetchProject(post(run.url, "", "application/x-www-form-urlencoded", "text/html"));
    expect(clicked.status).toBe(200);
    expect(await clicked.text()).toContain("<h1>Received</h1>");
    const done = await completedView(run.id);
    expect(done.events.find((e) => e.type === "event_received")?.payload).toMatchObject({
      name: "approval",
      payload: {},
      via: "callback",
    });
  });

  it("the URL is on the project's origin (PLATFORM_PROJECT_URL) under the public callback path", async () => {
    skewMS = 0;
    const run = await waitingRun();
    expect(run.url.startsWith(`${ORIGIN}/__platform/callbacks/${encodeURIComponent(run.id)}/k1.`)).toBe(true);
  });
});
