/** The group order L = 2^252 + 27742317777372353535851937790883648493. */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;

/**
 * A copy of an Ed25519 signature with S replaced by S + L (little-endian, bytes 32..63): the same
 * point equation, a non-reduced S that RFC 8032 requires a verifier to reject.
 */
export function withSPlusL(signature: Uint8Array): Uint8Array<ArrayBuffer> {
  const malleated = new Uint8Array(signature);
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(malleated[i]!);
  let sPlusL = s + L;
  for (let i = 32; i < 64; i++) {
    malleated[i] = Number(sPlusL & 0xffn);
    sPlusL >>= 8n;
  }
  return malleated;
}
