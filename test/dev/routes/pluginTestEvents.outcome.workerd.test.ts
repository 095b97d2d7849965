// The test-events route reading what the project's delivery came to.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { createFakeWorkspace, DEFAULT_TEAM } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import { listProjectResources } from "#src/workers/db/resourceClaims.ts";
import type { DevApiEnv } from "#src/dev/routes/devApiEnv.ts";
import { sendTestEvent } from "#src/dev/routes/pluginTestEvents.ts";
import { apiHarness, fakeDispatcher, userWithProject } from "#test/support/workerd/index.ts";
import { APP, BOT_TOKEN, SIGNING_SECRET, callApi, asFetcher, chatWorld } from "./pluginTestEvents.fixture.ts";
import { installedChatProject, installSlackTeam } from "./pluginTestEvents.fixture.ts";
import { projectLogOf } from "#src/workers/api/projectLogs/projectLogRoutes.ts";
import { claim, claimedResource } from "./pluginTestEvents.fixture.ts";

describe("test events: what the project's delivery came to", () => {
  type Recorded = import("#src/runtime/plugins/pluginRoutes.ts").DeliveryOutcome;
  const FAST = { maxMS: 400, quietMS: 100, pollMS: 50 };
  const base = { kind: "command", name: "ping", status: 200 };

  it.each([
    [
      "no handler registered",
      { ...base, status: 404, result: "no_handler", message: "This project has no handler for command /ping." },
      false,
      " No handler is registered: This project has no handler for command /ping.",
      { result: "no_handler", message: "This project has no handler for command /ping." },
    ],
    [
      "the handler threw, with its code and message",
      { ...base, status: 429, result: "failed", error: { code: "rate_limited", message: "Too many actions." } },
      false,
      " The handler threw rate_limited: Too many actions.",
      { result: "failed", error: { code: "rate_limited", message: "Too many actions." } },
    ],
    [
      "the handler ran and made a call",
      { ...base, result: "handled" },
      true,
      " The project's handler ran.",
      { result: "handled" },
    ],
    [
      "no answer within the wait (the project can say, but said nothing)",
      null,
      false,
      " The project did not answer the delivery within 0.4 s (see the `platform dev` terminal).",
      null,
    ],
  ] as const)("%s", async (_name, recorded, calls, sentence, outcome) => {
    const { row } = await installedChatProject();
    // An outcome from before the trigger is not this event's.
    const outcomes: Recorded[] = [{ ...base, seq: 4, result: "failed", error: { code: "old", message: "old" } }];
    const world = chatWorld(
      () => ({ type: 5 }),
      async (payload, fake) => {
        if (calls) {
          const path = `/api/v10/webhooks/${APP}/${payload.token}/messages/@original`;
          await fake.fetch(
            new Request(`https://chat.fake${path}`, {
              method: "PATCH",
              headers: { authorization: `Bot ${BOT_TOKEN}`, "content-type": "application/json" },
              body: JSON.stringify({ content: "pong" }),
            }),
          );
        }
        if (recorded) outcomes.push({ ...recorded, seq: 5 } as Recorded);
      },
    );
    const resource = await claimedResource(row.id, "chatserver", TEST_GUILD.id);
    const answer = await sendTestEvent(
      world.fetcher,
      { plugin: "chatserver", resource: resource!, event: { kind: "command", name: "ping" } },
      { timing: FAST, deliveryOutcomes: async () => [...outcomes] },
    );
    await Promise.all(world.background);
    expect(answer.summary).toBe(
      `Sent a signed command /ping from server "Test Server"; the plugin answered 200.${sentence}`,
    );
    expect(answer.outcome).toEqual(outcome);
    expect(answer.calls).toHaveLength(calls ? 1 : 0);
  });

  it("says at once that a workspace event the project does not listen to was not delivered", async () => {
    const { row } = await userWithProject("ada@example.com", "alpha");
    await claim(row.id, "workspace", DEFAULT_TEAM, { metadata: { events: ["mention"] } });
    const slack = createFakeWorkspace({
      clientId: "111.222",
      clientSecret: "client-secret",
      signingSecret: SIGNING_SECRET,
      webhookUrl: "https://workspace-plugin.test/webhook",
      deliver: async () => new Response(null, { status: 200 }),
    });
    await installSlackTeam(slack);
    const [resource] = await listProjectResources(env.DB, row.id, "workspace");
    const asked: number[] = [];
    const answer = await sendTestEvent(
      asFetcher((request) => slack.fetch(request)),
      { plugin: "workspace", resource: resource!, event: { kind: "message", text: "hi" } },
      {
        timing: { maxMS: 60_000, quietMS: 100, pollMS: 50 },
        deliveryOutcomes: async () => {
          asked.push(1);
          return [];
        },
      },
    );
    expect(answer.outcome).toEqual({
      result: "no_handler",
      message: 'The project registers no workspace.onEvent("message") handler, so the plugin did not deliver it.',
    });
    expect(asked).toHaveLength(1);
  });

  it("the route reads the outcome from the project worker's GET /__plugin/<plugin>, with an internal token", async () => {
    const { user } = await installedChatProject();
    const world = chatWorld(() => ({ type: 5 }));
    const dispatcher = fakeDispatcher((request) => {
      const url = new URL(request.url);
      if (request.method !== "GET" || url.pathname !== "/__plugin/chatserver")
        return new Response("no", { status: 500 });
      const recorded = world.deliveries.length
        ? [{ ...base, seq: 1, status: 429, result: "failed", error: { code: "rate_limited", message: "Slow down." } }]
        : [];
      return Response.json({ outcomes: recorded });
    });
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "command", name: "ping" },
      env: { ...apiHarness({ dispatcher }).env, FAKE_CHATSERVER: world.fetcher } as DevApiEnv,
    });
    const body = (await response.json()) as { summary: string; outcome: unknown };
    expect(body.outcome).toEqual({ result: "failed", error: { code: "rate_limited", message: "Slow down." } });
    expect(body.summary).toMatch(/ The handler threw rate_limited: Slow down\.$/);
    expect(dispatcher.calls.every((c) => c.headers.has("x-platform-internal"))).toBe(true);
  });

  it("points a failed delivery's stack at the project's sources with its log's source map", async () => {
    const { user, row } = await installedChatProject();
    const world = chatWorld(() => ({ type: 5 }));
    const stack = "Error: kaboom\n    at onCommand (file:///state/scripts/proj-alpha/modules/worker.js:1:12)";
    const dispatcher = fakeDispatcher(() =>
      Response.json({
        outcomes: world.deliveries.length
          ? [{ ...base, seq: 1, status: 500, result: "failed", error: { code: "internal", message: "kaboom", stack } }]
          : [],
      }),
    );
    const harness = apiHarness({ dispatcher });
    // worker.js line 1, column 10 comes from src/index.ts 9:4.
    await projectLogOf(harness.env, row.id)!.setSourceMap({
      version: 3,
      sources: ["src/index.ts"],
      mappings: "AAGC,UAKE",
    });
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "command", name: "ping" },
      env: { ...harness.env, FAKE_CHATSERVER: world.fetcher } as DevApiEnv,
    });
    const body = (await response.json()) as { outcome: unknown };
    expect(body.outcome).toEqual({
      result: "failed",
      error: { code: "internal", message: "kaboom", stack: "Error: kaboom\n    at onCommand (src/index.ts:9:4)" },
    });
  });
});
