import { describe, expect, it } from "vitest";
import { chooseBody, clickBody, sameChat, submitBody, typedBody } from "#src/console/public/console/chatActions.js";

describe("the chat window's actions, as test events", () => {
  it.each([
    [
      "a click on the chat server",
      clickBody("chatserver", "222", "333", "approve:run-1"),
      { kind: "component", customId: "approve:run-1", channel: "222", message: "333" },
    ],
    [
      "a choice on the chat server (every value)",
      chooseBody("chatserver", "222", "333", "pick", ["a", "b"]),
      { kind: "component", customId: "pick", channel: "222", message: "333", values: ["a", "b"] },
    ],
    [
      "a click on the workspace",
      clickBody("workspace", "C0GENERAL", "1.000001", "approve:run-1"),
      { kind: "action", actionId: "approve:run-1", channel: "C0GENERAL", message: "1.000001" },
    ],
    [
      "a choice on the workspace (a static select's one value)",
      chooseBody("workspace", "C0GENERAL", "1.000001", "env", ["prod"]),
      { kind: "action", actionId: "env", channel: "C0GENERAL", message: "1.000001", value: "prod" },
    ],
    [
      "a modal submitted",
      submitBody("chatserver", "reason:run-1", { why: "ok" }),
      { kind: "modal", customId: "reason:run-1", fields: { why: "ok" } },
    ],
    [
      "a view submitted",
      submitBody("workspace", "reason", { why: "ok" }),
      { kind: "view", callbackId: "reason", fields: { why: "ok" } },
    ],
  ])("%s", (_name, body, expected) => {
    expect(body).toEqual(expected);
  });

  it.each([
    [
      "chatserver",
      "/deploy production now",
      { body: { kind: "command", name: "deploy", channel: "c", text: "production now" } },
    ],
    ["chatserver", "  /ping  ", { body: { kind: "command", name: "ping", channel: "c" } }],
    ["chatserver", "hello there", { body: { kind: "message", text: "hello there", channel: "c" } }],
    ["workspace", "hello", { body: { kind: "message", text: "hello", channel: "c" } }],
    ["chatserver", "   ", { error: "Type a message, or /command." }],
    ["chatserver", "/Deploy", { error: expect.stringMatching(/^A command is \/ and 1–32 lowercase letters/) }],
    ["workspace", "/deploy", { error: "Slash commands are the chat server's: type a message here." }],
  ])("%s: typing %j", (plugin, line, expected) => {
    expect(typedBody(plugin, "c", line)).toEqual(expected);
  });

  it("redraws only when what the chat shows changed", () => {
    const view = { plugin: "chatserver", resource: { externalId: "1", displayName: null }, channels: [], forms: [] };
    expect(sameChat(view, { ...view })).toBe(true);
    expect(sameChat(null, view)).toBe(false);
    expect(
      sameChat(view, { ...view, forms: [{ id: "m", title: "t", submitLabel: "Submit", channelId: null, fields: [] }] }),
    ).toBe(false);
  });
});
