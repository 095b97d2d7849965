import { describe, expect, it } from "vitest";
import {
  isInstallable,
  PLUGIN_IDS,
  PLUGINS,
  TRIGGERABLE_PLUGINS,
  UNINSTALLABLE_PLUGINS,
} from "#src/contracts/pluginRegistry.ts";
import { andList } from "#src/core/wordList.ts";
import {
  describeCall,
  describePluginStatus,
  openInstallLink,
  pluginCommand,
  triggerParameters,
  type TestEventAnswer,
  triggerReport,
  triggerExitCode,
} from "#src/dev/cli/commands/plugin.ts";

const URL_ = "http://127.0.0.1:8790/install?code=abc";

describe("platform plugin install: opening the link", () => {
  it.each([
    [{ noOpen: true, env: { DISPLAY: ":0" } }, "Not opening a browser (--no-open): open the link yourself.", null],
    [
      { noOpen: false, env: { DISPLAY: ":0", BROWSER: "none" } },
      "Not opening a browser (BROWSER=none): open the link yourself.",
      null,
    ],
    [{ noOpen: false, env: {} }, "Not opening a browser (no display): open the link yourself.", null],
    [{ noOpen: false, env: { DISPLAY: ":0" } }, "Opened the link in your browser (xdg-open).", "xdg-open"],
    [{ noOpen: false, env: { BROWSER: "firefox --new-tab" } }, "Opened the link in your browser (firefox).", "firefox"],
  ])("%o → %s", async (input, line, started) => {
    const starts: string[] = [];
    const said = await openInstallLink(
      URL_,
      { ...input, platform: "linux", onPath: (command) => command === "xdg-open" },
      async (choice, url) => {
        starts.push(`${choice.command} ${[...choice.args, url].join(" ")}`);
        return null;
      },
    );
    expect(said).toBe(line);
    expect(starts.map((s) => s.split(" ")[0])).toEqual(started ? [started] : []);
    if (started) expect(starts[0]).toContain(URL_);
  });

  it("says so when the browser does not start", async () => {
    const said = await openInstallLink(
      URL_,
      { noOpen: false, env: { DISPLAY: ":0" }, platform: "linux", onPath: () => true },
      async () => new Error("spawn xdg-open ENOENT"),
    );
    expect(said).toBe("Could not start xdg-open (spawn xdg-open ENOENT): open the link yourself.");
  });
});

describe("platform plugin status", () => {
  const connection = {
    plugin: "workspace",
    externalUserId: "T0TEST",
    connectedAt: "2030-01-01T00:00:00.000Z",
    tokenExpiresAt: null,
    status: "active" as const,
    revoked: false,
    revokedAt: null,
    lastError: null,
    lastErrorAt: null,
  };
  const workspace = {
    plugin: "workspace",
    type: "workspace",
    externalId: "T0TEST",
    displayName: "Test Workspace",
    claimedAt: "2030-01-01T00:00:00.000Z",
  };

  it("lists each plugin's health, resources and commands, never a token", () => {
    const lines = describePluginStatus("ada", {
      connections: [
        { ...connection, plugin: "chatserver", externalUserId: "111" },
        {
          ...connection,
          status: "needs_reconnect",
          lastError: "token_revoked",
          lastErrorAt: "2030-01-02T00:00:00.000Z",
        },
      ],
      resources: [
        {
          plugin: "chatserver",
          type: "server",
          externalId: "111",
          displayName: "Test Server",
          claimedAt: "2030-01-01T00:00:00.000Z",
          commands: ["hello", "ping"],
        },
        workspace,
      ],
    });
    expect(lines).toEqual([
      "chatserver: active (connected 2030-01-01T00:00:00.000Z)",
      '  server "Test Server" (111), claimed 2030-01-01T00:00:00.000Z commands: /hello /ping',
      "workspace: needs_reconnect — the provider refused the token (token_revoked) at 2030-01-02T00:00:00.000Z; reinstall: platform plugin install workspace",
      '  workspace "Test Workspace" (T0TEST), claimed 2030-01-01T00:00:00.000Z',
    ]);
  });

  it("a connection that needs reconnecting after a refused refresh shows the provider's error and a fresh install link", () => {
    const lines = describePluginStatus(
      "ada",
      {
        connections: [
          {
            ...connection,
            status: "needs_reconnect",
            lastError: "invalid_refresh_token",
            lastErrorAt: "2030-01-02T00:00:00.000Z",
          },
        ],
        resources: [workspace],
      },
      { workspace: "http://127.0.0.1:8790/install?code=abc" },
    );
    expect(lines.slice(0, 2)).toEqual([
      "workspace: needs_reconnect — the provider refused the token (invalid_refresh_token) at 2030-01-02T00:00:00.000Z; reinstall: platform plugin install workspace",
      "  Reconnect: open http://127.0.0.1:8790/install?code=abc (one use, valid 2 minutes)",
    ]);
  });

  it("a degraded connection names the shared bot's problem, since when, and the fix", () => {
    const problem = {
      cause: "The chat server refused the bot's Gateway session with close 4014 (Disallowed intent(s).): …",
      fix: "Enable the Message Content intent for the bot at the chat server's developer portal (…).",
      since: "2030-01-04T00:00:00.000Z",
    };
    expect(
      describePluginStatus("ada", {
        connections: [{ ...connection, plugin: "chatserver", status: "degraded", problem }],
        resources: [],
      }),
    ).toEqual([
      `chatserver: degraded since 2030-01-04T00:00:00.000Z — ${problem.cause}`,
      `  Fix: ${problem.fix}`,
      "  no resource claimed",
    ]);
  });

  it("a revoked connection without resources, and nothing installed", () => {
    expect(
      describePluginStatus("ada", {
        connections: [{ ...connection, status: "revoked", revoked: true, revokedAt: "2030-01-03T00:00:00.000Z" }],
        resources: [],
      }),
    ).toEqual([
      "workspace: revoked at 2030-01-03T00:00:00.000Z (reinstall: platform plugin install workspace)",
      "  no resource claimed",
    ]);
    expect(describePluginStatus("ada", { connections: [], resources: [] })).toEqual([
      'No plugin installed in project "ada". Install one with `platform plugin install chatserver|workspace`.',
    ]);
  });
});

