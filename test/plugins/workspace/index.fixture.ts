// The workspace-chat plugin's tests: the plugin worker in workerd against the fake Slack, the browser's
// install flow through the API, signed webhooks, proxy calls from a project, and the API bound to the plugin.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { createFakeWorkspace, type FakeWorkspace } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import workspacePlugin from "#src/plugins/workspace/index.ts";
import type { WorkspaceEnv } from "#src/plugins/workspace/env.ts";
import { signWorkspaceRequest } from "#src/plugins/workspace/workspaceSignature.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { apiHarness, callApi, fakeDispatcher, pluginEnv, signedRequest } from "#test/support/workerd/index.ts";
import { userWithProject, type FakeDispatcher, type ProjectWorkerHandler } from "#test/support/workerd/index.ts";
import type { TestUser } from "#test/support/workerd/index.ts";

export const PLUGIN_ORIGIN = "https://workspace.test";
export const SLACK_ORIGIN = "https://slack.fake";
export const CLIENT_ID = "111.222";
export const CLIENT_SECRET = "fake-client-secret";
export const SIGNING_SECRET = "fake-signing-secret-for-tests";

export interface Setup {
  slack: FakeWorkspace;
  env: WorkspaceEnv;
  dispatcher: FakeDispatcher;
  /** Calls the plugin worker; its waitUntil work is collected for `settle`. */
  callPlugin(request: Request): Promise<Response>;
  /** Waits for every waitUntil of every plugin call so far. */
  settle(): Promise<void>;
  /** Requests the plugin sent to Slack. */
  slackRequests: { path: string; body: string }[];
  trigger(params: Record<string, unknown>): Promise<{ status: number; json: any }>;
}

export function setup(
  options: {
    tokenRotation?: boolean;
    expiresIn?: number;
    project?: ProjectWorkerHandler;
    /** Variables the plugin worker gets beside the fixture's (e.g. `platform dev`'s LOCAL_PROJECTS_PRIVATE). */
    vars?: Record<string, string>;
  } = {},
): Setup {
  const pending: Promise<void>[] = [];
  const slackRequests: { path: string; body: string }[] = [];
  const dispatcher = fakeDispatcher(options.project ?? (() => Response.json({ handled: 1 })));
  let wsEnv: WorkspaceEnv;
  const callPlugin = async (request: Request) => {
    const ctx = createExecutionContext();
    const response = await workspacePlugin.fetch(request, wsEnv, ctx);
    pending.push(waitOnExecutionContext(ctx));
    return response;
  };
  const slack = createFakeWorkspace({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    signingSecret: SIGNING_SECRET,
    webhookUrl: `${PLUGIN_ORIGIN}/webhook`,
    redirectUris: [`${PLUGIN_ORIGIN}/oauth/callback`],
    tokenRotation: options.tokenRotation,
    expiresIn: options.expiresIn,
    deliver: callPlugin,
  });
  wsEnv = pluginEnv({
    SLACK_BASE_URL: SLACK_ORIGIN,
    SLACK_CLIENT_ID: CLIENT_ID,
    SLACK_CLIENT_SECRET: CLIENT_SECRET,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    WORKSPACE_PUBLIC_URL: PLUGIN_ORIGIN,
    DISPATCHER: dispatcher.namespace,
    ...options.vars,
    SLACK: {
      async fetch(input: RequestInfo | URL, init?: RequestInit) {
        const request = new Request(input, init);
        slackRequests.push({ path: new URL(request.url).pathname, body: await request.clone().text() });
        return slack.fetch(request);
      },
    },
  }) as WorkspaceEnv;
  return {
    slack,
    env: wsEnv,
    dispatcher,
    callPlugin,
    slackRequests,
    async settle() {
      while (pending.length) await Promise.all(pending.splice(0));
    },
    async trigger(params) {
      const response = await fakeControl(slack, "trigger", params);
      return { status: response.status, json: await response.json() };
    },
  };
}

/** POSTs `body` as JSON to the fake Slack's test switch `/__fake/<name>` (revoke, expire, ratelimit, trigger). */
export function fakeControl(slack: FakeWorkspace, name: string, body: unknown): Promise<Response> {
  return slack.fetch(
    new Request(`${SLACK_ORIGIN}/__fake/${name}`, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { "content-type": "application/json" },
    }),
  );
}

