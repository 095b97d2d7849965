// The proxy routes (and the deploy's command registrations) under the shared bot's cap
// (docs/plugins.md, "Chat server"):
// a project's share (5 bot actions per second, private projects included), the global
// budget (40 bot requests per second across all projects), the provider's own global 429
// pausing every project, and the proxy's 3 actions per 60 s for public projects. A stub
// chat server counts what reaches it; the plugin's clock is injected, never waited on.
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimResource } from "#src/workers/db/resourceClaims.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import plugin from "#src/plugins/chatserver/index.ts";
import { sealReplyToken } from "#src/plugins/chatserver/replyToken.ts";
import { pluginEnv, signedRequest, userWithProject } from "#test/support/workerd/index.ts";

const PLUGIN = "https://chatserver.plugin.test";
const APP = "900000000000000001";
const T0 = 1_800_000_000_000;

// Project n's server and its one channel.
const guildOf = (n: number) => String(100_000_000_000_000_000n + BigInt(n));
const channelOf = (n: number) => String(200_000_000_000_000_000n + BigInt(n));

interface Limit {
  retryAfter: number;
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** The chat server's REST subset the proxy uses; records each request that reaches it. */
function stubChatServer() {
  const requests: { method: string; path: string; auth: string | null }[] = [];
  let limitNext: Limit | null = null;
  return {
    requests,
    /** The next request (whatever it is) answers 429 like the provider does. */
    limitNext(limit: Limit) {
      limitNext = limit;
    },
    async fetch(request: Request): Promise<Response> {
      const path = new URL(request.url).pathname.replace(/^\/api\/v10/, "");
      requests.push({ method: request.method, path, auth: request.headers.get("authorization") });
      if (limitNext) {
        const { retryAfter, body, headers } = limitNext;
        limitNext = null;
        return Response.json(
          { message: "You are being rate limited.", retry_after: retryAfter, global: false, ...body },
          { status: 429, headers: { "Retry-After": String(retryAfter), ...headers } },
        );
      }
      const channel = /^\/channels\/(\d+)$/.exec(path);
      if (channel)
        return Response.json({ id: channel[1], guild_id: String(BigInt(channel[1]!) - 100_000_000_000_000_000n) });
      const message = /^\/channels\/(\d+)\/messages/.exec(path);
      if (message) return Response.json({ id: "300000000000000001", channel_id: message[1] });
      if (path.startsWith("/webhooks/")) return Response.json({ id: "300000000000000002", channel_id: channelOf(0) });
      if (/^\/interactions\/\d+\/[^/]+\/callback$/.test(path))
        return Response.json({
          resource: { type: 4, message: { id: "300000000000000003", channel_id: channelOf(0) } },
        });
      if (/^\/applications\/\d+\/guilds\/\d+\/commands$/.test(path)) return Response.json([]);
      return Response.json({ message: "Unknown" }, { status: 404 });
    },
  };
}

/** `count` projects (public or private), each owning server n with channel n; one stub chat server; a clock at T0. */
async function world(projects: { private: boolean }[]) {
  const server = stubChatServer();
  const clock = { now: T0 };
  const pluginEnvValue = pluginEnv({
    CHATSERVER_BASE_URL: "https://discord.stub",
    CHATSERVER_PUBLIC_URL: PLUGIN,
    CHATSERVER_APPLICATION_ID: APP,
    CHATSERVER_CLIENT_ID: APP,
    CHATSERVER_PUBLIC_KEY: "00".repeat(32),
    CHATSERVER_BOT_TOKEN: "bot-token",
    CHATSERVER_FETCH: server,
    CHATSERVER_CLOCK: () => clock.now,
  }) as ChatServerEnv;
  const rows: ProjectRow[] = [];
  for (const [n, options] of projects.entries()) {
    const { row } = await userWithProject(`owner${n}@example.com`, `tenant-${n}`, options);
    await claimResource(env.DB, {
      pluginId: "chatserver",
      resourceType: "server",
      projectId: row.id,
      externalResourceId: guildOf(n),
      displayName: `Server ${n}`,
    });
    rows.push(row);
  }
  const call = async (n: number, path: string, body: Record<string, unknown>) =>
    plugin.fetch(
      await signedRequest({ project: rows[n]!, path, body: JSON.stringify(body), origin: PLUGIN }),
      pluginEnvValue,
      createExecutionContext(),
    );
  return {
    server,
    clock,
    env: pluginEnvValue,
    rows,
    /** Project n sends a message to its own channel. */
    send: (n: number) => call(n, "/proxy/send-message", { channelId: channelOf(n), content: "hi" }),
    call,
  };
}

const statuses = (responses: Response[]) => responses.map((r) => r.status);

async function expectRefused(response: Response, retryAfter: number, message: RegExp) {
  expect(response.status).toBe(429);
  expect(response.headers.get("retry-after")).toBe(String(retryAfter));
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  expect(error.code).toBe("rate_limited");
  expect(error.message).toMatch(message);
}

describe("a project's share of the shared bot", () => {
  it.each([
    {
      project: "private (exempt from the proxy's actions rate, not from the bot share)",
      private: true,
      burst: 8,
      passes: 5,
      retryAfter: 1,
      message: /5 chat-server bot calls per second/,
      afterOneSecond: 200,
    },
    {
      project: "public (the proxy's 3 actions per 60 s, as before)",
      private: false,
      burst: 5,
      passes: 3,
      retryAfter: 60,
      message: /3 plugin actions per 60 seconds/,
      afterOneSecond: 429,
    },
  ])(
    "$project: $burst concurrent sends at one instant, $passes pass, the rest 429; a neighbour still passes",
    async (row) => {
      const w = await world([{ private: row.private }, { private: true }]);
      const burst = await Promise.all(Array.from({ length: row.burst }, () => w.send(0)));
      expect(statuses(burst).filter((s) => s === 200)).toHaveLength(row.passes);
      for (const refused of burst.filter((r) => r.status !== 200))
        await expectRefused(refused, row.retryAfter, row.message);
      // A message is a channel check plus the write: refused calls reached nothing.
      expect(w.server.requests).toHaveLength(row.passes * 2);
      expect((await w.send(1)).status).toBe(200);

      w.clock.now += 1_000;
      expect((await w.send(0)).status).toBe(row.afterOneSecond);
    },
  );
});

describe("the global budget of the shared bot", () => {
  it("8 private projects, 5 concurrent sends each at one instant: exactly 40 requests reach the chat server", async () => {
    const w = await world(Array.from({ length: 8 }, () => ({ private: true })));
    const answers = await Promise.all(w.rows.flatMap((_, n) => Array.from({ length: 5 }, () => w.send(n))));
    expect(w.server.requests).toHaveLength(40);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused.length).toBeGreaterThanOrEqual(20);
    for (const response of refused) await expectRefused(response, 1, /40 requests per second across all projects/);

    w.clock.now += 1_000;
    expect((await w.send(0)).status).toBe(200);
  });
});

