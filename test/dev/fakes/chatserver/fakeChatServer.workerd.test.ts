// The fake chat server checks what it receives (OAuth, REST, signatures):
// a fake that accepts anything proves nothing.
import { describe, expect, it } from "vitest";
import { OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import fakeChatServerWorker, { fakeFromEnv, type FakeChatServerEnv } from "#src/dev/fakes/chatserver/index.ts";
import { ed25519PublicKeyHex, verifyEd25519Webhook } from "#src/core/crypto/ed25519.ts";
import { FAKE, SEED, REDIRECT, setup, approve, tokenRequest } from "./fakeChatServer.fixture.ts";

describe("fake chat server: OAuth2 bot install", () => {
  it("Approve redirects with code, state and guild_id; the code is exchanged once for tokens and the guild", async () => {
    const { call } = setup();
    const back = await approve(call);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("st-1");
    expect(back.searchParams.get("guild_id")).toBe(TEST_GUILD.id);
    const code = back.searchParams.get("code")!;
    const first = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
    );
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as Record<string, any>;
    expect(tokens).toMatchObject({
      token_type: "Bearer",
      expires_in: 604800,
      guild: { id: TEST_GUILD.id, name: "Test Server" },
    });
    expect(tokens.access_token).toBeTruthy();
    expect(tokens.refresh_token).toBeTruthy();
    const again = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }),
    );
    expect(again.status).toBe(400);
    expect(await again.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("client_secret_post works; a wrong secret, a JSON body or a different redirect_uri is refused", async () => {
    const { call } = setup();
    const code = (await approve(call)).searchParams.get("code")!;
    const wrongSecret = await call(
      "/api/oauth2/token",
      tokenRequest(
        {
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: "900000000000000001",
          client_secret: "nope",
        },
        false,
      ),
    );
    expect(wrongSecret.status).toBe(401);
    const json = await call("/api/oauth2/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(json.status).toBe(400);
    const code2 = (await approve(call)).searchParams.get("code")!;
    const wrongRedirect = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "authorization_code", code: code2, redirect_uri: REDIRECT + "x" }),
    );
    expect(await wrongRedirect.json()).toMatchObject({ error: "invalid_grant" });
    const code3 = (await approve(call)).searchParams.get("code")!;
    const post = await call(
      "/api/oauth2/token",
      tokenRequest(
        {
          grant_type: "authorization_code",
          code: code3,
          redirect_uri: REDIRECT,
          client_id: "900000000000000001",
          client_secret: "client-secret",
        },
        false,
      ),
    );
    expect(post.status).toBe(200);
  });

  it("Cancel redirects with error=access_denied and the state; an unregistered redirect_uri gets no redirect", async () => {
    const { call } = setup();
    const back = await approve(call, "cancel");
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("st-1");
    expect(back.searchParams.get("code")).toBeNull();
    const bad = await call(
      `/oauth2/authorize?client_id=900000000000000001&response_type=code&scope=bot%20applications.commands&redirect_uri=${encodeURIComponent("https://evil.test/cb")}`,
    );
    expect(bad.status).toBe(400);
  });
});

