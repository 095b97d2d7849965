import { describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { createFakeWorkspace, DEFAULT_TEAM } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import { ed25519PublicKeyHex, verifyEd25519Webhook } from "#src/core/crypto/ed25519.ts";
import { verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";
import { DEFAULT_CALL_WAIT, sendTestEvent } from "#src/dev/routes/pluginTestEvents.ts";
import { userWithProject } from "#test/support/workerd/index.ts";
import { SEED, APP, SIGNING_SECRET, apiEnvWith, callApi, asFetcher } from "./pluginTestEvents.fixture.ts";
import {
  type Delivery,
  chatWorld,
  editOriginal,
  installedChatProject,
  installSlackTeam,
} from "./pluginTestEvents.fixture.ts";
import { claim, claimedResource, recordDelivery } from "./pluginTestEvents.fixture.ts";

describe("POST /projects/:slug/plugins/:plugin/test-events: sending", () => {
  it("chatserver command: the fake signs an interaction for the newest claimed server; the answer lists the handler's provider calls", async () => {
    const { user } = await installedChatProject();
    const world = chatWorld(
      () => ({ type: 5 }), // deferred, as the real plugin answers a command
      editOriginal("Hello, Test User!"),
    );
    // How many calls the fake had recorded at each of the route's polls.
    const polls: number[] = [];
    const fetcher = asFetcher(async (request) => {
      const response = await world.fake.fetch(request);
      if (new URL(request.url).pathname === "/__fake/recorded")
        polls.push(((await response.clone().json()) as unknown[]).length);
      return response;
    });
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "command", name: "hello", text: "hi" },
      env: apiEnvWith({ FAKE_CHATSERVER: fetcher }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    // It stopped once the calls went quiet, not at the 5 s cap: from the poll that saw the handler's
    // call, polls come at least pollMS apart and the wait ends after quietMS without a change.
    const sinceCall = polls.slice(polls.findIndex((n) => n > 0));
    expect(polls[0]).toBe(0);
    expect(sinceCall.every((n) => n === 1)).toBe(true);
    expect(sinceCall.length).toBeLessThanOrEqual(Math.floor(DEFAULT_CALL_WAIT.quietMS / DEFAULT_CALL_WAIT.pollMS) + 2);
    await Promise.all(world.background);

    // What the fake delivered: one correctly signed interaction for the newest claimed server.
    expect(world.deliveries).toHaveLength(1);
    const [delivery] = world.deliveries;
    const check = await verifyEd25519Webhook(await ed25519PublicKeyHex(SEED), {
      signatureHex: delivery!.headers.get("X-Signature-Ed25519"),
      timestamp: delivery!.headers.get("X-Signature-Timestamp"),
      rawBody: delivery!.body,
    });
    expect(check.ok).toBe(true);
    expect(delivery!.json).toMatchObject({
      type: 2,
      application_id: APP,
      guild_id: TEST_GUILD.id,
      data: { name: "hello", options: [{ name: "text", type: 3, value: "hi" }] },
    });

    const body = await response.json();
    expect(body).toEqual({
      sent: {
        kind: "command",
        name: "hello",
        text: "hi",
        resource: { plugin: "chatserver", externalId: TEST_GUILD.id, displayName: "Test Server" },
      },
      summary: 'Sent a signed command /hello "hi" from server "Test Server"; the plugin answered 200.',
      pluginAnswer: { status: 200 },
      outcome: null,
      calls: [
        {
          method: "PATCH",
          // The interaction's token stays out of the answer, like the bot's.
          path: `/api/v10/webhooks/${APP}/<token>/messages/@original`,
          body: { content: "Hello, Test User!" },
          status: 200,
        },
      ],
    });
  });

  it("workspace message: the fake signs an event for the installed team; the handler's thread reply comes back without its bot token", async () => {
    const { user, row } = await userWithProject("ada@example.com", "alpha");
    await claim(row.id, "workspace", DEFAULT_TEAM);
    const deliveries: Delivery[] = [];
    const background: Promise<unknown>[] = [];
    let botToken = "";
    const slack = createFakeWorkspace({
      clientId: "111.222",
      clientSecret: "client-secret",
      signingSecret: SIGNING_SECRET,
      webhookUrl: "https://workspace-plugin.test/webhook",
      async deliver(request) {
        const json = await recordDelivery(deliveries, request);
        const reply = new Request("https://slack.fake/api/chat.postMessage", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${botToken}` },
          body: JSON.stringify({
            channel: json.event.channel,
            thread_ts: json.event.ts,
            text: `echo: ${json.event.text}`,
          }),
        });
        background.push(new Promise((resolve) => setTimeout(resolve, 100)).then(() => slack.fetch(reply)));
        return new Response(null, { status: 200 });
      },
    });
    botToken = await installSlackTeam(slack);

    const response = await callApi("POST", "/projects/alpha/plugins/workspace/test-events", {
      token: user.token,
      body: { kind: "message", text: "hi" },
      env: apiEnvWith({ FAKE_WORKSPACE: asFetcher((request) => slack.fetch(request)) }),
    });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    await Promise.all(background);
    expect(text).not.toContain(botToken);

    expect(deliveries).toHaveLength(1);
    const [delivery] = deliveries;
    const check = await verifyWorkspaceSignature(SIGNING_SECRET, {
      timestampHeader: delivery!.headers.get("X-Slack-Request-Timestamp"),
      signatureHeader: delivery!.headers.get("X-Slack-Signature"),
      rawBody: delivery!.body,
    });
    expect(check.ok).toBe(true);
    expect(delivery!.json).toMatchObject({
      type: "event_callback",
      team_id: DEFAULT_TEAM.id,
      event: { type: "message", text: "hi" },
    });

    expect(JSON.parse(text)).toEqual({
      sent: {
        kind: "message",
        text: "hi",
        resource: { plugin: "workspace", externalId: DEFAULT_TEAM.id, displayName: "Test Workspace" },
      },
      summary: 'Sent a signed message "hi" from workspace "Test Workspace"; the plugin answered 200.',
      pluginAnswer: { status: 200 },
      outcome: null,
      calls: [
        {
          method: "chat.postMessage",
          params: { channel: delivery!.json.event.channel, thread_ts: delivery!.json.event.ts, text: "echo: hi" },
          status: 200,
          ok: true,
          at: expect.any(Number),
        },
      ],
    });
  });

  it("reports an inline reply, and no calls when the handler made none (after the wait)", async () => {
    const { row } = await installedChatProject();
    const world = chatWorld(() => ({ type: 4, data: { content: "pong" } }));
    const resource = await claimedResource(row.id, "chatserver", TEST_GUILD.id);
    const answer = await sendTestEvent(
      world.fetcher,
      { plugin: "chatserver", resource, event: { kind: "command", name: "ping" } },
      { timing: { maxMS: 300, quietMS: 100, pollMS: 50 } },
    );
    expect(answer).toEqual({
      sent: {
        kind: "command",
        name: "ping",
        resource: { plugin: "chatserver", externalId: TEST_GUILD.id, displayName: "Test Server" },
      },
      summary: 'Sent a signed command /ping from server "Test Server"; the plugin answered 200.',
      pluginAnswer: { status: 200, inlineReply: "pong" },
      outcome: null,
      calls: [],
    });
  });
});
