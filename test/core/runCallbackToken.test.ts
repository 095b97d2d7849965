import { describe, expect, it } from "vitest";
import { signRunCallbackToken, verifyRunCallbackToken } from "#src/core/runCallbackToken.ts";
import { signStreamToken } from "#src/core/streamToken.ts";

const SECRET = "a".repeat(64);
const NOW = 1_700_000_000_000;

/** The same token with its character at `index` replaced by another of the base64url alphabet. */
function alteredAt(token: string, index: number): string {
  const swap = token[index] === "A" ? "B" : "A";
  return token.slice(0, index) + swap + token.slice(index + 1);
}

describe("run callback tokens", () => {
  it("verify for their run and event until they expire, each with its own random id", async () => {
    const first = await signRunCallbackToken(SECRET, { run: "run-1", evt: "approval", exp: NOW + 1000 });
    const second = await signRunCallbackToken(SECRET, { run: "run-1", evt: "approval", exp: NOW + 1000 });
    const checks = await Promise.all([first, second].map((t) => verifyRunCallbackToken(t, SECRET, "run-1", NOW + 999)));
    expect(checks).toEqual([
      {
        ok: true,
        claims: { run: "run-1", evt: "approval", exp: NOW + 1000, jti: expect.stringMatching(/^[\w-]{22}$/) },
      },
      { ok: true, claims: expect.objectContaining({ run: "run-1", evt: "approval" }) },
    ]);
    const [a, b] = checks.map((c) => (c.ok ? c.claims.jti : ""));
    expect(a).not.toBe(b);
  });

  it.each([
    ["expired (at its expiry)", async (t: string) => t, "run-1", NOW + 1000, SECRET, "expired"],
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
    [
      "a stream token of the same run and secret",
      async () => signStreamToken(SECRET, { run: "run-1", exp: NOW + 1000 }),
      "run-1",
      NOW,
      SECRET,
      "malformed",
    ],
  ])("a token %s is refused", async (_case, make, runId, at, secret, reason) => {
    const token = await make(await signRunCallbackToken(SECRET, { run: "run-1", evt: "approval", exp: NOW + 1000 }));
    await expect(verifyRunCallbackToken(token, secret, runId, at)).resolves.toEqual({ ok: false, reason });
  });
});
