import { describe, expect, it } from "vitest";
import { base64url, fromBase64url, fromCanonicalBase64url, fromHex, hex, randomBase64url, randomHex } from "../../../src/core/crypto/encoding.ts";
import { deriveKey, importKey } from "../../../src/core/crypto/keys.ts";
import { openSealed, seal } from "../../../src/core/crypto/sealed.ts";
import { signature, signatureValid, signPayload, timingSafeEqual, verifyPayload } from "../../../src/core/crypto/signed.ts";

const encoder = new TextEncoder();
const SECRET = "a-worker-secret-of-at-least-32-characters";

/** HKDF-SHA256 with an empty salt, written out the way every copy did before core/crypto/keys.ts. */
async function hkdf(secret: string, info: string, algorithm: "HMAC" | "AES-GCM"): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode(info) },
    ikm,
    algorithm === "HMAC" ? { name: "HMAC", hash: "SHA-256", length: 256 } : { name: "AES-GCM", length: 256 },
    false,
    algorithm === "HMAC" ? ["sign", "verify"] : ["encrypt", "decrypt"],
  );
}

describe("encoding", () => {
  it("base64url round-trips without padding and refuses other alphabets", () => {
    const bytes = Uint8Array.from({ length: 33 }, (_, i) => i * 7);
    expect(base64url(bytes)).not.toMatch(/[+/=]/);
    expect(fromBase64url(base64url(bytes))).toEqual(bytes);
    expect(fromBase64url("a+b/")).toBeNull();
    expect(fromBase64url("")).toEqual(new Uint8Array());
  });

  it("canonical base64url refuses a second spelling of the same bytes", () => {
    expect(fromCanonicalBase64url("AA")).toEqual(new Uint8Array([0]));
    expect(fromBase64url("AB")).toEqual(new Uint8Array([0]));
    expect(fromCanonicalBase64url("AB")).toBeNull();
  });

  it("hex round-trips in either case and refuses odd lengths or other characters", () => {
    expect(hex(new Uint8Array([0, 15, 255]))).toBe("000fff");
    expect(fromHex("000FfF")).toEqual(new Uint8Array([0, 15, 255]));
    expect(fromHex("abc")).toBeNull();
    expect(fromHex("zz")).toBeNull();
    expect(randomHex(32)).toMatch(/^[0-9a-f]{64}$/);
    expect(randomBase64url(32)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("deriveKey", () => {
  it.each([
    ["platform-callback-token-v1"],
    ["platform-signin-csrf-v1"],
    ["platform-plugins:oauth-state-v1"],
    ["platform-plugins:resource-owner-ref-v1"],
  ])("derives the same HMAC key as before for %s", async (info) => {
    const data = encoder.encode("payload");
    const expected = new Uint8Array(await crypto.subtle.sign("HMAC", await hkdf(SECRET, info, "HMAC"), data));
    const actual = new Uint8Array(await crypto.subtle.sign("HMAC", await deriveKey(SECRET, { info, algorithm: "HMAC-SHA256" }), data));
    expect(actual).toEqual(expected);
  });

  it.each([["platform-session-v1"], ["platform-login-flow-cookie-v1"]])("derives the same AES-GCM key as before for %s", async (info) => {
    const iv = new Uint8Array(12);
    const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await hkdf(SECRET, info, "AES-GCM"), encoder.encode("x"));
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv }, await deriveKey(SECRET, { info, algorithm: "AES-GCM-256" }), sealed);
    expect(new TextDecoder().decode(plain)).toBe("x");
  });

  it("is memoised per secret, purpose and algorithm", async () => {
    const purpose = { info: "memo", algorithm: "HMAC-SHA256" } as const;
    expect(deriveKey(SECRET, purpose)).toBe(deriveKey(SECRET, purpose));
    expect(deriveKey(SECRET, purpose)).not.toBe(deriveKey(SECRET + "!", purpose));
    expect(deriveKey(SECRET, purpose)).not.toBe(deriveKey(SECRET, { info: "memo2", algorithm: "HMAC-SHA256" }));
  });
});

describe("sealed", () => {
  it("writes v1.<iv‖ciphertext‖tag>, opens it, and refuses another key, other additional data or any altered character", async () => {
    const key = await deriveKey(SECRET, { info: "test-seal", algorithm: "AES-GCM-256" });
    const value = await seal(key, "hello", "aad");
    expect(value).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(await openSealed(key, value, "aad")).toBe("hello");
    expect(await seal(key, "hello", "aad")).not.toBe(value);
    expect(await openSealed(key, value, "other")).toBeNull();
    expect(await openSealed(await deriveKey(SECRET, { info: "test-seal-2", algorithm: "AES-GCM-256" }), value, "aad")).toBeNull();
    for (let i = 3; i < value.length; i += 7) {
      const altered = value.slice(0, i) + (value[i] === "A" ? "B" : "A") + value.slice(i + 1);
      expect(await openSealed(key, altered, "aad")).toBeNull();
    }
    expect(await openSealed(key, "v1.", "aad")).toBeNull();
    expect(await openSealed(key, "plain", "aad")).toBeNull();
  });

  it("still opens the two earlier wire formats: `v1.<iv>.<ct>` (token vault) and `<iv>.<ct>` (flow cookie)", async () => {
    const key = await importKey(new Uint8Array(32).fill(7), "AES-GCM-256");
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encoder.encode("aad") }, key, encoder.encode("old"));
    expect(await openSealed(key, `v1.${base64url(iv)}.${base64url(ct)}`, "aad")).toBe("old");
    expect(await openSealed(key, `${base64url(iv)}.${base64url(ct)}`, "aad")).toBe("old");
    expect(await openSealed(key, `v2.${base64url(iv)}.${base64url(ct)}`, "aad")).toBeNull();
  });
});

describe("signed", () => {
  it("signs payloads that verify once, with the same prefix and key only", async () => {
    const key = await deriveKey(SECRET, { info: "test-sign", algorithm: "HMAC-SHA256" });
    const value = await signPayload(key, { a: 1 }, "v1.");
    expect(value).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(await verifyPayload(key, value, "v1.")).toEqual({ ok: true, payload: { a: 1 } });
    expect(await verifyPayload(key, value.slice(3))).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyPayload(await deriveKey(SECRET, { info: "other", algorithm: "HMAC-SHA256" }), value, "v1.")).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyPayload(key, null)).toEqual({ ok: false, reason: "malformed" });
    expect(await verifyPayload(key, `${value}x`, "v1.")).toEqual({ ok: false, reason: "malformed" });
    expect(await verifyPayload(key, "v1." + "A".repeat(5000) + "." + "A".repeat(43), "v1.")).toEqual({ ok: false, reason: "malformed" });
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
