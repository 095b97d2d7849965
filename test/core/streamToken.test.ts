import { describe, expect, it } from "vitest";
import { signStreamToken, verifyStreamToken } from "#src/core/streamToken.ts";
import { deriveKey } from "#src/core/crypto/keys.ts";
import { signPayload } from "#src/core/crypto/signed.ts";

const SECRET = "a".repeat(64);
const NOW = 1_700_000_000_000;

/** The same token with its character at `index` replaced by another of the base64url alphabet. */
function alteredAt(token: string, index: number): string {
  const swap = token[index] === "A" ? "B" : "A";
  return token.slice(0, index) + swap + token.slice(index + 1);
}

describe("stream tokens", () => {
  it("verify for their run until they expire, with their topics, as often as asked (a browser reconnects)", async () => {
    const token = await signStreamToken(SECRET, { run: "run-1", topics: ["progress"], exp: NOW + 1000 });
    for (const at of [NOW, NOW + 999])
      await expect(verifyStreamToken(token, SECRET, "run-1", at)).resolves.toEqual({
        ok: true,
        claims: { run: "run-1", topics: ["progress"], exp: NOW + 1000 },
      });
  });

  it.each([
    ["expired (at its expiry)", async (t: string) => t, "run-1", NOW + 1000, SECRET, "expired"],
    ["a replay after expiry", async (t: string) => t, "run-1", NOW + 86_400_000, SECRET, "expired"],
    ["pointed at another run", async (t: string) => t, "run-2", NOW, SECRET, "wrong_run"],
    ["signed with another project's secret", async (t: string) => t, "run-1", NOW, "b".repeat(64), "bad_signature"],
    ["altered in its payload", async (t: string) => alteredAt(t, 5), "run-1", NOW, SECRET, "bad_signature"],
    [
      "altered in its signature",
      async (t: string) => alteredAt(t, t.length - 10),
      "run-1",
      NOW,
      SECRET,
      "bad_signature",
    ],
    ["empty", async () => "", "run-1", NOW, SECRET, "malformed"],
    ["without its prefix", async (t: string) => t.slice(3), "run-1", NOW, SECRET, "malformed"],
    ["oversized", async () => `s1.${"A".repeat(10_000)}.${"A".repeat(43)}`, "run-1", NOW, SECRET, "malformed"],
    ["a signature cut short", async (t: string) => t.slice(0, -1), "run-1", NOW, SECRET, "malformed"],
  ])("a token %s is refused", async (_case, make, runId, at, secret, reason) => {
    const token = await make(await signStreamToken(SECRET, { run: "run-1", exp: NOW + 1000 }));
    await expect(verifyStreamToken(token, secret, runId, at)).resolves.toEqual({ ok: false, reason });
  });

  it.each([
    ["no run", { exp: NOW + 1000 }],
    ["no expiry", { run: "run-1" }],
    ["topics that are no list", { run: "run-1", exp: NOW + 1000, topics: "progress" }],
  ])("a correctly signed token with %s is malformed", async (_case, claims) => {
    const token = await signStreamToken(SECRET, claims as never);
    await expect(verifyStreamToken(token, SECRET, "run-1", NOW)).resolves.toEqual({ ok: false, reason: "malformed" });
  });

  it("is signed with a key of its own: the same claims signed with another purpose's key are refused", async () => {
    const otherKey = await deriveKey(SECRET, { info: "platform-callback-token-v1", algorithm: "HMAC-SHA256" });
    const token = await signPayload(otherKey, { run: "run-1", exp: NOW + 1000 }, "s1.");
    await expect(verifyStreamToken(token, SECRET, "run-1", NOW)).resolves.toEqual({
      ok: false,
      reason: "bad_signature",
    });
  });
});
