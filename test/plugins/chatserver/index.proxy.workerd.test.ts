// The chat-server plugin's proxy routes (reply, followup, send and edit a message) as a project calls
// them, their rate limits, and the connection's health when the chat server refuses the bot token.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { expectError } from "#test/support/workerd/index.ts";
import { APP, install, signedCall, twoProjects, world, type World } from "./index.fixture.ts";

let alpha: ProjectRow;
let beta: ProjectRow;
beforeEach(async () => {
  ({ alpha, beta } = await twoProjects());
});

describe("proxy routes", () => {
  async function commandFor(w: World) {
    await w.fakeCall("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    await w.settle();
    return JSON.parse(w.dispatcher.calls.at(-1)!.body) as { replyToken: string };
  }

  it("reply edits the deferred answer at the fake; followup adds one; another project cannot use the token", async () => {
    const w = world();
    await install(w, alpha.id);
    const { replyToken } = await commandFor(w);
    const interaction = [...w.fake.state().interactions.values()][0]!;
    expect(interaction.acknowledged).toBe(true); // by the plugin's inline type 5
    const reply = await signedCall(w, alpha, "/proxy/reply", { replyToken, content: "Hello!" });
    expect(reply.status, await reply.clone().text()).toBe(200);
    expect(w.fake.recorded().at(-1)).toMatchObject({
      method: "PATCH",
      path: `/api/v10/webhooks/${APP}/${interaction.token}/messages/@original`,
      status: 200,
      body: { content: "Hello!" },
    });
    const followup = await signedCall(w, alpha, "/proxy/followup", { replyToken, content: "More" });
    expect(followup.status).toBe(200);
    // Another project replaying alpha's token is refused before anything reaches the chat server.
    const reachedBefore = w.fake.recorded().length;
    const stolen = await signedCall(w, beta, "/proxy/reply", { replyToken, content: "x" });
    const refusal = await expectError(stolen, 400, "invalid_input");
    expect(refusal.error.message).toBe("replyToken is not valid for this project.");
    expect(w.fake.recorded()).toHaveLength(reachedBefore);
    // Two actions used; the third passes, the fourth within the minute is refused before reaching the chat server.
    const third = await signedCall(w, alpha, "/proxy/reply", { replyToken, content: "Third" });
    expect(third.status).toBe(200);
    const calls = w.fake.recorded().length;
    const fourth = await signedCall(w, alpha, "/proxy/reply", { replyToken, content: "Fourth" });
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(w.fake.recorded().length).toBe(calls);
  });

  it("send-message reaches the fake; a channel outside the project's servers is refused; the 4th action in a minute is 429 with Retry-After", async () => {
    const w = world();
    await install(w, alpha.id);
    const sendReq = (project: ProjectRow, channelId: string) =>
      signedCall(w, project, "/proxy/send-message", { channelId, content: "hi" });
    const first = await sendReq(alpha, TEST_GUILD.channels[0]!);
    expect(first.status, await first.clone().text()).toBe(200);
    const { messageId } = (await first.json()) as { messageId: string };
    const edit = await signedCall(w, alpha, "/proxy/edit-message", {
      channelId: TEST_GUILD.channels[0],
      messageId,
      content: "edited",
    });
    expect(edit.status, await edit.clone().text()).toBe(200);
    const foreign = await sendReq(beta, TEST_GUILD.channels[0]!);
    expect(foreign.status).toBe(403);
    expect((await sendReq(alpha, TEST_GUILD.channels[0]!)).status).toBe(200);
    const limited = await sendReq(alpha, TEST_GUILD.channels[0]!);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await limited.json()) as any).error.code).toBe("rate_limited");
    expect(w.fake.recorded().filter((r) => r.method === "POST" && r.path.endsWith("/messages"))).toHaveLength(2);
  });

  it("the chat server's own 429 comes back as rate_limited with its Retry-After", async () => {
    const w = world();
    await install(w, alpha.id);
    await w.fakeCall("/__fake/rate-limit", { method: "POST", body: JSON.stringify({ count: 1, retryAfter: 7 }) });
    const res = await signedCall(w, alpha, "/proxy/send-message", { channelId: TEST_GUILD.channels[0], content: "hi" });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("7");
  });
});

describe("connection health", () => {
  it("the chat server refuses the bot token (401): the call fails and the connection needs reconnecting with the error; a success clears it", async () => {
    const w = world();
    await install(w, alpha.id);
    const send = () =>
      signedCall(w, alpha, "/proxy/send-message", { channelId: TEST_GUILD.channels[0], content: "hi" });
    const health = () =>
      env.DB.prepare("SELECT last_error, last_error_at FROM plugin_oauth_connections WHERE project_id = ?")
        .bind(alpha.id)
        .first<{ last_error: string | null; last_error_at: number | null }>();
    const goodToken = w.env.CHATSERVER_BOT_TOKEN;
    w.env.CHATSERVER_BOT_TOKEN = "a-token-the-chat-server-revoked";
    expect((await send()).status).toBe(502);
    expect(await health()).toMatchObject({ last_error: "401 401: Unauthorized", last_error_at: expect.any(Number) });
    w.env.CHATSERVER_BOT_TOKEN = goodToken;
    expect((await send()).status).toBe(200);
    expect(await health()).toEqual({ last_error: null, last_error_at: null });
  });
});
