import { describe, expect, it } from "vitest";
import { OAUTH_STATE_LIFETIME_MS, signOAuthState, verifyOAuthState } from "#src/plugins/kit/oauthState.ts";
import { STATE_SECRET } from "#test/support/workerd/index.ts";

describe("oauthState", () => {
  it("verifies its own state for the same plugin within 10 minutes", async () => {
    const now = 1_700_000_000_000;
    const { state, claims } = await signOAuthState(STATE_SECRET, { projectId: 42, pluginId: "chatserver" }, now);
    expect(claims.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await verifyOAuthState(STATE_SECRET, state, "chatserver", now + OAUTH_STATE_LIFETIME_MS - 1)).toEqual({
      ok: true,
      claims,
    });
  });

  it.each([
    ["expired", async (s: string) => s, "chatserver", OAUTH_STATE_LIFETIME_MS, "expired"],
    ["for another plugin", async (s: string) => s, "workspace", 0, "wrong_plugin"],
    [
      "with a flipped payload byte",
      async (s: string) => (s[0] === "e" ? "f" : "e") + s.slice(1),
      "chatserver",
      0,
      "invalid",
    ],
    [
      "signed with another secret",
      async () =>
        (
          await signOAuthState(
            "another-secret-another-secret-xx!",
            { projectId: 42, pluginId: "chatserver" },
            1_700_000_000_000,
          )
        ).state,
      "chatserver",
      0,
      "invalid",
    ],
    [
      "forged (unsigned JSON)",
      async () => btoa(JSON.stringify({ projectId: 1, pluginId: "chatserver", nonce: "n", exp: 9e15 })),
      "chatserver",
      0,
      "invalid",
    ],
    ["empty", async () => "", "chatserver", 0, "invalid"],
  ] as const)("refuses a state that is %s", async (_name, mutate, pluginId, later, reason) => {
    const now = 1_700_000_000_000;
    const { state } = await signOAuthState(STATE_SECRET, { projectId: 42, pluginId: "chatserver" }, now);
    expect(await verifyOAuthState(STATE_SECRET, await mutate(state), pluginId, now + later)).toEqual({
      ok: false,
      reason,
    });
  });
});
