import { describe, expect, it } from "vitest";
import {
  MAX_TOKEN_AGE_SECONDS,
  parseRequestToken,
  pathAndQueryOf,
  signRequestToken,
  verifyRequestToken,
  type SignedRequestParts,
  type TokenCheck,
  type TokenPurpose,
} from "#src/core/requestToken.ts";

const SECRET_1 = "11".repeat(32);
const SECRET_2 = "22".repeat(32);
const SECRETS: Record<string, string> = { "1": SECRET_1, "2": SECRET_2 };
const lookup = (id: string) => SECRETS[id] ?? null;

// A whole second, so the token's timestamp equals NOW / 1000 exactly.
const NOW = 1_800_000_000_000;
const REQ: SignedRequestParts = {
  method: "POST",
  pathAndQuery: "/internal/workflow/execute",
  body: '{"runId":"run_1"}',
};

const sign = (
  overrides: {
    purpose?: TokenPurpose;
    id?: string | number;
    secret?: string;
    req?: SignedRequestParts;
    now?: number;
  } = {},
) =>
  signRequestToken(overrides.purpose ?? "identity", overrides.req ?? REQ, {
    projectId: overrides.id ?? 1,
    secret: overrides.secret ?? SECRET_1,
    nowMS: overrides.now ?? NOW,
  });

const verify = (
  token: string | null,
  overrides: { purpose?: TokenPurpose; req?: SignedRequestParts; now?: number; lookup?: typeof lookup } = {},
) =>
  verifyRequestToken(overrides.purpose ?? "identity", token, overrides.req ?? REQ, {
    lookupSecret: overrides.lookup ?? lookup,
    nowMS: overrides.now ?? NOW,
  });

function replacePart(token: string, index: 0 | 1 | 2, value: string): string {
  const parts = token.split(".");
  parts[index] = value;
  return parts.join(".");
}

/** Flips the first character of the signature (changes decoded bits, unlike the last character). */
function flipSignature(token: string): string {
  const sig = token.split(".")[2]!;
  return replacePart(token, 2, (sig[0] === "A" ? "B" : "A") + sig.slice(1));
}

