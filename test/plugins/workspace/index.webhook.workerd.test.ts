// The workspace-chat plugin's webhook: signature and body checks, events delivered to the project,
// and the event filter a deploy sets.
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import workspacePlugin from "#src/plugins/workspace/index.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { expectError, signedRequest } from "#test/support/workerd/index.ts";
import { PLUGIN_ORIGIN, type Setup, pluginDeliveries, setup, installedProject, proxy } from "./index.fixture.ts";
import { signedWebhook } from "./index.fixture.ts";

describe("webhook: signature and body checks", () => {
  const challengeBody = JSON.stringify({ token: "x", challenge: "c-123", type: "url_verification" });

  it("url_verification from the fake echoes the challenge", async () => {
    const t = setup();
    const { json } = await t.trigger({ kind: "url_verification" });
    expect(json.response.status).toBe(200);
    expect(json.response.body).toBe(json.delivered.challenge);
    expect(json.response.contentType).toMatch(/^text\/plain/);
  });

  const cases: [string, () => Promise<Request>, number, string][] = [
    ["forged (wrong secret)", () => signedWebhook(challengeBody, { secret: "not-the-secret" }), 401, "bad_signature"],
    [
      "stale (6 minutes old)",
      () => signedWebhook(challengeBody, { ts: Math.floor(Date.now() / 1000) - 360 }),
      401,
      "stale",
    ],
    [
      "replayed outside the window (1 hour later)",
      () => signedWebhook(challengeBody, { ts: Math.floor(Date.now() / 1000) - 3600 }),
      401,
      "stale",
    ],
    ["unsigned", () => signedWebhook(challengeBody, { signature: null, timestamp: null }), 401, "missing"],
    ["signature without timestamp", () => signedWebhook(challengeBody, { timestamp: null }), 401, "missing"],
    ["malformed signature", () => signedWebhook(challengeBody, { signature: "v0=xyz" }), 401, "malformed"],
    [
      "body changed after signing",
      async () => {
        const good = await signedWebhook(challengeBody);
        return new Request(good.url, {
          method: "POST",
          headers: good.headers,
          body: challengeBody.replace("c-123", "c-124"),
        });
      },
      401,
      "bad_signature",
    ],
  ];
  it.each(cases)("%s is refused", async (_name, make, status, reason) => {
    const t = setup();
    const response = await t.callPlugin(await make());
    const body = await expectError(response, status, "unauthorized");
    expect(body.error.message).toContain(reason);
    await t.settle();
    expect(t.dispatcher.calls).toHaveLength(0);
  });

  it("without a configured signing secret every delivery is refused (503), none accepted", async () => {
    const t = setup();
    const response = await workspacePlugin.fetch(
      await signedWebhook(challengeBody),
      { ...t.env, SLACK_SIGNING_SECRET: "" },
      createExecutionContext(),
    );
    await expectError(response, 503, "not_ready");
  });

  it("a signed body that is not JSON → 400", async () => {
    const t = setup();
    await expectError(await t.callPlugin(await signedWebhook("token=x&challenge=y")), 400, "malformed_json");
  });

  it("an oversized body (> 1 MB, declared or streamed) → 413 before any signature work", async () => {
    const t = setup();
    const big = JSON.stringify({ type: "url_verification", challenge: "x".repeat(1024 * 1024) });
    await expectError(await t.callPlugin(await signedWebhook(big)), 413, "payload_too_large");
    const signed = await signedWebhook(big);
    const stream = new Blob([big]).stream();
    await expectError(
      await t.callPlugin(new Request(signed.url, { method: "POST", headers: signed.headers, body: stream })),
      413,
      "payload_too_large",
    );
  });

  it("an event_callback without event_id or team → 400", async () => {
    const t = setup();
    await expectError(
      await t.callPlugin(await signedWebhook(JSON.stringify({ type: "event_callback", event: { type: "message" } }))),
      400,
      "invalid_input",
    );
  });
});

