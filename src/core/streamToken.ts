import { deriveKey } from "./crypto/keys.ts";
import { type SignedCheck, signPayload, verifyPayload } from "./crypto/signed.ts";

/**
 * The token of a run's stream URL (`workflow.streamURL`): who holds it may
 * read that run's stream, those topics only, until it expires; nothing else.
 *
 * Format: `s1.<payload>.<signature>`, both base64url: HMAC-SHA256 over
 * `s1.<payload>` with a key derived (HKDF-SHA256, info
 * "platform-stream-token-v1") from the project's worker secret, so a token of
 * one project is worthless to every other and to every other purpose. Not
 * single-use: a browser reconnects with the same URL (`Last-Event-ID`).
 */
export interface StreamClaims {
  /** The run whose stream it opens. */
  run: string;
  /** Only these topics; absent: all. */
  topics?: string[];
  /** Expiry, epoch ms. */
  exp: number;
}

export type StreamTokenCheck = SignedCheck<StreamClaims, "malformed" | "bad_signature" | "expired" | "wrong_run">;

const STREAM_TOKEN_KEY = { info: "platform-stream-token-v1", algorithm: "HMAC-SHA256" } as const;
const PREFIX = "s1.";

export async function signStreamToken(workerSecret: string, claims: StreamClaims): Promise<string> {
  return signPayload(await deriveKey(workerSecret, STREAM_TOKEN_KEY), claims, PREFIX);
}

/** Checks the signature, the expiry and that the token is for `runId` (the run the URL names). */
export async function verifyStreamToken(
  token: string,
  workerSecret: string,
  runId: string,
  nowMS: number,
): Promise<StreamTokenCheck> {
  const check = await verifyPayload(await deriveKey(workerSecret, STREAM_TOKEN_KEY), token, PREFIX);
  if (!check.ok) return check;
  const claims = check.payload as Partial<StreamClaims> | null;
  if (
    typeof claims !== "object" ||
    claims === null ||
    typeof claims.run !== "string" ||
    typeof claims.exp !== "number" ||
    (claims.topics !== undefined &&
      (!Array.isArray(claims.topics) || !claims.topics.every((topic) => typeof topic === "string")))
  )
    return { ok: false, reason: "malformed" };
  if (nowMS >= claims.exp) return { ok: false, reason: "expired" };
  if (claims.run !== runId) return { ok: false, reason: "wrong_run" };
  return { ok: true, claims: claims as StreamClaims };
}