describe("request tokens", () => {
  it("round-trips: {projectId}.{timestamp}.{43-char base64url signature}", async () => {
    const token = await sign();
    expect(token).toMatch(/^1\.1800000000\.[A-Za-z0-9_-]{43}$/);
    expect(parseRequestToken(token)).toEqual({
      projectId: "1",
      timestamp: "1800000000",
      signature: token.split(".")[2],
    });
    expect(await verify(token)).toEqual({ ok: true, projectId: "1" });
  });

  it.each(["identity", "internal"] as const)("round-trips for purpose %s", async (purpose) => {
    expect(await verify(await sign({ purpose }), { purpose })).toEqual({ ok: true, projectId: "1" });
  });

  it("is deterministic for the same inputs and differs per project, secret and second", async () => {
    const a = await sign();
    expect(await sign()).toBe(a);
    expect(await sign({ id: 2, secret: SECRET_2 })).not.toBe(a);
    expect(await sign({ secret: SECRET_2 })).not.toBe(a);
    expect(await sign({ now: NOW + 1000 })).not.toBe(a);
    expect(await sign({ now: NOW + 999 })).toBe(a); // same second
  });

  it.each<{ name: string; body: SignedRequestParts["body"] }>([
    { name: "string", body: "héllo" },
    { name: "Uint8Array", body: new TextEncoder().encode("héllo") },
    { name: "ArrayBuffer", body: new TextEncoder().encode("héllo").buffer as ArrayBuffer },
  ])("signs the body bytes, whatever their type ($name)", async ({ body }) => {
    const token = await sign({ req: { ...REQ, body: "héllo" } });
    expect(await verify(token, { req: { ...REQ, body } })).toEqual({ ok: true, projectId: "1" });
  });

  it("treats a null body and an empty body alike", async () => {
    const token = await sign({ req: { ...REQ, body: null } });
    expect(await verify(token, { req: { ...REQ, body: "" } })).toEqual({ ok: true, projectId: "1" });
    expect(await verify(token, { req: { ...REQ, body: new Uint8Array() } })).toEqual({ ok: true, projectId: "1" });
  });

  it("normalises the method's case", async () => {
    const token = await sign({ req: { ...REQ, method: "post" } });
    expect(await verify(token, { req: { ...REQ, method: "POST" } })).toEqual({ ok: true, projectId: "1" });
  });

  it("accepts surrounding whitespace in the header value", async () => {
    expect(await verify(`  ${await sign()}\t`)).toEqual({ ok: true, projectId: "1" });
  });

  it.each([
    { name: "exactly 60 s old", now: NOW + MAX_TOKEN_AGE_SECONDS * 1000, expected: { ok: true, projectId: "1" } },
    { name: "60.001 s old", now: NOW + MAX_TOKEN_AGE_SECONDS * 1000 + 1, expected: { ok: false, reason: "expired" } },
    { name: "2 minutes old", now: NOW + 120_000, expected: { ok: false, reason: "expired" } },
    { name: "a day old", now: NOW + 86_400_000, expected: { ok: false, reason: "expired" } },
    {
      name: "exactly 60 s in the future",
      now: NOW - MAX_TOKEN_AGE_SECONDS * 1000,
      expected: { ok: true, projectId: "1" },
    },
    { name: "61 s in the future", now: NOW - 61_000, expected: { ok: false, reason: "expired" } },
    { name: "fresh", now: NOW + 500, expected: { ok: true, projectId: "1" } },
  ] as { name: string; now: number; expected: TokenCheck }[])(
    "checks age: a token $name",
    async ({ now, expected }) => {
      expect(MAX_TOKEN_AGE_SECONDS).toBe(60);
      expect(await verify(await sign(), { now })).toEqual(expected);
    },
  );

  const tampered: {
    name: string;
    token: () => Promise<string | null>;
    reason: string;
    req?: SignedRequestParts;
    purpose?: TokenPurpose;
  }[] = [
    // missing
    { name: "null", token: async () => null, reason: "missing" },
    { name: "empty string", token: async () => "", reason: "missing" },
    // malformed
    { name: "garbage", token: async () => "garbage", reason: "malformed" },
    { name: "only whitespace", token: async () => "   ", reason: "malformed" },
    { name: "two parts", token: async () => (await sign()).split(".").slice(0, 2).join("."), reason: "malformed" },
    { name: "four parts", token: async () => `${await sign()}.x`, reason: "malformed" },
    { name: "empty project id", token: async () => replacePart(await sign(), 0, ""), reason: "malformed" },
    { name: "non-numeric project id", token: async () => replacePart(await sign(), 0, "one"), reason: "malformed" },
    { name: "negative project id", token: async () => replacePart(await sign(), 0, "-1"), reason: "malformed" },
    {
      name: "16-digit project id",
      token: async () => replacePart(await sign(), 0, "1".repeat(16)),
      reason: "malformed",
    },
    { name: "non-numeric timestamp", token: async () => replacePart(await sign(), 1, "soon"), reason: "malformed" },
    {
      name: "fractional timestamp",
      token: async () => replacePart(await sign(), 1, "1800000000.5"),
      reason: "malformed",
    },
    {
      name: "13-digit timestamp (milliseconds)",
      token: async () => replacePart(await sign(), 1, String(NOW)),
      reason: "malformed",
    },
    { name: "signature one char short", token: async () => (await sign()).slice(0, -1), reason: "malformed" },
    { name: "signature one char long", token: async () => `${await sign()}A`, reason: "malformed" },
    {
      name: "signature in standard base64 (+)",
      token: async () => replacePart(await sign(), 2, "+".repeat(43)),
      reason: "malformed",
    },
    {
      name: "signature with padding",
      token: async () => replacePart(await sign(), 2, "A".repeat(42) + "="),
      reason: "malformed",
    },
    {
      name: "hex signature (64 chars)",
      token: async () => replacePart(await sign(), 2, "ab".repeat(32)),
      reason: "malformed",
    },
    // expired (checked before the secret lookup)
    { name: "timestamp 0", token: async () => replacePart(await sign(), 1, "0"), reason: "expired" },
    {
      name: "timestamp rewritten 2 min back",
      token: async () => replacePart(await sign(), 1, String(NOW / 1000 - 120)),
      reason: "expired",
    },
    // bad_signature
    { name: "signature flipped", token: async () => flipSignature(await sign()), reason: "bad_signature" },
    {
      name: "all-A signature",
      token: async () => replacePart(await sign(), 2, "A".repeat(43)),
      reason: "bad_signature",
    },
    {
      name: "timestamp rewritten by 1 s",
      token: async () => replacePart(await sign(), 1, String(NOW / 1000 - 1)),
      reason: "bad_signature",
    },
    {
      name: "project id rewritten to another known project",
      token: async () => replacePart(await sign(), 0, "2"),
      reason: "bad_signature",
    },
    {
      name: "signed with another project's secret",
      token: async () => sign({ secret: SECRET_2 }),
      reason: "bad_signature",
    },
    {
      name: "project id with a leading zero",
      token: async () => replacePart(await sign(), 0, "01"),
      reason: "unknown_project",
    },
    {
      name: "body changed",
      token: async () => sign(),
      req: { ...REQ, body: '{"runId":"run_2"}' },
      reason: "bad_signature",
    },
    { name: "body emptied", token: async () => sign(), req: { ...REQ, body: null }, reason: "bad_signature" },
    { name: "method changed", token: async () => sign(), req: { ...REQ, method: "PUT" }, reason: "bad_signature" },
    {
      name: "path changed",
      token: async () => sign(),
      req: { ...REQ, pathAndQuery: "/internal/workflow/other" },
      reason: "bad_signature",
    },
    {
      name: "query added",
      token: async () => sign(),
      req: { ...REQ, pathAndQuery: `${REQ.pathAndQuery}?x=1` },
      reason: "bad_signature",
    },
    {
      name: "trailing slash added",
      token: async () => sign(),
      req: { ...REQ, pathAndQuery: `${REQ.pathAndQuery}/` },
      reason: "bad_signature",
    },
    {
      name: "path case changed",
      token: async () => sign(),
      req: { ...REQ, pathAndQuery: REQ.pathAndQuery.toUpperCase() },
      reason: "bad_signature",
    },
    // purpose separation, both directions
    {
      name: "identity token presented as internal",
      token: async () => sign({ purpose: "identity" }),
      purpose: "internal",
      reason: "bad_signature",
    },
    {
      name: "internal token presented as identity",
      token: async () => sign({ purpose: "internal" }),
      purpose: "identity",
      reason: "bad_signature",
    },
    // unknown_project
    { name: "unknown project id", token: async () => sign({ id: 3 }), reason: "unknown_project" },
    { name: "project id 0", token: async () => sign({ id: 0 }), reason: "unknown_project" },
  ];

  it.each(tampered)("rejects $name → $reason", async ({ token, reason, req, purpose }) => {
    expect(await verify(await token(), { req, purpose })).toEqual({ ok: false, reason });
  });

  it.each([1, 2, 3])(
    "refuses as malformed a signature whose last character differs only in its two unused bits (xor %i)",
    async (bits) => {
      const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const token = await sign();
      const sig = token.split(".")[2]!;
      // 43 characters carry 258 bits for the 256 of the HMAC: the last one's two low bits are spare (zero).
      const last = ALPHABET.indexOf(sig.at(-1)!);
      expect(last & 3).toBe(0);
      const variant = sig.slice(0, -1) + ALPHABET[last ^ bits];
      const bytes = (text: string) => atob(text.replaceAll("-", "+").replaceAll("_", "/") + "=");
      expect(bytes(variant)).toBe(bytes(sig));
      expect(await verify(replacePart(token, 2, variant))).toEqual({ ok: false, reason: "malformed" });
      expect(await verify(token)).toEqual({ ok: true, projectId: "1" });
    },
  );

  it("never looks up a secret for missing, malformed or expired tokens", async () => {
    const looked: string[] = [];
    const spy = (id: string) => {
      looked.push(id);
      return lookup(id);
    };
    await verify(null, { lookup: spy });
    await verify("1.2.3", { lookup: spy });
    await verify(await sign(), { lookup: spy, now: NOW + 120_000 });
    expect(looked).toEqual([]);
    await verify(await sign(), { lookup: spy });
    expect(looked).toEqual(["1"]);
  });

  it("supports an async secret lookup", async () => {
    expect(
      await verifyRequestToken("identity", await sign(), REQ, { lookupSecret: async (id) => lookup(id), nowMS: NOW }),
    ).toEqual({
      ok: true,
      projectId: "1",
    });
    expect(
      await verifyRequestToken("identity", await sign(), REQ, { lookupSecret: async () => null, nowMS: NOW }),
    ).toEqual({
      ok: false,
      reason: "unknown_project",
    });
  });

  it("binds the token to the project: project 2 cannot reuse project 1's token under its own id", async () => {
    const one = await sign({ id: 1, secret: SECRET_1 });
    const two = await sign({ id: 2, secret: SECRET_2 });
    expect(await verify(one)).toEqual({ ok: true, projectId: "1" });
    expect(await verify(two)).toEqual({ ok: true, projectId: "2" });
    expect(await verify(replacePart(two, 0, "1"))).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verify(replacePart(one, 0, "2"))).toEqual({ ok: false, reason: "bad_signature" });
  });

  // Path and query as sent, escapes kept; an empty query and the fragment are dropped.
  it.each([
    ...["/internal/workflow/execute", "/a/b?x=1&y=2", "/", "/__workflow/wf%3Ax/execute"].map((p) => [p, p]),
    ["/a?", "/a"],
    ["/a#frag", "/a"],
  ])("pathAndQueryOf(https://api.test%s) is %s", (sent, expected) => {
    const url = `https://api.test${sent}`;
    expect(pathAndQueryOf(url)).toBe(expected);
    expect(pathAndQueryOf(new URL(url))).toBe(expected);
  });
});
