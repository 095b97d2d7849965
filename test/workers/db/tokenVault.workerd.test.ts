import { describe, expect, it } from "vitest";
import { base64url } from "#src/core/crypto/encoding.ts";
import { decode32ByteKey, openToken, sealToken } from "#src/workers/db/tokenVault.ts";
import { platformRejection, TOKEN_ENCRYPTION_KEY } from "#test/support/workerd/index.ts";

describe("tokenVault", () => {
  it("round-trips, uses a fresh IV each time, and refuses any tampering, another key or another context", async () => {
    const sealed = await sealToken(TOKEN_ENCRYPTION_KEY, "xoxb-secret", "workspace:access:1");
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain("xoxb");
    expect(await openToken(TOKEN_ENCRYPTION_KEY, sealed, "workspace:access:1")).toBe("xoxb-secret");
    expect(await sealToken(TOKEN_ENCRYPTION_KEY, "xoxb-secret", "workspace:access:1")).not.toBe(sealed);

    const body = sealed.slice(3);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const tampered = [
      `v1.${flip(body, 0)}`,
      `v1.${flip(body, 20)}`,
      `v1.${flip(body, body.length - 2)}`,
      `v2.${body}`,
      "plain",
    ];
    for (const bad of tampered)
      expect((await platformRejection(openToken(TOKEN_ENCRYPTION_KEY, bad, "workspace:access:1"))).code).toBe(
        "internal",
      );
    expect((await platformRejection(openToken("ff".repeat(32), sealed, "workspace:access:1"))).code).toBe("internal");
    expect((await platformRejection(openToken(TOKEN_ENCRYPTION_KEY, sealed, "workspace:access:2"))).code).toBe(
      "internal",
    );
  });

  it("still opens rows sealed in the vault's earlier format v1.<iv>.<ciphertext>", async () => {
    const key = await crypto.subtle.importKey(
      "raw",
      decode32ByteKey(TOKEN_ENCRYPTION_KEY, "TOKEN_ENCRYPTION_KEY"),
      "AES-GCM",
      false,
      ["encrypt"],
    );
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const additionalData = new TextEncoder().encode("v1:workspace:access:1");
    const ct = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData },
      key,
      new TextEncoder().encode("xoxb-old"),
    );
    const row = `v1.${base64url(iv)}.${base64url(ct)}`;
    expect(await openToken(TOKEN_ENCRYPTION_KEY, row, "workspace:access:1")).toBe("xoxb-old");
    expect((await platformRejection(openToken(TOKEN_ENCRYPTION_KEY, row, "workspace:access:2"))).code).toBe("internal");
  });

  it("accepts a base64 key and refuses a key that is not 32 bytes", async () => {
    const b64 = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));
    expect(await openToken(b64, await sealToken(b64, "t"))).toBe("t");
    expect((await platformRejection(sealToken("short", "t"))).message).toMatch(/TOKEN_ENCRYPTION_KEY must be 32 bytes/);
  });
});
