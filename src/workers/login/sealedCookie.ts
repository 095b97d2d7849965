import { deriveKey, type KeyPurpose } from "../../core/crypto/keys.ts";
import { openSealed, seal } from "../../core/crypto/sealed.ts";
import { cookieValue, serializeCookie } from "../../core/web/cookies.ts";

/**
 * A sign-in flow kept in the browser that started it: an AES-256-GCM sealed
 * (encrypted and authenticated) cookie on the login worker's own origin,
 * HttpOnly, SameSite=Lax (it must ride the identity provider's top-level GET
 * back to `/callback`), Path=/. On https its name carries the `__Host-` prefix
 * (Secure, host-only). Each kind of flow has its own name and key, and the name
 * is the sealed value's additional data, so no flow can be passed off as another.
 */
export interface SealedCookieKind<Flow extends { exp: number }> {
  /** The name on plain-http local development; `__Host-` is prefixed on https. */
  name: string;
  key: KeyPurpose;
  /** Max-Age of a new cookie, in seconds. */
  lifetimeSeconds: number;
  /** Whether an opened value has this kind's shape (a value sealed by an older version may not). */
  isFlow(value: Record<string, unknown>): value is Record<string, unknown> & Flow;
}

export type SealedCookieCheck<Flow> =
  | { ok: true; flow: Flow }
  | { ok: false; reason: "missing" | "invalid" | "expired" };

/** Browsers keep about 4 KiB per cookie; a longer value is not one this worker wrote. */
const MAX_COOKIE_VALUE_CHARS = 4200;

function isHttps(url: string): boolean {
  return url.toLowerCase().startsWith("https:");
}

export function sealedCookieName(kind: SealedCookieKind<{ exp: number }>, loginPublicUrl: string): string {
  return isHttps(loginPublicUrl) ? `__Host-${kind.name}` : kind.name;
}

function setCookie(kind: SealedCookieKind<{ exp: number }>, loginPublicUrl: string, value: string, maxAge: number) {
  return serializeCookie(sealedCookieName(kind, loginPublicUrl), value, {
    path: "/",
    maxAge,
    sameSite: "Lax",
    secure: isHttps(loginPublicUrl),
  });
}

/** `Set-Cookie` for a new flow. */
export async function sealCookie<Flow extends { exp: number }>(
  kind: SealedCookieKind<Flow>,
  secret: string,
  loginPublicUrl: string,
  flow: Flow,
): Promise<string> {
  const name = sealedCookieName(kind, loginPublicUrl);
  const value = await seal(await deriveKey(secret, kind.key), JSON.stringify(flow), name);
  return setCookie(kind, loginPublicUrl, value, kind.lifetimeSeconds);
}

/** `Set-Cookie` that removes the flow cookie (same name, path and attributes). */
export function clearSealedCookie(kind: SealedCookieKind<{ exp: number }>, loginPublicUrl: string): string {
  return setCookie(kind, loginPublicUrl, "", 0);
}

/** What a flow cookie is sealed with (`secret`) and whose it is (the login worker at `loginPublicUrl` names it). */
export interface SealedCookieSite {
  secret: string;
  loginPublicUrl: string;
}

/**
 * Opens the flow cookie of `request`: missing, oversized, tampered, sealed with
 * another key or under another name, of the wrong shape, or past its `exp`
 * (Unix seconds, whatever the cookie's Max-Age) all fail.
 */
export async function openSealedCookie<Flow extends { exp: number }>(
  kind: SealedCookieKind<Flow>,
  request: Request,
  { secret, loginPublicUrl }: SealedCookieSite,
  nowMS = Date.now(),
): Promise<SealedCookieCheck<Flow>> {
  const name = sealedCookieName(kind, loginPublicUrl);
  const value = cookieValue(request, name);
  if (!value) return { ok: false, reason: "missing" };
  if (value.length > MAX_COOKIE_VALUE_CHARS) return { ok: false, reason: "invalid" };
  const plain = await openSealed(await deriveKey(secret, kind.key), value, name);
  let flow: unknown;
  try {
    flow = JSON.parse(plain ?? "");
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (typeof flow !== "object" || flow === null) return { ok: false, reason: "invalid" };
  const fields = flow as Record<string, unknown>;
  if (typeof fields.exp !== "number" || !kind.isFlow(fields)) return { ok: false, reason: "invalid" };
  if (nowMS / 1000 > fields.exp) return { ok: false, reason: "expired" };
  return { ok: true, flow: fields };
}
