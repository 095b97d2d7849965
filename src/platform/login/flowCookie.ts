import { deriveKey } from "../../core/crypto/keys.ts";
import { openSealed, seal } from "../../core/crypto/sealed.ts";
import { cookieValue, serializeCookie } from "../../core/web/cookies.ts";

/**
 * The sign-in flow's state, kept in the browser that started it: an
 * AES-256-GCM sealed (encrypted and authenticated) cookie on the login
 * worker's own origin. HttpOnly, SameSite=Lax (it must ride the identity
 * provider's top-level GET back to `/callback`), Path=/, 10 minutes. On https
 * it is `__Host-login_flow` (Secure, host-only); on plain-http local
 * development `login_flow`.
 */
export const FLOW_LIFETIME_SECONDS = 600;

export interface FlowState {
  /** OAuth `state`, 32 random bytes base64url. */
  state: string;
  /** OIDC `nonce`, 32 random bytes base64url. */
  nonce: string;
  /** PKCE code verifier, 32 random bytes base64url (43 characters). */
  verifier: string;
  /** Target project. */
  slug: string;
  /** Validated project-relative path to land on. */
  redirect: string;
  /** The project's binding value (base64url SHA-256 of its binding cookie). */
  bind: string;
  /** Unix seconds after which the flow is dead, whatever the cookie's Max-Age. */
  exp: number;
}

const FLOW_KEY = { info: "platform-login-flow-cookie-v1", algorithm: "AES-GCM-256" } as const;
/** Browsers keep about 4 KiB per cookie; a longer value is not one this worker wrote. */
const MAX_COOKIE_VALUE_CHARS = 4200;

export function flowCookieName(loginPublicUrl: string): string {
  return isHttps(loginPublicUrl) ? "__Host-login_flow" : "login_flow";
}

function isHttps(url: string): boolean {
  return url.toLowerCase().startsWith("https:");
}

function flowCookie(loginPublicUrl: string, value: string, maxAge: number): string {
  return serializeCookie(flowCookieName(loginPublicUrl), value, {
    path: "/",
    maxAge,
    sameSite: "Lax",
    secure: isHttps(loginPublicUrl),
  });
}

/** `Set-Cookie` for a new flow; the cookie's name is the sealed value's additional data. */
export async function sealFlowCookie(secret: string, loginPublicUrl: string, flow: FlowState): Promise<string> {
  const value = await seal(await deriveKey(secret, FLOW_KEY), JSON.stringify(flow), flowCookieName(loginPublicUrl));
  return flowCookie(loginPublicUrl, value, FLOW_LIFETIME_SECONDS);
}

/** `Set-Cookie` that removes the flow cookie (same name, path and attributes). */
export function clearFlowCookie(loginPublicUrl: string): string {
  return flowCookie(loginPublicUrl, "", 0);
}

export type FlowCookieCheck = { ok: true; flow: FlowState } | { ok: false; reason: "missing" | "invalid" | "expired" };

/** Opens the flow cookie of `request`: missing, tampered, sealed with another key or expired all fail. */
export async function openFlowCookie(
  request: Request,
  secret: string,
  loginPublicUrl: string,
  nowMs = Date.now(),
): Promise<FlowCookieCheck> {
  const name = flowCookieName(loginPublicUrl);
  const value = cookieValue(request, name);
  if (!value) return { ok: false, reason: "missing" };
  if (value.length > MAX_COOKIE_VALUE_CHARS) return { ok: false, reason: "invalid" };
  const plain = await openSealed(await deriveKey(secret, FLOW_KEY), value, name);
  let flow: FlowState;
  try {
    flow = JSON.parse(plain ?? "") as FlowState;
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (typeof flow !== "object" || flow === null) return { ok: false, reason: "invalid" };
  const fields = [flow.state, flow.nonce, flow.verifier, flow.slug, flow.redirect, flow.bind];
  if (!fields.every((f) => typeof f === "string" && f.length > 0) || typeof flow.exp !== "number")
    return { ok: false, reason: "invalid" };
  if (nowMs / 1000 > flow.exp) return { ok: false, reason: "expired" };
  return { ok: true, flow };
}