export async function installUrl(user: TestUser, slug: string): Promise<string> {
  const harness = apiHarness({ env: { WORKSPACE_PLUGIN_URL: PLUGIN_ORIGIN } as never });
  const response = await callApi("POST", "/oauth/session", {
    token: user.token,
    body: { project: slug, plugin: "workspace" },
    env: harness.env,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { installUrl: string }).installUrl;
}

/** /install → Slack's consent page → Allow/Cancel: the callback URL Slack redirects to, and the install cookie. */
export async function consent(
  t: Setup,
  url: string,
  decision: "allow" | "cancel" = "allow",
  team?: string,
): Promise<{ callback: string; cookie: string }> {
  const start = await t.callPlugin(new Request(url));
  expect(start.status, await start.clone().text()).toBe(302);
  const cookie = start.headers.get("set-cookie")!.split(";")[0]!;
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.origin + authorize.pathname).toBe(`${SLACK_ORIGIN}/oauth/v2/authorize`);
  expect(authorize.searchParams.get("redirect_uri")).toBe(`${PLUGIN_ORIGIN}/oauth/callback`);
  if (team) authorize.searchParams.set("team", team);
  const page = await t.slack.fetch(new Request(authorize));
  expect(page.status).toBe(200);
  const html = await page.text();
  const fields = Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    ]),
  );
  const decided = await t.slack.fetch(
    new Request(`${SLACK_ORIGIN}/oauth/v2/authorize`, {
      method: "POST",
      body: new URLSearchParams({ ...fields, decision }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      redirect: "manual",
    }),
  );
  expect(decided.status).toBe(302);
  return { callback: decided.headers.get("location")!, cookie };
}

export async function install(t: Setup, user: TestUser, slug: string, team?: string): Promise<Response> {
  const { callback, cookie } = await consent(t, await installUrl(user, slug), "allow", team);
  return t.callPlugin(new Request(callback, { headers: { cookie } }));
}

export async function installedProject(
  t: Setup,
  email: string,
  slug: string,
  team?: string,
): Promise<{ user: TestUser; row: ProjectRow }> {
  // Private projects are not rate limited, so tests can make as many proxy calls as they need.
  const { user, row } = await userWithProject(email, slug, { private: true });
  const page = await install(t, user, slug, team);
  expect(page.status, await page.clone().text()).toBe(200);
  return { user, row };
}

export async function proxy(
  t: Setup,
  row: ProjectRow,
  route: string,
  body: Record<string, unknown>,
): Promise<Response> {
  return t.callPlugin(
    await signedRequest({ project: row, path: `/proxy/${route}`, body: JSON.stringify(body), origin: PLUGIN_ORIGIN }),
  );
}

export async function signedWebhook(
  body: string,
  options: { secret?: string; ts?: number; signature?: string | null; timestamp?: string | null } = {},
): Promise<Request> {
  const ts = String(options.ts ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature =
    options.signature === undefined
      ? await signWorkspaceRequest(options.secret ?? SIGNING_SECRET, ts, body)
      : options.signature;
  if (signature !== null) headers["X-Slack-Signature"] = signature;
  const timestamp = options.timestamp === undefined ? ts : options.timestamp;
  if (timestamp !== null) headers["X-Slack-Request-Timestamp"] = timestamp;
  return new Request(`${PLUGIN_ORIGIN}/webhook`, { method: "POST", headers, body });
}

export const pluginDeliveries = (t: Setup) =>
  t.dispatcher.calls.filter((c) => c.url.pathname === "/__plugin/workspace");

/** The API worker bound to this plugin worker, as deployed (WORKSPACE_PLUGIN). */
export function apiFor(t: Setup) {
  return apiHarness({
    env: {
      WORKSPACE_PLUGIN_URL: PLUGIN_ORIGIN,
      WORKSPACE_PLUGIN: {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
      },
    } as never,
  }).env;
}

export async function uninstall(t: Setup, user: TestUser, slug: string): Promise<Response> {
  return callApi("DELETE", `/projects/${slug}/plugins/workspace`, { token: user.token, env: apiFor(t) });
}

export async function pluginsOf(t: Setup, user: TestUser, slug: string): Promise<any> {
  const response = await callApi("GET", `/projects/${slug}/plugins`, { token: user.token, env: apiFor(t) });
  expect(response.status).toBe(200);
  return response.json();
}
