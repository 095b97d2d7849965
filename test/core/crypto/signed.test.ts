import { describe, expect, it } from "vitest";
import { fromBase64url } from "#src/core/crypto/encoding.ts";
import { deriveKey } from "#src/core/crypto/keys.ts";
import { signature, signatureValid, signPayload, timingSafeEqual, verifyPayload } from "#src/core/crypto/signed.ts";

const SECRET = "a-worker-secret-of-at-least-32-characters";

describe("signed", () => {
  it("signs payloads that verify once, with the same prefix and key only", async () => {
    const key = await deriveKey(SECRET, { info: "test-sign", algorithm: "HMAC-SHA256" });
    const value = await signPayload(key, { a: 1 }, "v1.");
    expect(value).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await verifyPayload(key, value, "v1.")).toEqual({ ok: true, payload: { a: 1 } });
    expect(await verifyPayload(key, value.slice(3))).toEqual({ ok: false, reason: "bad_signature" });
    expect(
      await verifyPayload(await deriveKey(SECRET, { info: "other", algorithm: "HMAC-SHA256" }), value, "v1."),
    ).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyPayload(key, null)).toEqual({ ok: false, reason: "malformed" });
    expect(await verifyPayload(key, `${value}x`, "v1.")).toEqual({ ok: false, reason: "malformed" });
    expect(await verifyPayload(key, "v1." + "A".repeat(5000) + "." + "A".repeat(43), "v1.")).toEqual({
      ok: false,
      reason: "malformed",
    });
  });

  it("accepts only the canonical 43-character spelling of a signature", async () => {
    const key = await deriveKey(SECRET, { info: "test-sign", algorithm: "HMAC-SHA256" });
    const sig = await signature(key, "data");
    expect(await signatureValid(key, "data", sig)).toBe(true);
    expect(await signatureValid(key, "datb", sig)).toBe(false);
    // The last of 43 characters carries two spare bits: the next character decodes to the same bytes.
    const alias = sig.slice(0, -1) + String.fromCharCode(sig.charCodeAt(42) + 1);
    expect(fromBase64url(alias)).toEqual(fromBase64url(sig));
    expect(await signatureValid(key, "data", alias)).toBe(false);
    expect(await signatureValid(key, "data", 42)).toBe(false);
  });

  it("timingSafeEqual compares whole strings", () => {
    expect(timingSafeEqual("abc", "abc")).toBe(true);
    expect(timingSafeEqual("abc", "abd")).toBe(false);
    expect(timingSafeEqual("abc", "abcd")).toBe(false);
    expect(timingSafeEqual("", "")).toBe(true);
  });
});
