import { describe, expect, it } from "vitest";
import { base64url, fromBase64url, fromCanonicalBase64url, fromHex, hex } from "#src/core/crypto/encoding.ts";
import { randomBase64url, randomHex } from "#src/core/crypto/encoding.ts";

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