describe("platform plugin trigger: a click's, a choice's, a submit's flags", () => {
  const chatserver = TRIGGERABLE_PLUGINS.find((p) => p.id === "chatserver")!;
  const workspacePlugin = TRIGGERABLE_PLUGINS.find((p) => p.id === "workspace")!;
  it.each([
    [chatserver, "component", { "custom-id": "approve:run-1" }, { customId: "approve:run-1" }],
    [chatserver, "component", { "custom-id": "pick", values: "a, b," }, { customId: "pick", values: ["a", "b"] }],
    [
      chatserver,
      "modal",
      { "custom-id": "reason", field: ["why=it is=fine", "who=ada"] },
      { customId: "reason", fields: { why: "it is=fine", who: "ada" } },
    ],
    [workspacePlugin, "action", { "action-id": "approve:run-1" }, { actionId: "approve:run-1" }],
    [workspacePlugin, "action", { "action-id": "env", value: "prod" }, { actionId: "env", value: "prod" }],
    [
      workspacePlugin,
      "view",
      { "callback-id": "why", field: ["reason=ok"] },
      { callbackId: "why", fields: { reason: "ok" } },
    ],
    [chatserver, "message", {}, {}],
  ] as const)("%s %s %o → %o", (plugin, kind, values, body) => {
    expect(triggerParameters(plugin, kind, values as never)).toEqual(body);
  });

  it.each([
    [chatserver, "component", {}, "A chatserver component needs --custom-id (the component's or modal's customId)."],
    [workspacePlugin, "view", {}, "A workspace view needs --callback-id (the view's callback_id)."],
    [chatserver, "message", { "custom-id": "x" }, "--custom-id does not apply to chatserver message."],
    [
      workspacePlugin,
      "action",
      { "action-id": "a", "custom-id": "x" },
      "--custom-id does not apply to workspace action.",
    ],
    [chatserver, "modal", { "custom-id": "m", field: ["no-equals"] }, '--field takes id=value (got "no-equals").'],
  ] as const)("%s %s %o is refused: %s", (plugin, kind, values, message) => {
    expect(() => triggerParameters(plugin, kind, values as never)).toThrow(message);
  });
});

