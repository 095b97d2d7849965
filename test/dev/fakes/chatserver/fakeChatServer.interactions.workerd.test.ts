// Interactions with components and modals, answered the way each interaction type allows
// (interactions/receiving-and-responding.mdx, components/reference.mdx).
import { describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { setup, approve } from "./fakeChatServer.fixture.ts";

describe("fake chat server: components, modals and interaction answers as the provider's", () => {
  const json = (method: string, body: unknown, auth?: string): RequestInit => ({
    method,
    headers: { "content-type": "application/json", ...(auth ? { authorization: auth } : {}) },
    body: JSON.stringify(body),
  });
  const channel = `/api/v10/channels/${TEST_GUILD.channels[0]}/messages`;
  const approveRow = {
    type: 1,
    components: [
      { type: 2, style: 3, label: "Approve", custom_id: "approve:1" },
      { type: 2, style: 4, label: "Reject", custom_id: "reject:1" },
    ],
  };

  async function world(now = () => Date.now()) {
    const w = setup({ now });
    await approve(w.call);
    const post = (components: unknown[]) =>
      w.call(channel, json("POST", { content: "Deploy?", components }, "Bot bot-token"));
    const trigger = async (body: Record<string, unknown>) =>
      (await w.call("/__fake/trigger", json("POST", { guildId: TEST_GUILD.id, ...body }))).json() as Promise<any>;
    const answer = (out: any, body: unknown) =>
      w.call(`/api/v10/interactions/${out.payload.id}/${out.payload.token}/callback`, json("POST", body));
    return { ...w, post, trigger, answer };
  }

  it.each([
    [
      "six rows",
      Array(6).fill({ type: 1, components: [{ type: 2, style: 2, label: "x", custom_id: "a" }] }),
      "components",
      "BASE_TYPE_BAD_LENGTH",
    ],
    [
      "a text input in a message",
      [{ type: 1, components: [{ type: 4, custom_id: "t", label: "T", style: 1 }] }],
      "components.0.components.0.type",
      "COMPONENT_TYPE_INVALID",
    ],
    [
      "a link button with a custom_id",
      [{ type: 1, components: [{ type: 2, style: 5, label: "L", url: "https://x", custom_id: "c" }] }],
      "components.0.components.0.custom_id",
      "BUTTON_COMPONENT_CUSTOM_ID_WITH_URL",
    ],
    [
      "a custom_id of 101 characters",
      [{ type: 1, components: [{ type: 2, style: 1, label: "x", custom_id: "c".repeat(101) }] }],
      "components.0.components.0.custom_id",
      "BASE_TYPE_BAD_LENGTH",
    ],
    [
      "a select beside a button",
      [
        {
          type: 1,
          components: [
            { type: 3, custom_id: "s", options: [{ label: "a", value: "a" }] },
            { type: 2, style: 1, label: "b", custom_id: "b" },
          ],
        },
      ],
      "components.0.components",
      "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
    ],
    [
      "two components with one custom_id",
      [
        {
          type: 1,
          components: [
            { type: 2, style: 1, label: "a", custom_id: "x" },
            { type: 2, style: 1, label: "b", custom_id: "x" },
          ],
        },
      ],
      "components.0.components.1.custom_id",
      "COMPONENT_CUSTOM_ID_DUPLICATED",
    ],
  ])("a message with %s is refused 50035 naming the field", async (_name, components, path, code) => {
    const w = await world();
    const response = await w.post(components);
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ code: 50035, message: "Invalid Form Body" });
    let node = body.errors;
    for (const key of path.split(".")) node = node[key];
    expect(node._errors[0].code).toBe(code);
  });

  it("a click on a component of a message: a signed type-3 interaction carrying the message; answers 6 or 7 edit that message", async () => {
    const w = await world();
    const message = (await (await w.post([approveRow])).json()) as any;
    const out = await w.trigger({ kind: "component", customId: "approve:1" });
    expect(out.payload).toMatchObject({
      type: 3,
      data: { custom_id: "approve:1", component_type: 2 },
      message: { id: message.id, content: "Deploy?" },
    });
    // The plugin answered 202 without answering by callback first: the user sees "This interaction failed".
    expect(out.interaction).toMatchObject({
      acknowledged: false,
      failed: expect.stringMatching(/202 without answering/),
    });
    const again = await w.trigger({ kind: "component", customId: "reject:1" });
    const updated = await w.call(
      `/api/v10/interactions/${again.payload.id}/${again.payload.token}/callback?with_response=true`,
      json("POST", { type: 7, data: { content: "Rejected", components: [] } }),
    );
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({
      resource: { type: 7, message: { id: message.id, content: "Rejected" } },
    });
    expect((await w.answer(again, { type: 4, data: { content: "twice" } })).status).toBe(400); // 40060
  });

  it.each([
    ["a command", { kind: "command", name: "hello" }, [6, 7], [4, 5, 9]],
    ["a click", { kind: "component", customId: "approve:1" }, [], [4, 5, 6, 7, 9]],
  ])("%s takes callback types %j only as refusals, %j as answers", async (_name, trigger, refused, accepted) => {
    const w = await world();
    await w.post([approveRow]);
    for (const type of refused) {
      const out = await w.trigger(trigger);
      const response = await w.answer(out, { type, data: { content: "x" } });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).errors.type._errors[0].code).toBe("INTERACTION_RESPONSE_TYPE_INVALID");
    }
    for (const type of accepted) {
      const out = await w.trigger(trigger);
      const data =
        type === 9
          ? {
              custom_id: "m",
              title: "T",
              components: [{ type: 1, components: [{ type: 4, custom_id: "f", label: "F", style: 1 }] }],
            }
          : { content: "ok" };
      expect((await w.answer(out, { type, data })).status, `type ${type}`).toBe(204);
    }
  });

  it("a modal: 9 opens it (its rules checked); a submit is a type-5 interaction with the fields, which takes no modal", async () => {
    const w = await world();
    await w.post([approveRow]);
    const click = await w.trigger({ kind: "component", customId: "reject:1" });
    const bad = await w.answer(click, { type: 9, data: { custom_id: "why", title: "x".repeat(46), components: [] } });
    expect(((await bad.json()) as any).errors.data.title._errors[0].code).toBe("BASE_TYPE_BAD_LENGTH");
    const modal = {
      custom_id: "why",
      title: "Why?",
      components: [
        { type: 1, components: [{ type: 4, custom_id: "reason", label: "Reason", style: 2, max_length: 10 }] },
      ],
    };
    expect((await w.answer(click, { type: 9, data: modal })).status).toBe(204);
    expect((await w.trigger({ kind: "modal", customId: "why", fields: { reason: "far too long" } })).error).toBe(
      "The field reason takes 0–10 characters.",
    );
    const submit = await w.trigger({ kind: "modal", customId: "why", fields: { reason: "Friday" } });
    expect(submit.payload).toMatchObject({
      type: 5,
      data: {
        custom_id: "why",
        components: [{ type: 1, components: [{ type: 4, custom_id: "reason", value: "Friday" }] }],
      },
      message: { content: "Deploy?" },
    });
    const response = await w.answer(submit, { type: 9, data: modal });
    expect(((await response.json()) as any).errors.type._errors[0].code).toBe("INTERACTION_RESPONSE_TYPE_INVALID");
  });

  it("a first answer by callback after 3 seconds is 404 10062 Unknown interaction: the interaction failed", async () => {
    let now = 1_800_000_000_000;
    const w = await world(() => now);
    const out = await w.trigger({ kind: "command", name: "slow" });
    now += 3_001;
    const late = await w.answer(out, { type: 5 });
    expect(late.status).toBe(404);
    expect(await late.json()).toEqual({ message: "Unknown interaction", code: 10062 });
    const state = (await (await w.call("/__fake/state")).json()) as any;
    expect(state.interactions.at(-1)).toMatchObject({
      acknowledged: false,
      failed: "No first answer within 3 s: the callback was refused (10062).",
    });
  });

  it("the chat view: messages with their buttons, an ephemeral answer only for its user, a deferred one as thinking", async () => {
    const w = await world();
    await w.post([approveRow]);
    const out = await w.trigger({ kind: "component", customId: "approve:1" });
    await w.answer(out, { type: 4, data: { content: "Only you", flags: 64 } });
    const command = await w.trigger({ kind: "command", name: "deploy" });
    await w.answer(command, { type: 5 });
    const view = (await (await w.call(`/__fake/chat?resourceId=${TEST_GUILD.id}`)).json()) as any;
    expect(view.channels[0].messages).toEqual([
      expect.objectContaining({
        text: "Deploy?",
        bot: true,
        rows: [
          {
            kind: "buttons",
            buttons: [
              { label: "Approve", style: "success", id: "approve:1", url: null, disabled: false },
              { label: "Reject", style: "danger", id: "reject:1", url: null, disabled: false },
            ],
          },
        ],
      }),
      expect.objectContaining({ text: "Only you", ephemeral: true }),
      expect.objectContaining({ pending: true, command: "Test User used /deploy" }),
    ]);
    expect((await w.call("/__fake/chat?resourceId=1")).status).toBe(404);
  });
});