describe("webhook: events", () => {
  it("a message reaches the project once, even when Slack retries it", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const first = await t.trigger({ kind: "message", teamId: "T0TEST", text: "hello bot" });
    expect(first.json.response.status).toBe(200);
    await t.settle();
    const retry = await t.trigger({ retry: 1 });
    expect(retry.json.response.status).toBe(200);
    const retry2 = await t.trigger({ retry: 2 });
    expect(retry2.json.response.status).toBe(200);
    await t.settle();
    const calls = pluginDeliveries(t);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.scriptName).toBe(row.script_name);
    const payload = JSON.parse(calls[0]!.body);
    expect(payload).toMatchObject({
      kind: "event",
      name: "message",
      project: { slug: "ada-app" },
      user: { id: "U0ALICE" },
      event: {
        type: "message",
        text: "hello bot",
        channel: "C0GENERAL",
        teamId: "T0TEST",
        eventId: first.json.delivered.event_id,
      },
    });
    expect(typeof payload.resource).toBe("string");
    // Internal ids stay inside the platform.
    expect(JSON.stringify(payload.project)).not.toContain(String(row.id));
  });

  it("mentions and reactions are delivered with their names", async () => {
    const t = setup();
    await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "mention", teamId: "T0TEST", text: "help" });
    await t.trigger({ kind: "reaction", teamId: "T0TEST", text: "tada" });
    await t.settle();
    const payloads = pluginDeliveries(t).map((c) => JSON.parse(c.body));
    expect(payloads.map((p) => p.name)).toEqual(["mention", "reaction"]);
    expect(payloads[0].event.text).toBe("<@U0BOT0TEST> help");
    expect(payloads[1].event).toMatchObject({ reaction: "tada", item: { channel: "C0GENERAL" } });
  });

  it("an event of a team no project claimed → 404 with a clear message, nothing delivered", async () => {
    const t = setup();
    await installedProject(t, "ada@example.com", "ada-app");
    const { json } = await t.trigger({ kind: "message", teamId: "T0NOBODY" });
    expect(json.response.status).toBe(404);
    expect(JSON.parse(json.response.body).error.message).toContain("T0NOBODY is not connected to any project");
    await t.settle();
    expect(pluginDeliveries(t)).toHaveLength(0);
  });

  it("when the project fails (5xx) the event is released, so Slack's retry is delivered", async () => {
    let failures = 1;
    const t = setup({
      project: () => (failures-- > 0 ? new Response("boom", { status: 500 }) : Response.json({ handled: 1 })),
    });
    await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "message", teamId: "T0TEST" });
    await t.settle();
    await t.trigger({ retry: 1 });
    await t.settle();
    await t.trigger({ retry: 2 });
    await t.settle();
    expect(pluginDeliveries(t)).toHaveLength(2);
  });

  it("app_uninstalled marks the connection revoked: proxy calls then fail with a clear 409 revoked", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "before" })).status).toBe(200);
    const { json } = await t.trigger({ kind: "app_uninstalled", teamId: "T0TEST" });
    expect(json.response.status).toBe(200);
    await t.settle();
    expect(pluginDeliveries(t)).toHaveLength(0);
    const revokedAt = await env.DB.prepare("SELECT revoked_at FROM plugin_oauth_connections WHERE project_id = ?")
      .bind(row.id)
      .first("revoked_at");
    expect(revokedAt).toBeTypeOf("number");
    const before = t.slackRequests.length;
    const body = await expectError(
      await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "after" }),
      409,
      "revoked",
    );
    expect(body.error.message).toContain("platform plugin install workspace");
    expect(t.slackRequests.length).toBe(before); // refused without calling Slack
  });

  it("tokens_revoked naming our bot does the same", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await t.trigger({ kind: "tokens_revoked", teamId: "T0TEST" });
    await expectError(
      await proxy(t, row, "add-reaction", { channel: "C0GENERAL", ts: "1.000001", name: "tada" }),
      409,
      "revoked",
    );
  });
});

describe("POST /deploy and the event filter", () => {
  async function deploy(t: Setup, row: ProjectRow, body: Record<string, unknown>): Promise<Response> {
    return t.callPlugin(
      await signedRequest({ project: row, path: "/deploy", body: JSON.stringify(body), origin: PLUGIN_ORIGIN }),
    );
  }

  it("records the project's events; then only those are delivered", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const response = await deploy(t, row, { plugins: { workspace: { events: ["mention", "mention"] } } });
    expect(await response.json()).toEqual({ events: ["mention"], workspaces: 1 });
    await t.trigger({ kind: "message", teamId: "T0TEST" });
    await t.trigger({ kind: "mention", teamId: "T0TEST" });
    await t.settle();
    expect(pluginDeliveries(t).map((c) => JSON.parse(c.body).name)).toEqual(["mention"]);
    // The bot token survived the metadata update.
    expect((await proxy(t, row, "send-message", { channel: "C0GENERAL", text: "still works" })).status).toBe(200);
  });

  it("refuses unknown events and unauthenticated deploys", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const bad = await expectError(await deploy(t, row, { events: ["typing"] }), 400, "invalid_input");
    expect(bad.error.message).toContain("typing");
    await expectError(
      await t.callPlugin(new Request(`${PLUGIN_ORIGIN}/deploy`, { method: "POST", body: "{}" })),
      401,
      "unauthorized",
    );
  });
});
