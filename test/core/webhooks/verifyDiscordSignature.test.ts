import { describe, expect, it } from "vitest";
import { verifyDiscordSignature } from "../../../src/core/webhooks/verifyDiscordSignature.ts";

// RFC 8032 §7.1 test 1's key pair; the signature is Ed25519 (deterministic) over "1780000000" + BODY.
const PUBLIC_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const TIMESTAMP = "1780000000";
const BODY = '{"id":"1234567890","type":1}';
const SIGNATURE =
  "3dbe59b424983654e1176338eb25932aa1a3d49dbcda6411d77ce6c736dfbab1f366727ecab98268e76958c3a94fe859f2f859550e9e2e6b7373196f1ffdec01";
const NOW_MS = Number(TIMESTAMP) * 1000;
const SIGNED = { "X-Signature-Ed25519": SIGNATURE, "X-Signature-Timestamp": TIMESTAMP };

function check(given: Record<string, string>, body = BODY, nowMS = NOW_MS, key = PUBLIC_KEY) {
  return verifyDiscordSignature(key, { headers: new Headers(given), body: new TextEncoder().encode(body), nowMS });
}

describe("verifyDiscordSignature (a hand-computed Ed25519 vector)", () => {
  it("accepts the signed delivery", async () => {
    expect(await check(SIGNED)).toEqual({ ok: true });
  });

  it.each([
    {
      name: "no signature",
      given: { "X-Signature-Timestamp": TIMESTAMP },
      body: BODY,
      nowMS: NOW_MS,
      key: PUBLIC_KEY,
      reason: "missing",
    },
    {
      name: "short signature",
      given: { ...SIGNED, "X-Signature-Ed25519": "ab" },
      body: BODY,
      nowMS: NOW_MS,
      key: PUBLIC_KEY,
      reason: "malformed",
    },
    {
      name: "tampered body",
      given: SIGNED,
      body: BODY.replace("1234", "4321"),
      nowMS: NOW_MS,
      key: PUBLIC_KEY,
      reason: "bad_signature",
    },
    { name: "10 minutes old", given: SIGNED, body: BODY, nowMS: NOW_MS + 600_000, key: PUBLIC_KEY, reason: "stale" },
    { name: "a key that is not hex", given: SIGNED, body: BODY, nowMS: NOW_MS, key: "not-a-key", reason: "bad_secret" },
  ])("refuses $name: $reason", async ({ given, body, nowMS, key, reason }) => {
    expect(await check(given, body, nowMS, key)).toMatchObject({ ok: false, reason });
  });
});
