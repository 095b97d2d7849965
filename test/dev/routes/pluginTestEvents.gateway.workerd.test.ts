// Chat-server test messages and reactions go over the fake's Gateway to the
// plugin's relay (the only way the real chat server delivers them).
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { sendTestEvent } from "#src/dev/routes/pluginTestEvents.ts";
import { listProjectResources } from "#src/workers/db/resourceClaims.ts";
import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import type { GatewayConnection } from "#src/plugins/chatserver/gatewayRelay/gatewayConnection.ts";
import { relayConnection } from "#src/plugins/chatserver/gatewayRelay/GatewayRelay.ts";
import { fakeDispatcher, platformRejection, pluginEnv, userWithProject } from "#test/support/workerd/index.ts";
import { testChatServer } from "#test/support/workerd/index.ts";
import { asFetcher, claim } from "./pluginTestEvents.fixture.ts";

const FAKE = "https://chat.fake";
const APP = "999999999999999999";
const FAST = { maxMS: 300, quietMS: 100, pollMS: 50 };

async function setup() {
  const { row } = await userWithProject("ada@example.com", "alpha");
  await claim(row.id, "chatserver", TEST_GUILD);
  const fake = testChatServer({ baseUrl: FAKE, applicationId: APP, webhookUrl: "https://chat-plugin.test/webhook" });
  const [resource] = await listProjectResources(env.DB, row.id, "chatserver");
  return { fake, resource: resource!, fetcher: asFetcher((r) => fake.fetch(r)) };
}

let relay: GatewayConnection | null = null;
afterEach(() => {
  relay?.shutdown();
  relay = null;
});

describe("test events over the chat server's Gateway", () => {
  it("a message reaches the project through the relay; the summary says it went over the Gateway", async () => {
    const { fake, resource, fetcher } = await setup();
    const dispatcher = fakeDispatcher(() => Response.json({ ok: true }));
    relay = relayConnection(
      pluginEnv({
        DISPATCHER: dispatcher.namespace,
        CHATSERVER_BASE_URL: FAKE,
        CHATSERVER_APPLICATION_ID: APP,
        CHATSERVER_BOT_TOKEN: "bot-token",
        CHATSERVER_FETCH: { fetch: (r: Request) => fake.fetch(r) },
      }) as ChatServerEnv,
      [0, 1],
      { load: async () => null, save: async () => {} },
    );
    await relay.start();
    for (let i = 0; i < 5 && relay.status().phase !== "ready"; i++) await new Promise((r) => setTimeout(r, 5));
    expect(relay.status().phase).toBe("ready");

    const answer = await sendTestEvent(
      fetcher,
      { plugin: "chatserver", resource, event: { kind: "message", text: "hi" } },
      { timing: FAST },
    );
    await relay.settled();
    expect(answer.summary).toBe(
      `Sent a message "hi" from server "Test Server" over the chat server's Gateway; the plugin's relay is connected.`,
    );
    expect(answer.pluginAnswer).toEqual({ status: null });
    expect(dispatcher.calls.map((c) => JSON.parse(c.body))).toMatchObject([
      { kind: "event", name: "message", event: { content: "hi", guildId: TEST_GUILD.id } },
    ]);
  });

  it("without a relay session the event goes nowhere, and the route says so (not_ready, 503)", async () => {
    const { resource, fetcher } = await setup();
    const error = await platformRejection(
      sendTestEvent(fetcher, { plugin: "chatserver", resource, event: { kind: "reaction" } }, { timing: FAST }),
    );
    expect(error.code).toBe("not_ready");
    expect(error.message).toContain("Gateway relay is not connected");
  });
});
