// The chat server's webhook verifier, in Node: RFC 8032 known answers against
// both implementations, tampering, the freshness window, and requests signed
// by an independent implementation (node:crypto).
import { createPrivateKey, generateKeyPairSync, sign } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  MAX_WEBHOOK_SKEW_SECONDS,
  ed25519PublicKeyHex,
  hexToBytes,
  signEd25519,
  verifyEd25519Noble,
  verifyEd25519WebCrypto,
  verifyEd25519Webhook,
  type Ed25519Implementation,
} from "#src/core/crypto/ed25519.ts";
import { withSPlusL } from "#test/support/crypto/ed25519Malleated.ts";

// RFC 8032 section 7.1, TEST 1-3.
const RFC8032 = [
  {
    name: "TEST 1 (empty message)",
    secret: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    message: "",
    signature:
      "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    name: "TEST 2 (1 byte)",
    secret: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    publicKey: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    message: "72",
    signature:
      "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    name: "TEST 3 (2 bytes)",
    secret: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    publicKey: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    message: "af82",
    signature:
      "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
];

const IMPLS: [Ed25519Implementation, typeof verifyEd25519WebCrypto][] = [
  ["webcrypto", verifyEd25519WebCrypto],
  ["noble", verifyEd25519Noble],
];

function bytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = hexToBytes(hex, hex.length / 2);
  if (!out) throw new Error(`bad hex ${hex}`);
  return out;
}

function flipBit(hex: string, bit: number): string {
  const b = bytes(hex);
  b[bit >> 3]! ^= 1 << (bit & 7);
  return Buffer.from(b).toString("hex");
}

describe.each(IMPLS)("Ed25519 %s: RFC 8032 section 7.1 known answers", (_name, verify) => {
  it.each(RFC8032)("$name verifies; a flipped bit in signature, message or key does not", async (v) => {
    expect(await verify(bytes(v.publicKey), bytes(v.signature), bytes(v.message))).toBe(true);
    for (const bit of [0, 7, 255, 256, 511]) {
      expect(await verify(bytes(v.publicKey), bytes(flipBit(v.signature, bit)), bytes(v.message))).toBe(false);
    }
    expect(await verify(bytes(flipBit(v.publicKey, 3)), bytes(v.signature), bytes(v.message))).toBe(false);
    const longer = bytes(v.message + "00");
    expect(await verify(bytes(v.publicKey), bytes(v.signature), longer)).toBe(false);
    if (v.message)
      expect(await verify(bytes(v.publicKey), bytes(v.signature), bytes(flipBit(v.message, 0)))).toBe(false);
  });

  it("refuses a signature whose S is not reduced (S + L), which RFC 8032 requires rejecting", async () => {
    const v = RFC8032[0]!;
    const sig = withSPlusL(bytes(v.signature));
    expect(await verify(bytes(v.publicKey), sig, bytes(v.message))).toBe(false);
  });

  it("refuses an all-zero key and signature, and a key that is not a curve point, without throwing", async () => {
    expect(await verify(new Uint8Array(32), new Uint8Array(64), new Uint8Array())).toBe(false);
    const notAPoint = bytes("02" + "00".repeat(30) + "80"); // y = 2 with x's sign bit: no such point
    expect(await verify(notAPoint, bytes(RFC8032[0]!.signature), new Uint8Array())).toBe(false);
  });
});

describe("signEd25519 / ed25519PublicKeyHex (the fake chat server's signer)", () => {
  it.each(RFC8032)("$name: the seed gives the RFC public key and the RFC signature byte for byte", async (v) => {
    expect(await ed25519PublicKeyHex(v.secret)).toBe(v.publicKey);
    expect(await signEd25519(v.secret, bytes(v.message))).toBe(v.signature);
  });
});

const SEED = RFC8032[0]!.secret;
const PUBLIC_KEY = RFC8032[0]!.publicKey;
const NOW_MS = 1_790_000_000_000;
const TS = String(NOW_MS / 1000);
const BODY = '{"type":1,"id":"123","application_id":"999","token":"tok","version":1}';

