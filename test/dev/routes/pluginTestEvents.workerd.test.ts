import { describe, expect, it } from "vitest";
import { fakeBinding } from "#src/dev/routes/pluginTestEvents.ts";
import { PLUGINS, TRIGGERABLE_PLUGINS } from "#src/contracts/pluginRegistry.ts";
import { andList } from "#src/core/wordList.ts";
import { callApi as callAnyApi, expectError, jsonOfSize, userWithProject } from "#test/support/workerd/index.ts";
import { apiEnvWith, callApi, asFetcher, untouchedFake, installedChatProject } from "./pluginTestEvents.fixture.ts";

describe("the deployed API worker (src/workers/api/index.ts)", () => {
  it("has no test-events route: 404 even with the fakes bound, and nothing reaches them", async () => {
    const { user } = await installedChatProject();
    const chat = untouchedFake();
    const workspace = untouchedFake();
    const response = await callAnyApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "message", text: "hi" },
      env: apiEnvWith({ FAKE_CHATSERVER: chat.fetcher, FAKE_WORKSPACE: workspace.fetcher }),
    });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe("No route for POST /projects/alpha/plugins/chatserver/test-events.");
    expect([...chat.requests, ...workspace.requests]).toEqual([]);
  });
});

describe("POST /projects/:slug/plugins/:plugin/test-events: refusals (nothing reaches the fake)", () => {
  const tooLong = "x".repeat(2001);
  it.each([
    ["without a CLI token", { token: false }, 401, "unauthorized", /token/i],
    ["another user's project", { as: "bob" }, 404, "not_found", /No project named "alpha"/],
    ["an unknown plugin", { plugin: "fax" }, 404, "not_found", /No plugin named "fax"/],
    [
      "a kind the plugin does not have",
      { body: { kind: "mention" } },
      400,
      "invalid_input",
      /kind must be one of command, message, reaction, component, modal for chatserver \(got "mention"\)/,
    ],
    [
      "a workspace command",
      { plugin: "workspace", body: { kind: "command", name: "hello" } },
      400,
      "invalid_input",
      /kind must be one of message, mention, reaction, action, view for workspace/,
    ],
    ["a missing kind", { body: { text: "hi" } }, 400, "invalid_input", /kind must be one of/],
    [
      "a command without a name",
      { body: { kind: "command", text: "hi" } },
      400,
      "invalid_input",
      /command needs a name/,
    ],
    [
      "a command name with its slash",
      { body: { kind: "command", name: "/hello" } },
      400,
      "invalid_input",
      /without the leading \//,
    ],
    [
      "a command name over 32 characters",
      { body: { kind: "command", name: "a".repeat(33) } },
      400,
      "invalid_input",
      /1–32/,
    ],
    [
      "a name on a message",
      { body: { kind: "message", name: "hello" } },
      400,
      "invalid_input",
      /name applies to chatserver commands only/,
    ],
    [
      "text that is not a string",
      { body: { kind: "message", text: 42 } },
      400,
      "invalid_input",
      /text must be a string/,
    ],
    [
      "empty text",
      { body: { kind: "message", text: "" } },
      400,
      "invalid_input",
      /text must be 1–2000 characters \(got 0\)/,
    ],
    [
      "text over 2000 characters",
      { body: { kind: "message", text: tooLong } },
      400,
      "invalid_input",
      /text must be 1–2000 characters \(got 2001\)/,
    ],
    [
      "an unknown field",
      { body: { kind: "message", thread: "C1" } },
      400,
      "invalid_input",
      /Unknown field\(s\) "thread": a test event takes kind, text, name, channel, message, customId/,
    ],
    [
      "a click without the component's customId",
      { body: { kind: "component" } },
      400,
      "invalid_input",
      /A chatserver component needs customId \(the component's or modal's customId; --custom-id in the CLI\)/,
    ],
    [
      "a customId over 100 characters",
      { body: { kind: "component", customId: "a".repeat(101) } },
      400,
      "invalid_input",
      /customId must be a string of 1–100 characters/,
    ],
    [
      "values on a modal submit",
      { body: { kind: "modal", customId: "m", values: ["a"] } },
      400,
      "invalid_input",
      /values applies to chatserver component only/,
    ],
    [
      "values that are not a list",
      { body: { kind: "component", customId: "pick", values: "a,b" } },
      400,
      "invalid_input",
      /values must be an array of at most 25 strings/,
    ],
    [
      "fields that are not strings",
      { body: { kind: "modal", customId: "m", fields: { title: 42 } } },
      400,
      "invalid_input",
      /fields\.title must be a string of at most 4000 characters/,
    ],
    [
      "an actionId on the chat server",
      { body: { kind: "component", customId: "a", actionId: "x" } },
      400,
      "invalid_input",
      /actionId applies to workspace action only/,
    ],
    [
      "a workspace view without its callbackId",
      { plugin: "workspace", body: { kind: "view", fields: { title: "x" } } },
      400,
      "invalid_input",
      /A workspace view needs callbackId/,
    ],
    [
      "a channel that is not an id",
      { body: { kind: "message", channel: "#general" } },
      400,
      "invalid_input",
      /channel must be a channel or message id/,
    ],
    ["malformed JSON", { body: '{"kind": "message"' }, 400, "malformed_json", /not valid JSON/],
    ["a JSON array", { body: "[]" }, 400, "malformed_json", /JSON object/],
    [
      "an oversized body",
      { body: jsonOfSize({ kind: "message" }, 17 * 1024) },
      413,
      "payload_too_large",
      /larger than 16384 bytes/,
    ],
    [
      "the dev API worker without the fake providers bound",
      { fake: false },
      404,
      "not_found",
      /Test events need the local fake providers: they work with `platform dev` only\./,
    ],
  ] as const)("refuses %s", async (_name, c: Record<string, any>, status, code, message) => {
    const { user } = await installedChatProject();
    const bob = await userWithProject("bob@example.com", "beta");
    const chat = untouchedFake();
    const workspace = untouchedFake();
    const response = await callApi("POST", `/projects/alpha/plugins/${c.plugin ?? "chatserver"}/test-events`, {
      ...(c.token === false ? {} : { token: c.as === "bob" ? bob.user.token : user.token }),
      body: c.body ?? { kind: "message", text: "hi" },
      env: apiEnvWith(c.fake === false ? {} : { FAKE_CHATSERVER: chat.fetcher, FAKE_WORKSPACE: workspace.fetcher }),
    });
    const error = await expectError(response, status, code);
    expect(error.error.message).toMatch(message);
    expect([...chat.requests, ...workspace.requests]).toEqual([]);
  });

  it("reaches each plugin's fake at FAKE_<ID>, the binding `platform dev` gives the API worker", () => {
    expect(fakeBinding("chatserver")).toBe("FAKE_CHATSERVER");
    expect(fakeBinding("workspace")).toBe("FAKE_WORKSPACE");
  });

  const withEvents = andList(TRIGGERABLE_PLUGINS.map(({ id }) => id));
  it.each(PLUGINS.filter((plugin) => !("triggers" in plugin)).map(({ id }) => [id]))(
    "refuses %s, which has no events, naming the plugins that have",
    async (plugin) => {
      const { user } = await installedChatProject();
      const response = await callApi("POST", `/projects/alpha/plugins/${plugin}/test-events`, {
        token: user.token,
        body: { kind: "message" },
        env: apiEnvWith({ FAKE_CHATSERVER: untouchedFake().fetcher, FAKE_WORKSPACE: untouchedFake().fetcher }),
      });
      const error = await expectError(response, 400, "invalid_input");
      expect(error.error.message).toBe(
        `The ${plugin} plugin has no events to send: test events exist for ${withEvents}.`,
      );
    },
  );

  it.each(TRIGGERABLE_PLUGINS.map((plugin) => [plugin.id, plugin.triggers.kinds] as const))(
    "refuses a kind %s does not have, listing its kinds (%j)",
    async (plugin, kinds) => {
      const { user } = await installedChatProject();
      const response = await callApi("POST", `/projects/alpha/plugins/${plugin}/test-events`, {
        token: user.token,
        body: { kind: "fax" },
        env: apiEnvWith({ [fakeBinding(plugin)]: untouchedFake().fetcher }),
      });
      const error = await expectError(response, 400, "invalid_input");
      expect(error.error.message).toBe(`kind must be one of ${kinds.join(", ")} for ${plugin} (got "fax").`);
    },
  );

  it("answers 409 with the install command when the project has no install of that plugin yet", async () => {
    const { user } = await installedChatProject();
    const workspace = untouchedFake();
    const error = await expectError(
      await callApi("POST", "/projects/alpha/plugins/workspace/test-events", {
        token: user.token,
        body: { kind: "message" },
        env: apiEnvWith({ FAKE_WORKSPACE: workspace.fetcher }),
      }),
      409,
      "conflict",
    );
    expect(error.error.message).toBe(
      'Project "alpha" has no workspace install yet: run `platform plugin install workspace` first.',
    );
    expect(workspace.requests).toEqual([]);
  });

  it("answers 502 with the fake's answer when the fake refuses the trigger", async () => {
    const { user } = await installedChatProject();
    const fake = asFetcher((request) =>
      new URL(request.url).pathname === "/__fake/recorded"
        ? Response.json([])
        : Response.json({ error: "a command needs a name" }, { status: 400 }),
    );
    const response = await callApi("POST", "/projects/alpha/plugins/chatserver/test-events", {
      token: user.token,
      body: { kind: "message" },
      env: apiEnvWith({ FAKE_CHATSERVER: fake }),
    });
    const error = (await expectError(response, 502, "upstream_error")) as {
      error: { message: string; details?: unknown };
    };
    expect(error.error.message).toBe(
      'The fake chatserver provider refused the test event (400): {"error":"a command needs a name"}',
    );
    expect(error.error.details).toEqual({ status: 400, answer: { error: "a command needs a name" } });
  });
});
