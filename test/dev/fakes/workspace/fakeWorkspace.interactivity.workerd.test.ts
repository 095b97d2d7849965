import { describe, expect, it } from "vitest";
import type { FakeWorkspaceConfig } from "#src/dev/fakes/workspace/fakeWorkspace.ts";
import { verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";
import { reasonModal } from "#test/support/chat/reasonModal.ts";
import { BASE, CONFIG, fake, exchange, install, api } from "./fakeWorkspace.fixture.ts";

// Interactivity as Slack runs it (docs.slack.dev interactivity, views.open, chat.postEphemeral, token rotation).
describe("fake Slack: block actions, views, ephemeral messages, token rotation", () => {
  async function world(overrides: Partial<FakeWorkspaceConfig> = {}) {
    const deliveries: { request: Request; body: string }[] = [];
    let clock = 1_800_000_000_000;
    const slack = fake({
      now: () => clock,
      deliver: async (request) => {
        deliveries.push({ request, body: await request.clone().text() });
        return new Response(null, { status: 200 });
      },
      ...overrides,
    });
    const { access_token } = await install(slack);
    const method = async (name: string, params: Record<string, unknown>) =>
      (await (await api(slack, name, access_token, params)).json()) as Record<string, any>;
    const trigger = async (params: Record<string, unknown>) =>
      (
        await slack.fetch(
          new Request(`${BASE}/__fake/trigger`, {
            method: "POST",
            body: JSON.stringify(params),
            headers: { "content-type": "application/json" },
          }),
        )
      ).json() as Promise<Record<string, any>>;
    return {
      slack,
      method,
      trigger,
      deliveries,
      advance: (ms: number) => (clock += ms),
      token: access_token as string,
    };
  }
  const buttons = {
    type: "actions",
    elements: [
      { type: "button", action_id: "approve:1", text: { type: "plain_text", text: "Approve" }, value: "1" },
      { type: "button", text: { type: "plain_text", text: "No id" } },
    ],
  };
  const view = reasonModal({
    callbackId: "why",
    title: "Why?",
    submit: "Send",
    extraBlocks: [
      {
        type: "input",
        optional: true,
        label: { type: "plain_text", text: "Env" },
        element: {
          type: "static_select",
          action_id: "env",
          options: [{ text: { type: "plain_text", text: "Prod" }, value: "prod" }],
        },
      },
    ],
  });

  it("a click is a block_actions payload in a signed form body; the button without action_id got one from Slack", async () => {
    const { method, trigger, deliveries } = await world();
    const posted = await method("chat.postMessage", { channel: "C0GENERAL", text: "Deploy?", blocks: [buttons] });
    const generated = posted.message.blocks[0].elements[1].action_id;
    expect(generated).toMatch(/^[0-9a-f]{6}$/);
    const out = await trigger({ kind: "action", actionId: "approve:1" });
    const { request, body } = deliveries[0]!;
    expect(request.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    const check = await verifyWorkspaceSignature(
      CONFIG.signingSecret,
      {
        timestampHeader: request.headers.get("x-slack-request-timestamp"),
        signatureHeader: request.headers.get("x-slack-signature"),
        rawBody: new TextEncoder().encode(body),
      },
      1_800_000_000,
    );
    expect(check.ok).toBe(true);
    const payload = JSON.parse(new URLSearchParams(body).get("payload")!);
    expect(payload).toEqual(out.delivered);
    expect(payload).toMatchObject({
      type: "block_actions",
      team: { id: "T0TEST" },
      user: { id: "U0ALICE", name: "alice" },
      container: { type: "message", message_ts: posted.ts, channel_id: "C0GENERAL" },
      trigger_id: expect.stringMatching(/^\d+\.\d+\.[0-9a-f]+$/),
      actions: [{ type: "button", action_id: "approve:1", value: "1", block_id: expect.any(String) }],
    });
    expect((await trigger({ kind: "action", actionId: generated })).delivered.actions[0].action_id).toBe(generated);
    expect((await trigger({ kind: "action", actionId: "nope" })).error).toMatch(
      /No message in workspace T0TEST has an element with action_id "nope"/,
    );
    expect((await trigger({ kind: "action", actionId: "approve:1", value: "2" })).error).toBe(
      "A button sends its own value: --value is for a select.",
    );
  });

  it("views.open takes the click's trigger_id within 3 seconds (expired_trigger_id), once (exchanged_trigger_id); an unknown one is invalid_trigger_id", async () => {
    const { method, trigger, advance } = await world();
    await method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks: [buttons] });
    const late = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    advance(3_001);
    expect(await method("views.open", { trigger_id: late, view })).toEqual({ ok: false, error: "expired_trigger_id" });
    const fresh = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    const opened = await method("views.open", { trigger_id: fresh, view });
    expect(opened).toMatchObject({ ok: true, view: { id: expect.stringMatching(/^V0/), callback_id: "why" } });
    expect(await method("views.open", { trigger_id: fresh, view })).toEqual({
      ok: false,
      error: "exchanged_trigger_id",
    });
    expect(await method("views.open", { trigger_id: "1.2.3", view })).toEqual({
      ok: false,
      error: "invalid_trigger_id",
    });
  });

  it.each([
    [
      { ...view, title: { type: "plain_text", text: "x".repeat(25) } },
      "[ERROR] view.title: must be between 1 and 24 characters",
    ],
    [{ ...view, submit: undefined }, "[ERROR] view.submit: required when the view has input blocks"],
    [{ ...view, type: "home" }, "[ERROR] view.type: must be modal"],
  ])("views.open refuses a view Slack refuses: %#", async (bad, message) => {
    const { method, trigger } = await world();
    await method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks: [buttons] });
    const triggerId = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    expect(await method("views.open", { trigger_id: triggerId, view: bad })).toEqual({
      ok: false,
      error: "invalid_arguments",
      response_metadata: { messages: [message] },
    });
  });

  it("a submit is a view_submission with state values by block and action id; required inputs and known options only", async () => {
    const { method, trigger, slack } = await world();
    await method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks: [buttons] });
    const triggerId = (await trigger({ kind: "action", actionId: "approve:1" })).delivered.trigger_id;
    await method("views.open", { trigger_id: triggerId, view: { ...view, private_metadata: "run-1" } });
    expect((await trigger({ kind: "view", callbackId: "why", fields: { env: "prod" } })).error).toBe(
      "The input reason is required.",
    );
    expect((await trigger({ kind: "view", callbackId: "why", fields: { reason: "x", env: "dev" } })).error).toBe(
      '"dev" is not an option of env.',
    );
    expect((await trigger({ kind: "view", callbackId: "why", fields: { reason: "x", other: "y" } })).error).toMatch(
      /The view has no input other/,
    );
    const chat = (await (await slack.fetch(new Request(`${BASE}/__fake/chat`))).json()) as any;
    expect(chat.forms).toEqual([
      {
        id: "why",
        title: "Why?",
        submitLabel: "Send",
        channelId: null,
        fields: [
          { id: "reason", label: "Reason", style: "short", required: true, placeholder: null, value: null },
          {
            id: "env",
            label: "Env",
            style: "select",
            required: false,
            placeholder: null,
            value: null,
            options: [{ label: "Prod", value: "prod" }],
          },
        ],
      },
    ]);
    const out = await trigger({ kind: "view", callbackId: "why", fields: { reason: "Friday", env: "prod" } });
    expect(out.delivered).toMatchObject({
      type: "view_submission",
      view: {
        callback_id: "why",
        private_metadata: "run-1",
        state: {
          values: {
            b: { reason: { type: "plain_text_input", value: "Friday" } },
            [Object.keys(out.delivered.view.state.values)[1]!]: {
              env: {
                type: "static_select",
                selected_option: { text: { type: "plain_text", text: "Prod" }, value: "prod" },
              },
            },
          },
        },
      },
    });
    // Answered with an empty 200: the view closed.
    expect(((await (await slack.fetch(new Request(`${BASE}/__fake/chat`))).json()) as any).forms).toEqual([]);
  });

  it("chat.postEphemeral: only the user it names sees it; chat.update cannot touch it", async () => {
    const { method } = await world();
    expect(await method("chat.postEphemeral", { channel: "C0GENERAL", user: "U0BOB", text: "x" })).toEqual({
      ok: false,
      error: "user_not_in_channel",
    });
    const sent = await method("chat.postEphemeral", { channel: "C0GENERAL", user: "U0ALICE", text: "psst" });
    expect(sent).toEqual({ ok: true, message_ts: expect.any(String) });
    expect(await method("chat.update", { channel: "C0GENERAL", ts: sent.message_ts, text: "x" })).toEqual({
      ok: false,
      error: "message_not_found",
    });
  });

  it("token rotation switched on mid-way: the next install gets an expiring pair; a refused refresh answers the chosen error once", async () => {
    const { slack } = await world();
    const switched = await slack.fetch(
      new Request(`${BASE}/__fake/token-rotation`, {
        method: "POST",
        body: JSON.stringify({ enabled: true, expiresIn: 2 }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(await switched.json()).toEqual({ ok: true, rotation: { enabled: true, expiresIn: 2 } });
    const tokens = await install(slack);
    expect(tokens).toMatchObject({
      access_token: expect.stringMatching(/^xoxe\.xoxb-/),
      expires_in: 2,
      refresh_token: expect.stringMatching(/^xoxe-1-/),
    });
    await slack.fetch(
      new Request(`${BASE}/__fake/refuse-refresh`, {
        method: "POST",
        body: JSON.stringify({ error: "invalid_refresh_token" }),
        headers: { "content-type": "application/json" },
      }),
    );
    expect(await exchange(slack, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })).toEqual({
      ok: false,
      error: "invalid_refresh_token",
    });
  });
});
