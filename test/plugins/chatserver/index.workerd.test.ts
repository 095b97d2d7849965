// The chat-server plugin worker against the fake chat server, in workerd: webhook verification,
// PING, and commands and events delivered to the project (once, even when delivered twice).
import { beforeEach, describe, expect, it } from "vitest";
import { OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { APP, commandBody, install, signedWebhook, twoProjects, world } from "./index.fixture.ts";

let alpha: ProjectRow;
beforeEach(async () => {
  ({ alpha } = await twoProjects());
});

describe("POST /webhook: verification", () => {
  const ping = JSON.stringify({ id: "1", application_id: APP, type: 1, token: "t", version: 1 });
  const cases: [string, number, () => Promise<Request>][] = [
    ["valid PING", 200, () => signedWebhook(ping)],
    [
      "forged (signed by another key)",
      401,
      () => signedWebhook(ping, { seed: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb" }),
    ],
    ["tampered body", 401, async () => new Request(await signedWebhook(ping), { body: ping.replace('"1"', '"2"') })],
    ["stale (6 minutes old)", 401, () => signedWebhook(ping, { ts: Math.floor(Date.now() / 1000) - 360 })],
    ["from the future (6 minutes)", 401, () => signedWebhook(ping, { ts: Math.floor(Date.now() / 1000) + 360 })],
    ["unsigned", 401, () => signedWebhook(ping, { signature: null, timestamp: null })],
    ["no timestamp", 401, () => signedWebhook(ping, { timestamp: null })],
    ["malformed signature", 401, () => signedWebhook(ping, { signature: "abcd" })],
    ["signed non-JSON", 400, () => signedWebhook("not json")],
    ["signed JSON array", 400, () => signedWebhook("[1]")],
    ["signed unknown interaction type", 400, () => signedWebhook(JSON.stringify({ id: "1", type: 99 }))],
    ["oversized (> 1 MB)", 413, () => signedWebhook(JSON.stringify({ type: 1, pad: "x".repeat(1024 * 1024) }))],
  ];
  it.each(cases)("%s → %i, nothing delivered", async (_name, status, make) => {
    const w = world();
    const response = await w.call(await make());
    expect(response.status, await response.clone().text()).toBe(status);
    if (status === 200) expect(await response.json()).toEqual({ type: 1 });
    else expect(((await response.json()) as { error: { message: string } }).error.message).toBeTruthy();
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("the fake's own PING-shaped trigger and an event PING (type 0) are answered", async () => {
    const w = world();
    const envelopePing = JSON.stringify({ version: 1, application_id: APP, type: 0, event: null });
    expect((await w.call(await signedWebhook(envelopePing))).status).toBe(204);
  });
});

describe("POST /webhook: commands and events", () => {
  it("an unknown server gets 404 with a clear message", async () => {
    const w = world();
    const response = await w.call(await signedWebhook(commandBody(OTHER_GUILD.id)));
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toContain(`Server ${OTHER_GUILD.id} is not connected`);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("a command is deferred (type 5) and reaches the project once even when delivered twice", async () => {
    const w = world();
    expect((await install(w, alpha.id)).status).toBe(200);
    const res = await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello", text: "hi", deliveries: 2 }),
    });
    const out = (await res.json()) as { answers: { status: number; body: unknown }[] };
    expect(out.answers).toEqual([
      { status: 200, body: { type: 5 } },
      { status: 200, body: { type: 5 } },
    ]);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(1);
    const call = w.dispatcher.calls[0]!;
    expect(call.scriptName).toBe(alpha.script_name);
    expect(call.url.pathname).toBe("/__plugin/chatserver");
    expect(call.headers.get("x-platform-internal")).toBeTruthy();
    const body = JSON.parse(call.body);
    expect(body).toMatchObject({
      kind: "command",
      name: "hello",
      project: { slug: "alpha" },
      user: { id: "555555555555555555", name: "Test User" },
      event: { guildId: TEST_GUILD.id, options: [{ name: "text", value: "hi" }] },
    });
    expect(typeof body.replyToken).toBe("string");
    expect(call.body).not.toContain('"token"'); // the provider's interaction token never reaches the project
    expect(call.body).not.toContain(String(alpha.id) + ",");
  });

  it("signed message and reaction envelopes (another relay's; the Gateway relay is the provider's way) are dispatched once; bot messages are ignored", async () => {
    const w = world();
    await install(w, alpha.id);
    const envelope = (id: string, type: string, data: Record<string, unknown>) =>
      JSON.stringify({ version: 1, application_id: APP, type: 1, id, event: { type, timestamp: "t", data } });
    const message = envelope("71", "MESSAGE_CREATE", {
      id: "8",
      guild_id: TEST_GUILD.id,
      channel_id: TEST_GUILD.channels[0],
      content: "yo",
      author: { id: "5", username: "u" },
    });
    const reaction = envelope("72", "MESSAGE_REACTION_ADD", {
      user_id: "5",
      message_id: "8",
      guild_id: TEST_GUILD.id,
      channel_id: TEST_GUILD.channels[0],
      emoji: { name: "👍" },
    });
    for (const body of [message, message, reaction, reaction]) {
      expect((await w.call(await signedWebhook(body))).status).toBe(204);
    }
    await w.settle();
    expect(w.dispatcher.calls.map((c) => JSON.parse(c.body)).map((b) => [b.kind, b.name])).toEqual([
      ["event", "message"],
      ["event", "reaction"],
    ]);
    expect(JSON.parse(w.dispatcher.calls[0]!.body).event).toMatchObject({
      type: "message",
      content: "yo",
      guildId: TEST_GUILD.id,
    });
    const botMessage = envelope("77", "MESSAGE_CREATE", {
      id: "8",
      guild_id: TEST_GUILD.id,
      channel_id: "2",
      content: "x",
      author: { id: "9", bot: true },
    });
    expect((await w.call(await signedWebhook(botMessage))).status).toBe(204);
    const unclaimed = envelope("78", "MESSAGE_CREATE", { id: "9", guild_id: OTHER_GUILD.id, content: "x" });
    expect((await w.call(await signedWebhook(unclaimed))).status).toBe(404);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(2);
  });

  it("the fake delivers messages and reactions only over its Gateway, never to /webhook", async () => {
    const w = world();
    await install(w, alpha.id);
    for (const kind of ["message", "reaction"]) {
      const res = await w.fakeCall("/__fake/trigger", {
        method: "POST",
        body: JSON.stringify({ kind, guildId: TEST_GUILD.id, text: "yo" }),
      });
      expect(await res.json()).toMatchObject({ delivered: "gateway", sessions: 0, live: 0 });
    }
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(0);
  });

  it("a failed delivery releases the claim (a retry is delivered) and tells the user", async () => {
    let fail = true;
    const w = world(() => (fail ? new Response("boom", { status: 500 }) : Response.json({ ok: true })));
    await install(w, alpha.id);
    const trigger = await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    const { payload } = (await trigger.json()) as { payload: any };
    await w.settle();
    const state = (await (await w.fakeCall("/__fake/state")).json()) as any;
    // Told at once, privately: the failure is the interaction's answer, an ephemeral message.
    expect(state.messages).toContainEqual(
      expect.objectContaining({ content: "Sorry, this command failed in the project.", flags: 64 }),
    );
    expect(state.interactions[0]).toMatchObject({ acknowledged: true, answeredWith: 4, failed: null });
    fail = false;
    // Re-deliver the same interaction (as a provider retry would): the released claim lets it through; it was
    // answered already, so the webhook says 202.
    expect((await w.call(await signedWebhook(JSON.stringify(payload)))).status).toBe(202);
    await w.settle();
    expect(w.dispatcher.calls).toHaveLength(2);
  });
  it("a command the project has no handler for says so in the chat", async () => {
    const w = world(() => Response.json({ error: { code: "not_found", message: "no handler" } }, { status: 404 }));
    await install(w, alpha.id);
    await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "nope" }),
    });
    await w.settle();
    const state = (await (await w.fakeCall("/__fake/state")).json()) as any;
    expect(state.messages.map((m: any) => m.content)).toContain("This server's project does not handle /nope (yet).");
  });
});
