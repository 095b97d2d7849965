import { describe, expect, it } from "vitest";
import { base64url } from "#src/core/crypto/encoding.ts";
import { deriveKey, importKey } from "#src/core/crypto/keys.ts";
import { openSealed, seal } from "#src/core/crypto/sealed.ts";

const encoder = new TextEncoder();
const SECRET = "a-worker-secret-of-at-least-32-characters";

describe("sealed", () => {
  it("writes v1.<iv‖ciphertext‖tag>, opens it, and refuses another key, other additional data or any altered character", async () => {
    const key = await deriveKey(SECRET, { info: "test-seal", algorithm: "AES-GCM-256" });
    const value = await seal(key, "hello", "aad");
    expect(value).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(await openSealed(key, value, "aad")).toBe("hello");
    expect(await seal(key, "hello", "aad")).not.toBe(value);
    expect(await openSealed(key, value, "other")).toBeNull();
    expect(
      await openSealed(await deriveKey(SECRET, { info: "test-seal-2", algorithm: "AES-GCM-256" }), value, "aad"),
    ).toBeNull();
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
    const ct = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode("aad") },
      key,
      encoder.encode("old"),
    );
    expect(await openSealed(key, `v1.${base64url(iv)}.${base64url(ct)}`, "aad")).toBe("old");
    expect(await openSealed(key, `${base64url(iv)}.${base64url(ct)}`, "aad")).toBe("old");
    expect(await openSealed(key, `v2.${base64url(iv)}.${base64url(ct)}`, "aad")).toBeNull();
  });
});
