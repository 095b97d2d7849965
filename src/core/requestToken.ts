/**
 * Short-lived request tokens of the form `{projectId}.{timestamp}.{signature}`.
 *
 * The signature is HMAC-SHA256, keyed with the project's worker secret, over
 * the purpose, the project id, the timestamp and the request itself (method,
 * path with query, SHA-256 of the body), so a token cannot be moved to another
 * request, another project, or from one direction of traffic to the other.
 */
import { fromCanonicalBase64url, hex } from "./crypto/encoding.ts";
import { importKey } from "./crypto/keys.ts";
import { signature, signatureValid } from "./crypto/signed.ts";

/** `identity`: user worker → platform (`X-Platform-Identity`); `internal`: platform → user worker (`X-Platform-Internal`). */
export type TokenPurpose = "identity" | "internal";

export const IDENTITY_HEADER = "X-Platform-Identity";
export const INTERNAL_HEADER = "X-Platform-Internal";

/** How far a token's timestamp may lie from the verifier's clock, in seconds. */
export const MAX_TOKEN_AGE_SECONDS = 60;

export interface SignedRequestParts {
  method: string;
  /** Path plus query string, e.g. `/internal/workflow/execute?x=1`. */
  pathAndQuery: string;
  body: ArrayBuffer | Uint8Array | string | null;
}

const encoder = new TextEncoder();

function toBytes(body: SignedRequestParts["body"]): Uint8Array<ArrayBuffer> {
  if (body === null) return new Uint8Array();
  if (typeof body === "string") return new Uint8Array(encoder.encode(body));
  return new Uint8Array(body);
}

async function signedString(purpose: TokenPurpose, projectId: string, timestamp: string, req: SignedRequestParts) {
  const bodyHash = hex(await crypto.subtle.digest("SHA-256", toBytes(req.body)));
  return [
    "platform-request-v1",
    purpose,
    projectId,
    timestamp,
    req.method.toUpperCase(),
    req.pathAndQuery,
    bodyHash,
  ].join("\n");
}

/** Who signs a request: the project and its worker secret, at `nowMS` (default `Date.now()`). */
export interface TokenSigner {
  projectId: string | number;
  secret: string;
  nowMS?: number;
}

export async function signRequestToken(
  purpose: TokenPurpose,
  req: SignedRequestParts,
  { projectId, secret, nowMS = Date.now() }: TokenSigner,
): Promise<string> {
  const timestamp = String(Math.floor(nowMS / 1000));
  const id = String(projectId);
  return `${id}.${timestamp}.${await signature(await importKey(secret, "HMAC-SHA256"), await signedString(purpose, id, timestamp, req))}`;
}

export type TokenCheck =
  | { ok: true; projectId: string }
  | { ok: false; reason: "missing" | "malformed" | "expired" | "bad_signature" | "unknown_project" };

/** Splits a token without trusting it: the project id tells the verifier which secret to look up. */
export function parseRequestToken(
  token: string | null,
): { projectId: string; timestamp: string; signature: string } | null {
  if (!token) return null;
  const match = /^(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token.trim());
  if (!match) return null;
  return { projectId: match[1]!, timestamp: match[2]!, signature: match[3]! };
}

/** How a token is checked: the secret of the project it names, at `nowMS` (default `Date.now()`). */
export interface TokenVerifier {
  lookupSecret: (projectId: string) => Promise<string | null> | string | null;
  nowMS?: number;
}

export async function verifyRequestToken(
  purpose: TokenPurpose,
  token: string | null,
  req: SignedRequestParts,
  { lookupSecret, nowMS = Date.now() }: TokenVerifier,
): Promise<TokenCheck> {
  if (!token) return { ok: false, reason: "missing" };
  const parts = parseRequestToken(token);
  if (!parts) return { ok: false, reason: "malformed" };
  if (Math.abs(nowMS / 1000 - Number(parts.timestamp)) > MAX_TOKEN_AGE_SECONDS) return { ok: false, reason: "expired" };
  const secret = await lookupSecret(parts.projectId);
  if (!secret) return { ok: false, reason: "unknown_project" };
  // Only the canonical spelling: the last character's two spare bits must be zero.
  if (!fromCanonicalBase64url(parts.signature)) return { ok: false, reason: "malformed" };
  const valid = await signatureValid(
    await importKey(secret, "HMAC-SHA256"),
    await signedString(purpose, parts.projectId, parts.timestamp, req),
    parts.signature,
  );
  return valid ? { ok: true, projectId: parts.projectId } : { ok: false, reason: "bad_signature" };
}

/** What a caller is told when its `X-Platform-Identity` token is refused (the API worker and every plugin). */
export const IDENTITY_FAILURES = {
  missing: `Missing ${IDENTITY_HEADER} header.`,
  malformed: `Malformed ${IDENTITY_HEADER} token; expected {projectId}.{timestamp}.{signature}.`,
  expired: `${IDENTITY_HEADER} token expired; tokens are valid for ${MAX_TOKEN_AGE_SECONDS} seconds.`,
  // A wrong signature and an unknown project answer alike: no oracle for project ids.
  bad_signature: `Invalid ${IDENTITY_HEADER} token.`,
  unknown_project: `Invalid ${IDENTITY_HEADER} token.`,
  // Single-use routes (POST /internal/workflow/execute): the same signed request twice is a replay.
  replayed: `${IDENTITY_HEADER} token already used; this route accepts each token once.`,
} as const;

/** When a token stops being accepted (epoch ms): a single-use route remembers a spent token until then. */
export function requestTokenExpiresAt(timestamp: string): number {
  return (Number(timestamp) + MAX_TOKEN_AGE_SECONDS + 1) * 1000;
}

/** Path plus query of a request URL, as signed. */
export function pathAndQueryOf(url: string | URL): string {
  const u = typeof url === "string" ? new URL(url) : url;
  return u.pathname + u.search;
}
