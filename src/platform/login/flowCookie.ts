import { base64url, fromBase64url } from "../../core/callbackToken.ts";

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

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

export function flowCookieName(loginPublicUrl: string): string {
  return isHttps(loginPublicUrl) ? "__Host-login_flow" : "login_flow";
}

function isHttps(url: string): boolean {
  return url.toLowerCase().startsWith("https:");
}

function flowKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = (async () => {
      const ikm = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(), info: encoder.encode("platform-login-flow-cookie-v1") },
        ikm,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(secret, key);
  }
  return key;
}

/** `Set-Cookie` for a new flow. */
export async function sealFlowCookie(secret: string, loginPublicUrl: string, flow: FlowState): Promise<string> {
  const name = flowCookieName(loginPublicUrl);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(name) },
    await flowKey(secret),
    encoder.encode(JSON.stringify(flow)),
  );
  const value = `${base64url(iv)}.${base64url(sealed)}`;
  return `${name}=${value}; Path=/; Max-Age=${FLOW_LIFETIME_SECONDS}; HttpOnly; SameSite=Lax${isHttps(loginPublicUrl) ? "; Secure" : ""}`;
}

/** `Set-Cookie` that removes the flow cookie (same name, path and attributes). */
export function clearFlowCookie(loginPublicUrl: string): string {
  return `${flowCookieName(loginPublicUrl)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${isHttps(loginPublicUrl) ? "; Secure" : ""}`;
}

function cookieValue(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
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
  const value = cookieValue(request.headers.get("cookie"), name);
  if (!value) return { ok: false, reason: "missing" };
  const match = /^([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{22,4096})$/.exec(value);
  const iv = match ? fromBase64url(match[1]!) : null;
  const sealed = match ? fromBase64url(match[2]!) : null;
  if (!iv || !sealed) return { ok: false, reason: "invalid" };
  let flow: FlowState;
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData: encoder.encode(name) }, await flowKey(secret), sealed);
    flow = JSON.parse(new TextDecoder().decode(plain)) as FlowState;
  } catch {
    return { ok: false, reason: "invalid" };
  }
  const fields = [flow.state, flow.nonce, flow.verifier, flow.slug, flow.redirect, flow.bind];
  if (!fields.every((f) => typeof f === "string" && f.length > 0) || typeof flow.exp !== "number") return { ok: false, reason: "invalid" };
  if (nowMs / 1000 > flow.exp) return { ok: false, reason: "expired" };
  return { ok: true, flow };
}