describe("the chat server's own 429", () => {
  it.each<{ says: string; limit: Limit; pauses: boolean }>([
    { says: "global: true in the body", limit: { retryAfter: 7, body: { global: true } }, pauses: true },
    {
      says: "X-RateLimit-Global: true",
      limit: { retryAfter: 7, headers: { "X-RateLimit-Global": "true" } },
      pauses: true,
    },
    {
      says: "X-RateLimit-Scope: global",
      limit: { retryAfter: 7, headers: { "X-RateLimit-Scope": "global" } },
      pauses: true,
    },
    {
      says: "a per-route limit (global: false)",
      limit: { retryAfter: 7, headers: { "X-RateLimit-Scope": "user" } },
      pauses: false,
    },
  ])("$says: the caller gets its Retry-After; pauses every project: $pauses", async ({ limit, pauses }) => {
    const w = await world([{ private: true }, { private: true }]);
    w.server.limitNext(limit);
    await expectRefused(await w.send(0), 7, /retry in 7 s/);
    const reached = w.server.requests.length;

    w.clock.now += 1_000;
    const neighbour = await w.send(1);
    if (pauses) {
      await expectRefused(neighbour, 6, /asked the platform's bot to wait; retry in 6 s/);
      expect(w.server.requests).toHaveLength(reached);
      w.clock.now = T0 + 7_000;
      expect((await w.send(1)).status).toBe(200);
    } else {
      expect(neighbour.status).toBe(200);
    }
  });

  it("replies and followups use the interaction's token: neither the bot's pause nor its share holds them", async () => {
    const w = await world([{ private: true }]);
    w.server.limitNext({ retryAfter: 30, body: { global: true } });
    expect((await w.send(0)).status).toBe(429);
    const replyToken = await sealReplyToken(w.env, w.rows[0]!.id, {
      interactionId: "400000000000000001",
      token: "interaction-token",
      guildId: guildOf(0),
      kind: "command",
      messageId: null,
    });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        w.call(0, i % 2 ? "/proxy/followup" : "/proxy/reply", { replyToken, content: `answer ${i}` }),
      ),
    );
    expect(statuses(answers)).toEqual(Array(8).fill(200));
    // The first answer goes to the callback endpoint, the others to the interaction's webhook; none with the bot token.
    const interactionCalls = w.server.requests.filter(
      (r) =>
        r.path.startsWith(`/webhooks/${APP}/interaction-token`) ||
        r.path.startsWith("/interactions/400000000000000001/interaction-token/callback"),
    );
    expect(interactionCalls).toHaveLength(8);
    expect(interactionCalls.every((r) => r.auth === null)).toBe(true);
  });
});

describe("POST /deploy within the share", () => {
  it("a project with 6 servers registers 5 in one second, gets 429, and the next deploy registers only the 6th", async () => {
    const w = await world([{ private: true }]);
    for (let n = 1; n < 6; n++) {
      await claimResource(env.DB, {
        pluginId: "chatserver",
        resourceType: "server",
        projectId: w.rows[0]!.id,
        externalResourceId: guildOf(10 + n),
        displayName: `Server ${10 + n}`,
      });
    }
    const registrations = () => w.server.requests.filter((r) => r.method === "PUT").length;
    await expectRefused(await w.call(0, "/deploy", { commands: ["hello"] }), 1, /5 chat-server bot calls per second/);
    expect(registrations()).toBe(5);

    w.clock.now += 1_000;
    const again = await w.call(0, "/deploy", { commands: ["hello"] });
    expect(again.status).toBe(200);
    expect(registrations()).toBe(6);
  });
});