describe.each(["webcrypto", "noble"] as const)("verifyEd25519Webhook (%s)", (implementation) => {
  const check = (key: string, sig: string | null, ts: string | null, body: string | Uint8Array, nowMS = NOW_MS) =>
    verifyEd25519Webhook(key, { signatureHex: sig, timestamp: ts, rawBody: body }, { nowMS, implementation });

  it("accepts timestamp + raw body signed with the application key (string or bytes)", async () => {
    const sig = await signEd25519(SEED, TS + BODY);
    expect(await check(PUBLIC_KEY, sig, TS, BODY)).toEqual({ ok: true });
    expect(await check(PUBLIC_KEY, sig, TS, new TextEncoder().encode(BODY))).toEqual({ ok: true });
    expect(await check(PUBLIC_KEY.toUpperCase(), sig.toUpperCase(), TS, BODY)).toEqual({ ok: true });
  });

  it("refuses a changed body, a changed timestamp, re-serialised JSON and a signature over the body alone", async () => {
    const sig = await signEd25519(SEED, TS + BODY);
    expect(await check(PUBLIC_KEY, sig, TS, BODY.replace("123", "124"))).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
    expect(await check(PUBLIC_KEY, sig, String(Number(TS) + 1), BODY)).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
    expect(await check(PUBLIC_KEY, sig, TS, JSON.stringify(JSON.parse(BODY), null, 1))).toMatchObject({
      ok: false,
      reason: "bad_signature",
    });
    const bodyOnly = await signEd25519(SEED, BODY);
    expect(await check(PUBLIC_KEY, bodyOnly, TS, BODY)).toMatchObject({ ok: false, reason: "bad_signature" });
  });

  it("refuses a signature made with another key", async () => {
    const sig = await signEd25519(RFC8032[1]!.secret, TS + BODY);
    expect(await check(PUBLIC_KEY, sig, TS, BODY)).toMatchObject({ ok: false, reason: "bad_signature" });
  });

  it("refuses missing and malformed headers", async () => {
    const sig = await signEd25519(SEED, TS + BODY);
    expect(await check(PUBLIC_KEY, null, TS, BODY)).toMatchObject({ ok: false, reason: "missing" });
    expect(await check(PUBLIC_KEY, sig, null, BODY)).toMatchObject({ ok: false, reason: "missing" });
    expect(await check(PUBLIC_KEY, "", TS, BODY)).toMatchObject({ ok: false, reason: "missing" });
    expect(await check(PUBLIC_KEY, sig.slice(2), TS, BODY)).toMatchObject({ ok: false, reason: "malformed" });
    expect(await check(PUBLIC_KEY, sig + "00", TS, BODY)).toMatchObject({ ok: false, reason: "malformed" });
    expect(await check(PUBLIC_KEY, "zz" + sig.slice(2), TS, BODY)).toMatchObject({ ok: false, reason: "malformed" });
    for (const ts of [TS + ".5", "-" + TS, " " + TS, "1e9", "0x10"]) {
      expect(await check(PUBLIC_KEY, sig, ts, BODY)).toMatchObject({ ok: false, reason: "malformed" });
    }
    expect(await check("abc", sig, TS, BODY)).toMatchObject({ ok: false, reason: "bad_key" });
  });

  it(`accepts timestamps within ${MAX_WEBHOOK_SKEW_SECONDS} s either way, refuses beyond`, async () => {
    for (const [offset, ok] of [
      [0, true],
      [-MAX_WEBHOOK_SKEW_SECONDS, true],
      [MAX_WEBHOOK_SKEW_SECONDS, true],
      [-MAX_WEBHOOK_SKEW_SECONDS - 1, false],
      [MAX_WEBHOOK_SKEW_SECONDS + 1, false],
      [-86_400, false],
    ] as const) {
      const ts = String(Number(TS) + offset);
      const sig = await signEd25519(SEED, ts + BODY);
      const result = await check(PUBLIC_KEY, sig, ts, BODY);
      expect(result, `offset ${offset}`).toEqual(
        ok ? { ok: true } : expect.objectContaining({ ok: false, reason: "stale" }),
      );
    }
  });
});

describe("requests signed by node:crypto (an independent Ed25519 implementation)", () => {
  it.each(["webcrypto", "noble"] as const)(
    "%s accepts 50 random keys and bodies, and refuses each with a flipped byte",
    async (implementation) => {
      for (let i = 0; i < 50; i++) {
        const { privateKey, publicKey } = generateKeyPairSync("ed25519");
        const raw = publicKey.export({ format: "jwk" }).x!;
        const keyHex = Buffer.from(raw, "base64url").toString("hex");
        const body = JSON.stringify({ type: 2, id: String(i), data: { name: "hello", text: "é😀".repeat(i) } });
        const ts = String(Math.floor(NOW_MS / 1000) - i);
        const sig = sign(null, Buffer.from(ts + body, "utf8"), privateKey).toString("hex");
        expect(
          await verifyEd25519Webhook(
            keyHex,
            { signatureHex: sig, timestamp: ts, rawBody: body },
            { nowMS: NOW_MS, implementation },
          ),
        ).toEqual({
          ok: true,
        });
        const tampered = Buffer.from(ts + body, "utf8");
        tampered[tampered.length - 1 - (i % 5)]! ^= 0x01;
        expect(
          await verifyEd25519Webhook(
            keyHex,
            { signatureHex: sig, timestamp: ts, rawBody: tampered.subarray(ts.length) },
            { nowMS: NOW_MS, implementation },
          ),
        ).toMatchObject({ ok: false, reason: "bad_signature" });
      }
    },
  );

  it("the RFC TEST 1 seed through node:crypto signs what our verifier accepts (the anchors' Discord-shaped check)", async () => {
    const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(SEED, "hex")]);
    const privateKey = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
    const sig = sign(null, Buffer.from(TS + BODY), privateKey).toString("hex");
    expect(sig).toBe(await signEd25519(SEED, TS + BODY));
    expect(
      await verifyEd25519Webhook(PUBLIC_KEY, { signatureHex: sig, timestamp: TS, rawBody: BODY }, { nowMS: NOW_MS }),
    ).toEqual({ ok: true });
  });
});