describe("platform plugin usage, from the plugin registry", () => {
  const [install, status, uninstall, trigger] = pluginCommand.usage.split(" | ");

  it("offers every plugin to install, the uninstallable ones to uninstall and those with events to trigger", () => {
    expect(install).toBe(`platform plugin install <${PLUGIN_IDS.join("|")}> [--no-open] [--timeout S]`);
    expect(status).toBe("platform plugin status");
    expect(uninstall).toBe(`platform plugin uninstall <${UNINSTALLABLE_PLUGINS.map((p) => p.id).join("|")}>`);
    expect(trigger).toMatch(`platform plugin trigger <${TRIGGERABLE_PLUGINS.map((p) => p.id).join("|")}> <`);
    expect(install).toContain("chatserver|workspace|email-send");
  });

  it.each([
    [
      "chatserver",
      "command --name N [--text T], message, reaction, component --custom-id X [--values A,B], modal --custom-id X [--field K=V]…",
    ],
    ["workspace", "message, mention, reaction, action --action-id X [--value X], view --callback-id X [--field K=V]…"],
  ])("lists the events of %s in the help, with their flags", (id, line) => {
    const plugin = TRIGGERABLE_PLUGINS.find((p) => p.id === id)!;
    for (const kind of plugin.triggers.kinds) expect(trigger).toContain(kind);
    expect(pluginCommand.help).toContain(`\n            ${id}: ${line}\n`);
  });

  it("says which plugins need no install", () => {
    const without = PLUGINS.filter((plugin) => !isInstallable(plugin)).map((plugin) => plugin.id);
    expect(without).toContain("email-send");
    const verb = without.length > 1 ? "need" : "needs";
    expect(pluginCommand.help).toContain(`expiry. ${andList(without)} ${verb} no install.`);
  });
});

describe("platform plugin trigger: the provider calls a fake recorded", () => {
  it.each([
    [
      "a Web API call (the workspace's)",
      { method: "chat.postMessage", params: { channel: "C1", text: "hi", token: undefined }, ok: true },
      'chat.postMessage channel="C1" text="hi" → ok',
    ],
    [
      "a refused Web API call",
      { method: "reactions.add", params: { name: "tada" }, ok: false, error: "already_reacted" },
      'reactions.add name="tada" → error already_reacted',
    ],
    [
      "a REST call (the chat server's)",
      { method: "POST", path: "/api/v10/channels/1/messages", body: { content: "pong" }, status: 200 },
      'POST /api/v10/channels/1/messages content="pong" → 200',
    ],
    ["anything else, as it came", { sent: "fax" }, '{"sent":"fax"}'],
  ])("%s", (_name, call, line) => {
    expect(describeCall(call)).toBe(line);
  });
});

describe("platform plugin trigger: what it prints never contradicts the outcome", () => {
  const call = { method: "POST", path: "/api/v10/interactions/1/t/callback", body: { content: "nope" }, status: 204 };
  const answer = (
    result: "handled" | "no_handler" | "failed" | null,
    calls: unknown[],
    inlineReply?: unknown,
    stack?: string,
  ): TestEventAnswer => ({
    summary: "Sent /x.",
    pluginAnswer: { status: 200, ...(inlineReply === undefined ? {} : { inlineReply }) },
    outcome:
      result === "failed"
        ? { result, error: { code: "internal", message: "kaboom", ...(stack ? { stack } : {}) } }
        : result
          ? { result }
          : null,
    calls,
  });
  const listed = '  POST /api/v10/interactions/1/t/callback content="nope" → 204';
  it.each([
    ["the handler ran and called", answer("handled", [call]), ["The project's handler made 1 provider call:", listed]],
    ["the handler ran and called nothing", answer("handled", []), ["The handler made no provider calls."]],
    [
      "the handler answered inline",
      answer("handled", [], { type: 4 }),
      ['  inline reply: {"type":4}', "The handler made no further provider calls."],
    ],
    [
      "no handler, and the plugin said so",
      answer("no_handler", [call]),
      ["No handler ran; the plugin itself made 1 provider call:", listed],
    ],
    ["no handler, no calls", answer("no_handler", []), []],
    [
      "the handler threw",
      answer("failed", [call, call]),
      ["2 provider calls recorded after the event:", listed, listed],
    ],
    ["the handler threw before calling", answer("failed", []), []],
    [
      "the handler threw, its stack (mapped by the platform) beneath",
      answer("failed", [], undefined, "Error: kaboom\n    at onCommand (src/index.ts:12:11)"),
      ["    at onCommand (src/index.ts:12:11)"],
    ],
    ["the project could not say", answer(null, []), ["No provider calls were recorded (within 5 s)."]],
    [
      "the project could not say, with calls",
      answer(null, [call]),
      ["1 provider call recorded after the event:", listed],
    ],
  ])("%s", (_label, given, lines) => {
    const printed = triggerReport(given);
    expect(printed).toEqual(["Sent /x.", ...lines]);
    if (given.outcome?.result !== "handled") expect(printed.join("\n")).not.toMatch(/handler made/);
  });

  it.each([
    ["handled", 0],
    ["no_handler", 0],
    ["failed", 1],
    [null, 0],
  ] as const)("exits %s → %i (1 when the project's handler threw)", (result, code) => {
    expect(triggerExitCode(answer(result, []))).toBe(code);
  });
});
