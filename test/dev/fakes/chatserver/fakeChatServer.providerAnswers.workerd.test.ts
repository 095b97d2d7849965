// The plugin's own REST client (chatServerApi.ts) against the fake, asserting the provider's documented answers
// (resources/message.mdx, interactions/receiving-and-responding.mdx, interactions/application-commands.mdx).
import { describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { PlatformError } from "#src/core/errors.ts";
import { callChatServer } from "#src/plugins/chatserver/chatServerApi.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import { FAKE, setup, approve } from "./fakeChatServer.fixture.ts";

describe("fake chat server: REST answers as the provider's", () => {
  async function installed() {
    const world = setup();
    await approve(world.call);
    const env = {
      CHATSERVER_BASE_URL: FAKE,
      CHATSERVER_BOT_TOKEN: "bot-token",
      CHATSERVER_FETCH: { fetch: (r: Request) => world.fake.fetch(r) },
    } as unknown as ChatServerEnv;
    const bot = <T = any>(method: string, path: string, body?: unknown) =>
      callChatServer<T>(env, { method, path, body, auth: "bot" });
    const webhook = <T = any>(method: string, path: string, body?: unknown) =>
      callChatServer<T>(env, { method, path, body, auth: "none" });
    return { ...world, bot, webhook };
  }
  const channel = `/channels/${TEST_GUILD.channels[0]}/messages`;
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: PlatformError) => ({ status: error.details?.status, code: error.details?.providerCode }),
    );

  it("GET and DELETE of a message: the message, then 204, then 404 10008 Unknown Message", async () => {
    const { bot } = await installed();
    const sent = await bot<{ id: string }>("POST", channel, { content: "to delete" });
    expect(await bot("GET", `${channel}/${sent.id}`)).toMatchObject({ id: sent.id, content: "to delete" });
    expect(await bot("DELETE", `${channel}/${sent.id}`)).toBeNull();
    expect(await refusal(bot("GET", `${channel}/${sent.id}`))).toEqual({ status: 404, code: 10008 });
    expect(await refusal(bot("DELETE", `${channel}/${sent.id}`))).toEqual({ status: 404, code: 10008 });
  });

  it("a message of embeds only is sent; one with nothing at all is 50006; more than 10 embeds 50035", async () => {
    const { bot } = await installed();
    const sent = await bot("POST", channel, { embeds: [{ title: "Build passed", description: "all green" }] });
    expect(sent).toMatchObject({ content: "", embeds: [{ title: "Build passed" }] });
    expect(await refusal(bot("POST", channel, {}))).toEqual({ status: 400, code: 50006 });
    expect(await refusal(bot("POST", channel, { embeds: Array(11).fill({ title: "x" }) }))).toEqual({
      status: 400,
      code: 50035,
    });
    // An edit changes only what it names: the embeds stay.
    const edited = await bot("PATCH", `${channel}/${sent.id}`, { content: "now with text" });
    expect(edited).toMatchObject({ content: "now with text", embeds: [{ title: "Build passed" }] });
  });

  it("a multipart message (payload_json + files[0]) is sent with its attachment", async () => {
    const { call } = await installed();
    const form = new FormData();
    form.set("payload_json", JSON.stringify({ content: "the report" }));
    form.set("files[0]", new File(["a,b\n1,2\n"], "report.csv", { type: "text/csv" }));
    const sent = await call(`/api/v10${channel}`, {
      method: "POST",
      headers: { authorization: "Bot bot-token" },
      body: form,
    });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toMatchObject({
      content: "the report",
      attachments: [{ filename: "report.csv", size: 8 }],
    });
    const fileOnly = new FormData();
    fileOnly.set("files[0]", new File(["x"], "x.txt"));
    const bare = await call(`/api/v10${channel}`, {
      method: "POST",
      headers: { authorization: "Bot bot-token" },
      body: fileOnly,
    });
    expect(bare.status).toBe(200);
  });

  it("@original, also spelled %40original, is read, edited and deleted; a followup too", async () => {
    const { call, webhook } = await installed();
    const triggered = await call("/__fake/trigger", {
      method: "POST",
      body: JSON.stringify({ kind: "command", guildId: TEST_GUILD.id, name: "hello" }),
    });
    const { id, token } = ((await triggered.json()) as { payload: { id: string; token: string } }).payload;
    await webhook("POST", `/interactions/${id}/${token}/callback`, { type: 5 });
    const original = `/webhooks/900000000000000001/${token}/messages/%40original`;
    expect(await webhook("PATCH", original, { content: "done" })).toMatchObject({ content: "done" });
    expect(await webhook("GET", original)).toMatchObject({ content: "done" });
    const followup = await webhook<{ id: string }>("POST", `/webhooks/900000000000000001/${token}`, {
      embeds: [{ title: "more" }],
    });
    const followupPath = `/webhooks/900000000000000001/${token}/messages/${followup.id}`;
    expect(await webhook("PATCH", followupPath, { content: "more, edited" })).toMatchObject({
      content: "more, edited",
      embeds: [{ title: "more" }],
    });
    expect(await webhook("DELETE", followupPath)).toBeNull();
    expect(await webhook("DELETE", original)).toBeNull();
    expect(await refusal(webhook("GET", original))).toEqual({ status: 404, code: 10008 });
  });

  it("one guild command is created (201), or overwritten by name (200); read, edited, deleted", async () => {
    const { bot } = await installed();
    const path = `/applications/900000000000000001/guilds/${TEST_GUILD.id}/commands`;
    const created = await bot<{ id: string }>("POST", path, { name: "ping", description: "Ping", type: 1 });
    expect(created).toMatchObject({ name: "ping", guild_id: TEST_GUILD.id });
    const again = await bot<{ id: string; description: string }>("POST", path, { name: "ping", description: "Pong?" });
    expect(again).toMatchObject({ id: created.id, description: "Pong?" });
    expect(await bot("GET", `${path}/${created.id}`)).toMatchObject({ name: "ping" });
    expect(await bot("PATCH", `${path}/${created.id}`, { description: "Edited" })).toMatchObject({
      description: "Edited",
    });
    expect(await refusal(bot("POST", path, { name: "Bad Name", description: "x" }))).toEqual({
      status: 400,
      code: 50035,
    });
    expect(await bot("DELETE", `${path}/${created.id}`)).toBeNull();
    expect(await bot("GET", path)).toEqual([]);
    expect(await refusal(bot("GET", `${path}/${created.id}`))).toEqual({ status: 404, code: 10063 });
  });

  it("the status of a single create: 201 for a new command, 200 for an overwrite", async () => {
    const { call } = await installed();
    const path = `/api/v10/applications/900000000000000001/guilds/${TEST_GUILD.id}/commands`;
    const create = () =>
      call(path, {
        method: "POST",
        headers: { authorization: "Bot bot-token", "content-type": "application/json" },
        body: JSON.stringify({ name: "ping", description: "Ping" }),
      });
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(200);
  });

  it("global commands: bulk overwrite, list, create one", async () => {
    const { bot } = await installed();
    const path = "/applications/900000000000000001/commands";
    expect(await bot("PUT", path, [{ name: "help", description: "Help" }])).toMatchObject([{ name: "help" }]);
    expect(await bot("POST", path, { name: "about", description: "About" })).toMatchObject({ name: "about" });
    expect(((await bot("GET", path)) as { name: string }[]).map((c) => c.name)).toEqual(["help", "about"]);
    expect(await refusal(bot("GET", "/applications/900000000000000009/commands"))).toEqual({
      status: 403,
      code: 50001,
    });
  });
});
