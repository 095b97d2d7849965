import { describe, expect, it } from "vitest";
import { deriveKey } from "#src/core/crypto/keys.ts";
import { hkdfWrittenOut } from "#test/support/crypto/hkdfWrittenOut.ts";

const encoder = new TextEncoder();
const SECRET = "a-worker-secret-of-at-least-32-characters";

describe("deriveKey", () => {
  it.each([
    ["platform-callback-token-v1"],
    ["platform-signin-csrf-v1"],
    ["platform-plugins:oauth-state-v1"],
    ["platform-plugins:resource-owner-ref-v1"],
  ])("derives the same HMAC key as before for %s", async (info) => {
    const data = encoder.encode("payload");
    const expected = new Uint8Array(await crypto.subtle.sign("HMAC", await hkdfWrittenOut(SECRET, info, "HMAC"), data));
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
        await hkdfWrittenOut(SECRET, info, "AES-GCM"),
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
