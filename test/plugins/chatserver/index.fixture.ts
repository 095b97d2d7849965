// The chat-server plugin worker's tests: the plugin in workerd against the fake chat server, the
// browser's install flow, signed webhooks and calls from a project.
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect } from "vitest";
import { randomHex } from "#src/core/crypto/encoding.ts";
import { TEST_GUILD, type FakeChatServer } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { signEd25519 } from "#src/core/crypto/ed25519.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import plugin from "#src/plugins/chatserver/index.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { CHAT_APP, chatServerPluginEnv, fakeDispatcher, signedRequest } from "#test/support/workerd/index.ts";
import { testChatServer, userWithProject, type FakeDispatcher } from "#test/support/workerd/index.ts";

export const FAKE = CHAT_APP.baseUrl;
export const PLUGIN = "https://chatserver.plugin.test";
const SEED = CHAT_APP.signingSeed;
export const APP = CHAT_APP.id;

export interface World {
  fake: FakeChatServer;
  dispatcher: FakeDispatcher;
  env: ChatServerEnv;
  pending: ExecutionContext[];
  call(request: Request): Promise<Response>;
  fakeCall(path: string, init?: RequestInit): Promise<Response>;
  settle(): Promise<void>;
}

export function world(projectHandler?: (request: Request) => Response | Promise<Response>): World {
  const pending: ExecutionContext[] = [];
  const dispatcher = fakeDispatcher(projectHandler ? (r) => projectHandler(r) : () => Response.json({ ok: true }));
  let pluginEnvValue: ChatServerEnv;
  const call = async (request: Request) => {
    const ctx = createExecutionContext();
    pending.push(ctx);
    return plugin.fetch(request, pluginEnvValue, ctx);
  };
  const fake = testChatServer({
    webhookUrl: `${PLUGIN}/webhook`,
    redirectUris: [`${PLUGIN}/oauth/callback`],
    deliver: call,
  });
  pluginEnvValue = chatServerPluginEnv(fake, { DISPATCHER: dispatcher.namespace, CHATSERVER_PUBLIC_URL: PLUGIN });
  return {
    fake,
    dispatcher,
    env: pluginEnvValue,
    pending,
    call,
    fakeCall: (path, init) => fake.fetch(new Request(FAKE + path, init)),
    async settle() {
      while (pending.length) await waitOnExecutionContext(pending.shift()!);
    },
  };
}

export async function sessionCode(
  projectId: number,
  pluginId = "chatserver",
  expiresAt = Date.now() + 120_000,
): Promise<string> {
  const code = randomHex(32);
  expect(
    await env.SESSION_CODES.get(env.SESSION_CODES.idFromName(code)).create({
      code,
      projectId,
      userId: 1,
      pluginId,
      expiresAt,
    }),
  ).toBe(true);
  return code;
}

/** The whole browser flow: /install → consent → Approve → /oauth/callback. */
export async function install(
  w: World,
  projectId: number,
  guildId = TEST_GUILD.id,
  options: { cookie?: false } = {},
): Promise<Response> {
  const start = await w.call(new Request(`${PLUGIN}/install?code=${await sessionCode(projectId)}`));
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get("location")!);
  expect(authorize.origin + authorize.pathname).toBe(`${FAKE}/oauth2/authorize`);
  const consent = await w.fake.fetch(new Request(authorize));
  expect(consent.status, await consent.clone().text()).toBe(200);
  const q = authorize.searchParams;
  const form = new URLSearchParams({
    client_id: q.get("client_id")!,
    redirect_uri: q.get("redirect_uri")!,
    state: q.get("state")!,
    scope: q.get("scope")!,
    permissions: q.get("permissions")!,
    guild_id: guildId,
    action: "approve",
  });
  const approved = await w.fakeCall("/oauth2/authorize", { method: "POST", body: form, redirect: "manual" });
  expect(approved.status).toBe(302);
  const cookie = browserCookie(start);
  return w.call(
    new Request(approved.headers.get("location")!, { headers: options.cookie === false ? {} : { cookie } }),
  );
}

/** The install cookie as a browser would send it back. */
export function browserCookie(response: Response): string {
  const set = response.headers.get("set-cookie") ?? "";
  expect(set).toMatch(/HttpOnly; SameSite=Lax; Secure$/);
  return set.split(";")[0]!;
}

export async function signedWebhook(
  body: string,
  options: { seed?: string; ts?: number; signature?: string | null; timestamp?: string | null } = {},
) {
  const ts = options.timestamp ?? String(options.ts ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature =
    options.signature === undefined ? await signEd25519(options.seed ?? SEED, ts + body) : options.signature;
  if (signature !== null) headers["X-Signature-Ed25519"] = signature;
  if (options.timestamp !== null) headers["X-Signature-Timestamp"] = ts;
  return new Request(`${PLUGIN}/webhook`, { method: "POST", headers, body });
}

export const commandBody = (guildId = TEST_GUILD.id, id = "1234567890") =>
  JSON.stringify({
    id,
    application_id: APP,
    type: 2,
    token: "tok",
    guild_id: guildId,
    channel_id: TEST_GUILD.channels[0],
    data: { name: "hello" },
    member: { user: { id: "5", username: "u" } },
  });

/** Two projects of two accounts: alpha and beta. */
export async function twoProjects(): Promise<{ alpha: ProjectRow; beta: ProjectRow }> {
  return {
    alpha: (await userWithProject("alpha@example.test", "alpha")).row,
    beta: (await userWithProject("beta@example.test", "beta")).row,
  };
}

/** `project` calling the plugin's `path` as the platform does, signed, with `body` as JSON. */
export async function signedCall(w: World, project: ProjectRow, path: string, body: unknown): Promise<Response> {
  return w.call(await signedRequest({ project, path, body: JSON.stringify(body), origin: PLUGIN }));
}

/** `project` deploys `commands`; the plugin answers 200. */
export async function deploy(w: World, project: ProjectRow, commands: unknown[]): Promise<void> {
  const res = await w.call(
    await signedRequest({ project, path: "/deploy", body: JSON.stringify({ commands }), origin: PLUGIN }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The names of the commands registered on a server at the fake. */
export async function commandsIn(w: World, guildId: string): Promise<string[]> {
  return (((await (await w.fakeCall("/__fake/state")).json()) as any).commands[guildId] ?? []).map((c: any) => c.name);
}