describe("fake chat server: REST", () => {
  const json = (method: string, body: unknown, auth?: string): RequestInit => ({
    method,
    headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
    body: JSON.stringify(body),
  });

  it("bulk-overwrites guild commands with the bot token only, for an installed guild, with valid commands", async () => {
    const { call } = setup();
    const path = `/api/v10/applications/900000000000000001/guilds/${TEST_GUILD.id}/commands`;
    const cmds = [{ name: "hello", description: "Say hello", type: 1 }];
    expect((await call(path, json("PUT", cmds, "Bot bot-token"))).status).toBe(403); // not installed yet
    await approve(call);
    expect((await call(path, json("PUT", cmds, "Bot wrong"))).status).toBe(401);
    expect((await call(path, json("PUT", cmds))).status).toBe(401);
    expect((await call(path, json("PUT", [{ name: "Bad Name", description: "x" }], "Bot bot-token"))).status).toBe(400);
    expect((await call(path, { method: "PUT", headers: { authorization: "Bot bot-token" }, body: "[]" })).status).toBe(
      400,
    );
    const ok = await call(path, json("PUT", cmds, "Bot bot-token"));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject([{ name: "hello", guild_id: TEST_GUILD.id }]);
  });

  it("answers 429 with Retry-After when the test switch asks, then serves again", async () => {
    const { call } = setup();
    await approve(call);
    await call("/__fake/rate-limit", json("POST", { count: 1, retryAfter: 2 }));
    const path = `/api/v10/channels/${TEST_GUILD.channels[0]}/messages`;
    const limited = await call(path, json("POST", { content: "hi" }, "Bot bot-token"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toMatchObject({ retry_after: 2, global: false });
    const sent = await call(path, json("POST", { content: "hi" }, "Bot bot-token"));
    expect(sent.status).toBe(200);
    const message = (await sent.json()) as { id: string };
    const edited = await call(`${path}/${message.id}`, json("PATCH", { content: "edited" }, "Bot bot-token"));
    expect(await edited.json()).toMatchObject({ content: "edited" });
    expect(
      (await call(`/api/v10/channels/999/messages`, json("POST", { content: "hi" }, "Bot bot-token"))).status,
    ).toBe(404);
    const recorded = (await (await call("/__fake/recorded")).json()) as { path: string; status: number }[];
    expect(recorded.map((r) => r.status)).toContain(429);
  });

  it("trigger takes the server as resourceId too (what the test-event route sends)", async () => {
    const { call } = setup();
    const res = await call(
      "/__fake/trigger",
      json("POST", { kind: "command", resourceId: OTHER_GUILD.id, name: "hi" }),
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { payload: { guild_id: string } }).payload.guild_id).toBe(OTHER_GUILD.id);
  });

  it("trigger signs a command the verifier accepts; callback, @original and followups need the live interaction token", async () => {
    const { call, delivered } = setup();
    const res = await call(
      "/__fake/trigger",
      json("POST", { kind: "command", guildId: TEST_GUILD.id, name: "hello", text: "hi" }),
    );
    expect(res.status).toBe(200);
    const out = (await res.json()) as { payload: any; status: number; body: unknown };
    expect(out).toMatchObject({ status: 202, body: null });
    const request = delivered[0]!;
    const raw = await request.text();
    const check = await verifyEd25519Webhook(await ed25519PublicKeyHex(SEED), {
      signatureHex: request.headers.get("x-signature-ed25519"),
      timestamp: request.headers.get("x-signature-timestamp"),
      rawBody: raw,
    });
    expect(check).toEqual({ ok: true });
    const { id, token } = out.payload;
    expect(out.payload).toMatchObject({
      type: 2,
      guild_id: TEST_GUILD.id,
      data: { name: "hello", options: [{ name: "text", value: "hi" }] },
    });
    expect(
      (await call(`/api/v10/webhooks/900000000000000001/${token}`, json("POST", { content: "early" }))).status,
    ).toBe(404);
    expect((await call(`/api/v10/interactions/${id}/wrong/callback`, json("POST", { type: 5 }))).status).toBe(404);
    expect((await call(`/api/v10/interactions/${id}/${token}/callback`, json("POST", { type: 5 }))).status).toBe(204);
    expect((await call(`/api/v10/interactions/${id}/${token}/callback`, json("POST", { type: 5 }))).status).toBe(400);
    expect(
      (
        await call(
          `/api/v10/webhooks/900000000000000001/${token}/messages/@original`,
          json("PATCH", { content: "done" }),
        )
      ).status,
    ).toBe(200);
    expect(
      (await call(`/api/v10/webhooks/900000000000000001/${token}`, json("POST", { content: "more" }))).status,
    ).toBe(200);
    expect(
      (await call(`/api/v10/webhooks/900000000000000001/not-a-token`, json("POST", { content: "more" }))).status,
    ).toBe(401);
  });
});

describe("fake chat server as a worker (configured by vars)", () => {
  const workerEnv = (received: Request[]): FakeChatServerEnv => ({
    FAKE_BASE_URL: FAKE,
    CHATSERVER_APPLICATION_ID: "900000000000000002",
    CHATSERVER_CLIENT_ID: "900000000000000002",
    CHATSERVER_CLIENT_SECRET: "s",
    CHATSERVER_BOT_TOKEN: "b",
    CHATSERVER_SIGNING_SEED: SEED,
    CHATSERVER_WEBHOOK_URL: "https://plugin.local/webhook",
    CHATSERVER_REDIRECT_URIS: "https://plugin.local/oauth/callback",
    CHATSERVER_GATEWAY_HEARTBEAT_MS: "200",
    PLUGIN: {
      fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
        received.push(new Request(input, init));
        return Response.json({ type: 5 });
      },
    } as unknown as Fetcher,
    FAKE_STATE: null as unknown as FakeChatServerEnv["FAKE_STATE"],
  });

  it("serves the consent page for its client id, signs command triggers with its seed and delivers through the PLUGIN binding", async () => {
    const received: Request[] = [];
    const fake = fakeFromEnv(workerEnv(received));
    const call = (path: string, init?: RequestInit) => fake.fetch(new Request(FAKE + path, init));
    const page = await call(
      `/oauth2/authorize?client_id=900000000000000002&response_type=code&scope=bot%20applications.commands&redirect_uri=${encodeURIComponent("https://plugin.local/oauth/callback")}`,
    );
    expect(page.status).toBe(200);
    const wrongClient = await call(
      `/oauth2/authorize?client_id=900000000000000001&response_type=code&scope=bot%20applications.commands&redirect_uri=${encodeURIComponent("https://plugin.local/oauth/callback")}`,
    );
    expect(wrongClient.status).toBe(400);
    const trigger = await call("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    expect(((await trigger.json()) as { status: number }).status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]!.url).toBe("https://plugin.local/webhook");
    const raw = await received[0]!.text();
    expect(JSON.parse(raw)).toMatchObject({ type: 2, application_id: "900000000000000002", data: { name: "hello" } });
    const check = await verifyEd25519Webhook(await ed25519PublicKeyHex(SEED), {
      signatureHex: received[0]!.headers.get("x-signature-ed25519"),
      timestamp: received[0]!.headers.get("x-signature-timestamp"),
      rawBody: raw,
    });
    expect(check).toEqual({ ok: true });
    const gateway = await call("/__fake/gateway");
    expect(await gateway.json()).toMatchObject({ url: "wss://discord.fake/gateway", heartbeatIntervalMS: 200 });
    expect((await call("/__fake/trigger", { method: "POST", body: JSON.stringify({ kind: "typing" }) })).status).toBe(
      400,
    );
    expect((await call("/__fake/reset", { method: "POST" })).status).toBe(204);
  });

  it("the worker serves every request from its one FakeChatServerState actor", async () => {
    const names: string[] = [];
    const env = {
      ...workerEnv([]),
      FAKE_STATE: {
        idFromName: (name: string) => {
          names.push(name);
          return name;
        },
        get: () => ({ fetch: async (request: Request) => new Response(`actor saw ${new URL(request.url).pathname}`) }),
      } as unknown as FakeChatServerEnv["FAKE_STATE"],
    };
    const answer = await fakeChatServerWorker.fetch(new Request(`${FAKE}/gateway`), env);
    expect(await answer.text()).toBe("actor saw /gateway");
    expect(names).toEqual(["fake"]);
  });
});
