// Both Ed25519 implementations inside workerd (where the plugin runs): RFC 8032
// section 7.1 known answers, a flipped bit, a non-reduced S, and a webhook
// signed by the fake's signer.
import { describe, expect, it } from "vitest";
import {
  hexToBytes,
  signEd25519,
  verifyEd25519Noble,
  verifyEd25519WebCrypto,
  verifyEd25519Webhook,
} from "#src/core/crypto/ed25519.ts";
import { withSPlusL } from "#test/support/crypto/ed25519Malleated.ts";

const VECTORS = [
  [
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    "",
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  ],
  [
    "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    "72",
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  ],
  [
    "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    "af82",
    "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  ],
] as const;

const b = (hex: string) => hexToBytes(hex, hex.length / 2)!;

describe.each([
  ["webcrypto", verifyEd25519WebCrypto],
  ["noble", verifyEd25519Noble],
] as const)("Ed25519 %s in workerd", (_name, verify) => {
  it.each(VECTORS)("RFC 8032 vector with key %s verifies, and not with a flipped bit", async (key, msg, sig) => {
    expect(await verify(b(key), b(sig), b(msg))).toBe(true);
    const bad = b(sig);
    bad[10]! ^= 0x01;
    expect(await verify(b(key), bad, b(msg))).toBe(false);
  });

  it("refuses S + L (malleability)", async () => {
    const [key, msg, sig] = VECTORS[0];
    expect(await verify(b(key), withSPlusL(b(sig)), b(msg))).toBe(false);
  });
});

it("verifyEd25519Webhook accepts the fake's signature with either implementation", async () => {
  const seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
  const ts = String(Math.floor(Date.now() / 1000));
  const body = '{"type":1}';
  const sig = await signEd25519(seed, ts + body);
  for (const implementation of ["webcrypto", "noble"] as const) {
    expect(
      await verifyEd25519Webhook(
        VECTORS[0][0],
        { signatureHex: sig, timestamp: ts, rawBody: body },
        { implementation },
      ),
    ).toEqual({ ok: true });
  }
});
