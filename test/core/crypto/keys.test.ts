import { describe, expect, it } from "vitest";
import { deriveKey } from "#src/core/crypto/keys.ts";

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

describe("deriveKey", () => {
  it.each([
    ["platform-callback-token-v1"],
    ["platform-signin-csrf-v1"],
    ["platform-plugins:oauth-state-v1"],
    ["platform-plugins:resource-owner-ref-v1"],
  ])("derives the same HMAC key as before for %s", async (info) => {
    const data = encoder.encode("payload");
    const expected = new Uint8Array(await crypto.subtle.sign("HMAC", await hkdf(SECRET, info, "HMAC"), data));
    const actual = new Uint8Array(
      await crypto.subtle.sign("HMAC", await deriveKey(SECRET, { info, algorithm: "HMAC-SHA256" }), data),
    );
    expect(actual).toEqual(expected);
  });

  it.each([["platform-session-v1"], ["platform-login-flow-cookie-v1"]])(
    "derives the same AES-GCM key as before for %s",
    async (info) => {
      const iv = new Uint8Array(12);
      const sealed = await crypto.subtle.encrypt(
        { name: "AES-GCM", iv },
        await hkdf(SECRET, info, "AES-GCM"),
        encoder.encode("x"),
      );
      const plain = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv },
        await deriveKey(SECRET, { info, algorithm: "AES-GCM-256" }),
        sealed,
      );
      expect(new TextDecoder().decode(plain)).toBe("x");
    },
  );

  it("is memoised per secret, purpose and algorithm", async () => {
    const purpose = { info: "memo", algorithm: "HMAC-SHA256" } as const;
    expect(deriveKey(SECRET, purpose)).toBe(deriveKey(SECRET, purpose));
    expect(deriveKey(SECRET, purpose)).not.toBe(deriveKey(SECRET + "!", purpose));
    expect(deriveKey(SECRET, purpose)).not.toBe(deriveKey(SECRET, { info: "memo2", algorithm: "HMAC-SHA256" }));
  });
});
