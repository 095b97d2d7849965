import { randomBase64url } from "../../core/crypto/encoding.ts";
import { type SignedCheck, signPayload, verifyPayload } from "../../core/crypto/signed.ts";
import { purposeHmacKey } from "./secretKeys.ts";

/** How long a browser has between the install page and the provider's callback. */
export const OAUTH_STATE_LIFETIME_MS = 10 * 60 * 1000;

export interface OAuthStateClaims {
  projectId: number;
  pluginId: string;
  /** 32 random bytes, base64url: bind it to the browser (e.g. a cookie) and/or use it as PKCE material. */
  nonce: string;
  /** Expiry, ms since the epoch. */
  exp: number;
}

export type OAuthStateCheck = SignedCheck<OAuthStateClaims, "invalid" | "expired" | "wrong_plugin">;

const key = (secret: string | undefined) => purposeHmacKey(secret, "STATE_SECRET", "oauth-state-v1");

/** A signed OAuth `state` for one project's install of one plugin (HMAC with `STATE_SECRET`, 10 minutes). */
export async function signOAuthState(
  secret: string | undefined,
  input: { projectId: number; pluginId: string; nonce?: string },
  now: number = Date.now(),
): Promise<{ state: string; claims: OAuthStateClaims }> {
  const claims: OAuthStateClaims = {
    projectId: input.projectId,
    pluginId: input.pluginId,
    nonce: input.nonce ?? randomBase64url(32),
    exp: now + OAUTH_STATE_LIFETIME_MS,
  };
  return { state: await signPayload(await key(secret), claims), claims };
}

export async function verifyOAuthState(
  secret: string | undefined,
  state: string | null | undefined,
  pluginId: string,
  now: number = Date.now(),
): Promise<OAuthStateCheck> {
  const check = await verifyPayload(await key(secret), state);
  const value = check.ok ? (check.payload as Partial<OAuthStateClaims> | null) : null;
  if (
    !value ||
    typeof value.projectId !== "number" ||
    typeof value.pluginId !== "string" ||
    typeof value.nonce !== "string" ||
    typeof value.exp !== "number"
  ) {
    return { ok: false, reason: "invalid" };
  }
  if (now >= value.exp) return { ok: false, reason: "expired" };
  if (value.pluginId !== pluginId) return { ok: false, reason: "wrong_plugin" };
  return { ok: true, claims: value as OAuthStateClaims };
}

export const oauthState = { sign: signOAuthState, verify: verifyOAuthState };
