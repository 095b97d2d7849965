// The test-events route's tests: the API worker `platform dev` runs, with the fake providers bound, the
// real fake chat server delivering to a stub plugin, and installs of the fakes.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { createFakeChatServer, OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { createFakeWorkspace } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import { claimResource, listProjectResources } from "#src/workers/db/resourceClaims.ts";
import type { DevApiEnv } from "#src/dev/routes/devApiEnv.ts";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { apiHarness, callApi as callAnyApi, userWithProject, type ApiCall } from "#test/support/workerd/index.ts";

export const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
export const APP = "999999999999999999";
export const BOT_TOKEN = "fake-bot-token";
export const SIGNING_SECRET = "fake-signing-secret";

/** The API env of the tests plus the fake providers `platform dev` binds (absent = a platform without them). */
export function apiEnvWith(fakes: Partial<Pick<DevApiEnv, `FAKE_${string}`>>): DevApiEnv {
  return { ...apiHarness().env, ...fakes };
}

/** The route exists only in the API worker `platform dev` runs. */
export function callApi(method: string, path: string, call: ApiCall = {}): Promise<Response> {
  return callAnyApi(method, path, { ...call, worker: devApi });
}

/** A service binding that answers with `handle`. */
export function asFetcher(handle: (request: Request) => Promise<Response> | Response): Fetcher {
  return {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise.resolve(handle(new Request(input, init))),
  } as unknown as Fetcher;
}

/** A fake that must not be contacted: records any request and answers 500. */
export function untouchedFake(): { fetcher: Fetcher; requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    fetcher: asFetcher((request) => {
      requests.push(`${request.method} ${new URL(request.url).pathname}`);
      return new Response("should not be called", { status: 500 });
    }),
  };
}

export interface Delivery {
  headers: Headers;
  body: string;
  json: Record<string, any>;
}

/**
 * The real fake chat server; the "plugin" it delivers to is a stub that keeps
 * the signed webhook and answers `answer(payload)`, then (like the project's
 * handler behind the real plugin) calls the fake's REST API via `then`.
 */
export function chatWorld(
  answer: (payload: Record<string, any>) => unknown,
  then?: (payload: Record<string, any>, fake: ReturnType<typeof createFakeChatServer>) => Promise<unknown>,
) {
  const deliveries: Delivery[] = [];
  const background: Promise<unknown>[] = [];
  const fake = createFakeChatServer({
    baseUrl: "https://chat.fake",
    applicationId: APP,
    clientId: APP,
    clientSecret: "client-secret",
    botToken: BOT_TOKEN,
    signingSeed: SEED,
    webhookUrl: "https://chat-plugin.test/webhook",
    async deliver(request) {
      const json = await recordDelivery(deliveries, request);
      if (then) background.push(new Promise((resolve) => setTimeout(resolve, 100)).then(() => then(json, fake)));
      return Response.json(answer(json));
    },
  });
  return { fake, deliveries, background, fetcher: asFetcher((request) => fake.fetch(request)) };
}

/** A `then` for chatWorld: the handler edits the interaction's original message to `content`. */
export function editOriginal(content: string) {
  return (payload: Record<string, any>, fake: ReturnType<typeof createFakeChatServer>) =>
    fake.fetch(
      new Request(`https://chat.fake/api/v10/webhooks/${APP}/${payload.token}/messages/@original`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ content }),
      }),
    );
}

/** ada's project `slug` with two chat servers claimed, TEST_GUILD the newest. */
export async function installedChatProject(slug = "alpha") {
  const owner = await userWithProject("ada@example.com", slug);
  // Two installs: the route uses the newest claim.
  await claim(owner.row.id, "chatserver", OTHER_GUILD, { at: Date.now() - 60_000 });
  await claim(owner.row.id, "chatserver", TEST_GUILD);
  return owner;
}

/** Installs the fake Slack app on the default team (consent page → Allow → code exchange) and returns the bot token. */
export async function installSlackTeam(slack: ReturnType<typeof createFakeWorkspace>): Promise<string> {
  const redirect = "https://workspace-plugin.test/oauth/callback";
  const q = new URLSearchParams({ client_id: "111.222", scope: "chat:write", redirect_uri: redirect, state: "st" });
  const html = await (await slack.fetch(new Request(`https://slack.fake/oauth/v2/authorize?${q}`))).text();
  const fields = Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    ]),
  );
  const decision = await slack.fetch(
    new Request("https://slack.fake/oauth/v2/authorize", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, decision: "allow" }).toString(),
      redirect: "manual",
    }),
  );
  const code = new URL(decision.headers.get("location")!).searchParams.get("code")!;
  const token = await slack.fetch(
    new Request("https://slack.fake/api/oauth.v2.access", {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${btoa("111.222:client-secret")}`,
      },
      body: new URLSearchParams({ code, redirect_uri: redirect }).toString(),
    }),
  );
  const body = (await token.json()) as { ok: boolean; access_token: string };
  expect(body.ok).toBe(true);
  return body.access_token;
}

/** Keeps a delivery the fake made to the stub plugin; its JSON body. */
export async function recordDelivery(deliveries: Delivery[], request: Request): Promise<Record<string, any>> {
  const body = await request.text();
  const json = JSON.parse(body) as Record<string, any>;
  deliveries.push({ headers: request.headers, body, json });
  return json;
}

/** Claims a chat server or a workspace for the project, as an install of the plugin does (at `at`, default now). */
export function claim(
  projectId: number,
  pluginId: "chatserver" | "workspace",
  resource: { id: string; name: string },
  options: { metadata?: Record<string, unknown>; at?: number } = {},
): Promise<void> {
  return claimResource(
    env.DB,
    {
      pluginId,
      resourceType: pluginId === "chatserver" ? "server" : "workspace",
      projectId,
      externalResourceId: resource.id,
      displayName: resource.name,
      ...(options.metadata ? { metadata: options.metadata } : {}),
    },
    options.at,
  );
}

/** The project's claim of `externalId` for `pluginId`, as the test-events route reads it. */
export async function claimedResource(projectId: number, pluginId: string, externalId: string) {
  const resources = await listProjectResources(env.DB, projectId, pluginId);
  return resources.find((r) => r.external_resource_id === externalId)!;
}
