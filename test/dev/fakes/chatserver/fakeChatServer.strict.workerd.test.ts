// Where the fake used to accept or send less than Discord does (issue 33 item 7): each test fails on the old fake.
import { describe, expect, it } from "vitest";
import { TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { MEMBER_JOINED_AT } from "#src/dev/fakes/chatserver/fakeGuildMember.ts";
import { approve, REDIRECT, setup, tokenRequest } from "./fakeChatServer.fixture.ts";

const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("fake chat server: as strict and as complete as Discord", () => {
  it("a refresh answers the scopes granted at consent, not a fixed set", async () => {
    const { call } = setup();
    const granted = "bot applications.commands identify";
    const code = (await approve(call, "approve", granted)).searchParams.get("code")!;
    const first = (await (
      await call("/api/oauth2/token", tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT }))
    ).json()) as { refresh_token: string; scope: string };
    expect(first.scope).toBe(granted);
    const refreshed = await call(
      "/api/oauth2/token",
      tokenRequest({ grant_type: "refresh_token", refresh_token: first.refresh_token }),
    );
    expect(refreshed.status).toBe(200);
    expect(await refreshed.json()).toMatchObject({ scope: granted });
  });

  it("an interaction carries entitlements, context, its integration owner and a full member", async () => {
    const w = setup();
    await approve(w.call);
    const out = (await (
      await w.call("/__fake/trigger", json({ kind: "command", guildId: TEST_GUILD.id, name: "deploy" }))
    ).json()) as { payload: Record<string, unknown> };
    expect(out.payload).toMatchObject({
      entitlements: [],
      context: 0,
      authorizing_integration_owners: { "0": TEST_GUILD.id },
      attachment_size_limit: expect.any(Number),
      member: {
        joined_at: MEMBER_JOINED_AT,
        deaf: false,
        mute: false,
        flags: 0,
        pending: false,
        premium_since: null,
        avatar: null,
        communication_disabled_until: null,
        permissions: "0",
        user: { id: expect.any(String), discriminator: "0", avatar: null, public_flags: 0 },
      },
    });
  });

  it("a member's message on the Gateway carries the member beside its author", async () => {
    const w = setup();
    await approve(w.call);
    const out = (await (
      await w.call("/__fake/trigger", json({ kind: "message", guildId: TEST_GUILD.id, text: "hi" }))
    ).json()) as { payload: { d: Record<string, unknown> } };
    expect(out.payload.d.member).toMatchObject({ joined_at: MEMBER_JOINED_AT, roles: [], deaf: false, mute: false });
    expect(out.payload.d.member).not.toHaveProperty("user");
  });
});
