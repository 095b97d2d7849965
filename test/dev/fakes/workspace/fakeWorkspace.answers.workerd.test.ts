import { describe, expect, it } from "vitest";
import type { WorkspaceEnv } from "#src/plugins/workspace/env.ts";
import { callWorkspaceMethod } from "#src/plugins/workspace/workspaceApi.ts";
import { verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";
import { BASE, CONFIG, fake, install } from "./fakeWorkspace.fixture.ts";

// The plugin's own Web API client (workspaceApi.ts) against the fake, asserting Slack's documented answers
// (docs.slack.dev/reference/methods/auth.test, chat.postMessage).
describe("fake Slack: answers as Slack's", () => {
  async function installed() {
    const slack = fake();
    const { access_token } = await install(slack);
    const env = { SLACK_BASE_URL: BASE, SLACK: { fetch: (r: Request) => slack.fetch(r) } } as unknown as WorkspaceEnv;
    const method = async (name: string, params: Record<string, unknown>, token: string = access_token) =>
      (await callWorkspaceMethod(env, name, token, params)).answer;
    return { slack, method, token: access_token as string };
  }

  it("auth.test names the token's workspace, bot user and bot id; a bad token is invalid_auth", async () => {
    const { method } = await installed();
    expect(await method("auth.test", {})).toEqual({
      ok: true,
      url: "https://t0test.slack.fake/",
      team: "Test Workspace",
      user: "platform-bot",
      team_id: "T0TEST",
      user_id: "U0BOT0TEST",
      bot_id: "B0BOT0TEST",
      is_enterprise_install: false,
    });
    expect(await method("auth.test", {}, "xoxb-nope")).toEqual({ ok: false, error: "invalid_auth" });
  });

  it("chat.postMessage with blocks and no text is posted (text is only their fallback); with neither, no_text", async () => {
    const { method } = await installed();
    const blocks = [{ type: "section", text: { type: "mrkdwn", text: "*Deployed*" } }];
    const posted = await method("chat.postMessage", { channel: "C0GENERAL", blocks });
    // Slack gives each block a block_id when it has none.
    expect(posted).toMatchObject({
      ok: true,
      channel: "C0GENERAL",
      message: { text: "", blocks: [{ ...blocks[0], block_id: expect.any(String) }] },
    });
    const updated = await method("chat.update", {
      channel: "C0GENERAL",
      ts: posted.ts,
      blocks: [{ type: "divider" }],
    });
    expect(updated).toMatchObject({
      ok: true,
      message: { blocks: [{ type: "divider", block_id: expect.any(String) }] },
    });
    const withAttachments = await method("chat.postMessage", {
      channel: "C0GENERAL",
      attachments: [{ fallback: "Build log", text: "all green" }],
    });
    expect(withAttachments).toMatchObject({ ok: true });
    expect(await method("chat.postMessage", { channel: "C0GENERAL" })).toEqual({ ok: false, error: "no_text" });
    expect(await method("chat.postMessage", { channel: "C0GENERAL", blocks: [{ text: "no type" }] })).toEqual({
      ok: false,
      error: "invalid_blocks",
      response_metadata: { messages: ["[ERROR] blocks[0]: missing required field: type"] },
    });
    expect(
      await method("chat.postMessage", { channel: "C0GENERAL", blocks: Array(51).fill({ type: "divider" }) }),
    ).toEqual({
      ok: false,
      error: "invalid_blocks",
      response_metadata: { messages: ["[ERROR] blocks: must provide between 0 and 50 blocks"] },
    });
  });

  it("form-encoded blocks (a JSON string) count as blocks", async () => {
    const { slack, token } = await installed();
    const response = await slack.fetch(
      new Request(`${BASE}/api/chat.postMessage`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Bearer ${token}` },
        body: new URLSearchParams({ channel: "C0GENERAL", blocks: JSON.stringify([{ type: "divider" }]) }).toString(),
      }),
    );
    expect(await response.json()).toMatchObject({ ok: true, message: { blocks: [{ type: "divider" }] } });
  });
});

describe("fake Slack: event deliveries", () => {
  function capturing() {
    const received: { request: Request; body: string }[] = [];
    const slack = fake({
      deliver: async (request) => {
        received.push({ request, body: await request.text() });
        return new Response("", { status: 200 });
      },
    });
    const trigger = async (params: Record<string, unknown>) => {
      const response = await slack.fetch(
        new Request(`${BASE}/__fake/trigger`, {
          method: "POST",
          body: JSON.stringify(params),
          headers: { "content-type": "application/json" },
        }),
      );
      return { status: response.status, json: (await response.json()) as any };
    };
    return { slack, received, trigger };
  }

  it.each(["message", "mention", "reaction", "app_uninstalled", "tokens_revoked"])(
    "%s: a signed event_callback envelope to the plugin URL",
    async (kind) => {
      const { received, trigger } = capturing();
      const { status, json } = await trigger({ kind, teamId: "T0TEST", text: "hi there" });
      expect(status).toBe(200);
      expect(json.response.status).toBe(200);
      expect(received).toHaveLength(1);
      const { request, body } = received[0]!;
      expect(request.url).toBe(CONFIG.webhookUrl);
      expect(request.method).toBe("POST");
      const check = await verifyWorkspaceSignature(CONFIG.signingSecret, {
        timestampHeader: request.headers.get("x-slack-request-timestamp"),
        signatureHeader: request.headers.get("x-slack-signature"),
        rawBody: body,
      });
      expect(check).toEqual({ ok: true });
      const envelope = JSON.parse(body);
      expect(envelope).toMatchObject({ type: "event_callback", team_id: "T0TEST", api_app_id: "A0PLATFORM" });
      expect(envelope.event_id).toMatch(/^Ev[0-9A-F]+$/);
      const expectedType = {
        message: "message",
        mention: "app_mention",
        reaction: "reaction_added",
        app_uninstalled: "app_uninstalled",
        tokens_revoked: "tokens_revoked",
      }[kind];
      expect(envelope.event.type).toBe(expectedType);
      if (kind === "mention") expect(envelope.event.text).toBe("<@U0BOT0TEST> hi there");
      if (kind === "message") expect(envelope.event.text).toBe("hi there");
      expect(request.headers.get("x-slack-retry-num")).toBeNull();
    },
  );

  it("takes the team as resourceId too (what the test-event route sends)", async () => {
    const { received, trigger } = capturing();
    expect((await trigger({ kind: "message", resourceId: "T0OTHER", text: "hi" })).status).toBe(200);
    expect(JSON.parse(received[0]!.body)).toMatchObject({ type: "event_callback", team_id: "T0OTHER" });
  });

  it("url_verification is a bare challenge body, signed", async () => {
    const { received, trigger } = capturing();
    await trigger({ kind: "url_verification" });
    const body = JSON.parse(received[0]!.body);
    expect(body).toMatchObject({ type: "url_verification" });
    expect(body.challenge).toMatch(/^[0-9a-f]{48}$/);
  });

  it("a retry resends the same event_id with X-Slack-Retry-Num", async () => {
    const { received, trigger } = capturing();
    await trigger({ kind: "message", teamId: "T0TEST" });
    await trigger({ retry: 2 });
    expect(received).toHaveLength(2);
    expect(JSON.parse(received[1]!.body).event_id).toBe(JSON.parse(received[0]!.body).event_id);
    expect(received[1]!.request.headers.get("x-slack-retry-num")).toBe("2");
    expect(received[1]!.request.headers.get("x-slack-retry-reason")).toBe("http_timeout");
  });

  it("refuses an unknown kind", async () => {
    const { received, trigger } = capturing();
    const { status, json } = await trigger({ kind: "bogus" });
    expect(status).toBe(400);
    expect(json.error).toMatch(/Unknown kind/);
    expect(received).toHaveLength(0);
  });
});
