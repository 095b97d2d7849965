import { describe, expect, it } from "vitest";
import { OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { callApi as callAnyApi, expectError, userWithProject } from "#test/support/workerd/index.ts";
import {
  BOT_TOKEN,
  apiEnvWith,
  callApi,
  untouchedFake,
  chatWorld,
  editOriginal,
  installedChatProject,
} from "./pluginTestEvents.fixture.ts";

describe("clicks and submits as test events (the chat window's and platform plugin trigger's)", () => {
  async function withMessage() {
    const owner = await installedChatProject();
    // The "plugin" defers the update, then (as a handler would) edits the message the button is on.
    const world = chatWorld(() => ({ type: 6 }), editOriginal("Approved"));
    world.fake.state().installedGuilds.add(TEST_GUILD.id);
    const posted = await world.fake.fetch(
      new Request(`https://chat.fake/api/v10/channels/${TEST_GUILD.channels[0]}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bot ${BOT_TOKEN}` },
        body: JSON.stringify({
          content: "Deploy?",
          components: [{ type: 1, components: [{ type: 2, style: 3, label: "Approve", custom_id: "approve:run-1" }] }],
        }),
      }),
    );
    expect(posted.status).toBe(200);
    return { ...owner, world, messageId: ((await posted.json()) as { id: string }).id };
  }

  it("a click reaches the plugin as the component interaction of the message showing it", async () => {
    const { user, world, messageId } = await withMessage();
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "component", customId: "approve:run-1", channel: TEST_GUILD.channels[0], message: messageId },
      env: apiEnvWith({ FAKE_CHATSERVER: world.fetcher }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const answer = (await response.json()) as { summary: string; sent: Record<string, unknown> };
    expect(answer.summary).toMatch(
      /^Sent a signed component approve:run-1 from server "Test Server"; the plugin answered 200\./,
    );
    expect(world.deliveries[0]!.json).toMatchObject({
      type: 3,
      guild_id: TEST_GUILD.id,
      data: { custom_id: "approve:run-1", component_type: 2 },
      message: { id: messageId },
    });
  });

  it("a click on what no message shows is the developer's input: 400 with the fake's reason, nothing delivered", async () => {
    const { user, world } = await withMessage();
    const error = await expectError(
      await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
        token: user.token,
        body: { kind: "component", customId: "approve:run-2" },
        env: apiEnvWith({ FAKE_CHATSERVER: world.fetcher }),
      }),
      400,
      "invalid_input",
    );
    expect(error.error.message).toMatch(/shows a component with custom_id "approve:run-2"/);
    expect(world.deliveries).toHaveLength(0);
  });
});

describe("GET /projects/:slug/plugins/:plugin/chat", () => {
  it("shows the channels of the project's newest claimed server as its member sees them", async () => {
    const { user } = await installedChatProject();
    const world = chatWorld(() => ({ type: 6 }));
    world.fake.state().installedGuilds.add(TEST_GUILD.id);
    world.fake.state().installedGuilds.add(OTHER_GUILD.id);
    for (const guild of [TEST_GUILD, OTHER_GUILD])
      await world.fake.fetch(
        new Request(`https://chat.fake/api/v10/channels/${guild.channels[0]}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bot ${BOT_TOKEN}` },
          body: JSON.stringify({ content: `hello ${guild.name}` }),
        }),
      );
    const response = await callApi("GET", "/projects/alpha/plugins/chatserver/chat", {
      token: user.token,
      env: apiEnvWith({ FAKE_CHATSERVER: world.fetcher }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const chat = (await response.json()) as any;
    expect(chat).toMatchObject({
      plugin: "chatserver",
      resource: { externalId: TEST_GUILD.id, displayName: "Test Server" },
      forms: [],
    });
    expect(chat.channels).toEqual([
      {
        id: TEST_GUILD.channels[0],
        name: "general",
        messages: [expect.objectContaining({ text: "hello Test Server", author: "platform-bot", bot: true, rows: [] })],
      },
    ]);
  });

  it.each([
    ["another user's project", "bob", 404, "not_found"],
    ["a project without an install", "carol", 409, "conflict"],
  ])("refuses %s", async (_name, who, status, code) => {
    await installedChatProject();
    const bob = await userWithProject("bob@example.com", "beta");
    const carol = await userWithProject("carol@example.com", "gamma");
    const token = who === "bob" ? bob.user.token : carol.user.token;
    const slug = who === "bob" ? "alpha" : "gamma";
    const fake = untouchedFake();
    await expectError(
      await callApi("GET", `/projects/${slug}/plugins/chatserver/chat`, {
        token,
        env: apiEnvWith({ FAKE_CHATSERVER: fake.fetcher }),
      }),
      status,
      code,
    );
    expect(fake.requests).toEqual([]);
  });

  it("exists under platform dev only: the deployed API worker has no such route", async () => {
    const { user } = await installedChatProject();
    const response = await callAnyApi("GET", "/projects/alpha/plugins/chatserver/chat", {
      token: user.token,
      env: apiEnvWith({ FAKE_CHATSERVER: untouchedFake().fetcher }),
    });
    await expectError(response, 404, "not_found");
  });
});
