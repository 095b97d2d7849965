import {
  clearSealedCookie,
  openSealedCookie,
  type SealedCookieCheck,
  type SealedCookieKind,
  sealCookie,
} from "./sealedCookie.ts";

/**
 * A project sign-in's flow state, kept in the browser that started it as a
 * sealed cookie (sealedCookie.ts) for 10 minutes: `__Host-login_flow` on
 * https, `login_flow` on plain-http local development.
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

function isNonEmptyString(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

const FLOW_STRINGS = ["state", "nonce", "verifier", "slug", "redirect", "bind"] as const;

const FLOW_COOKIE: SealedCookieKind<FlowState> = {
  name: "login_flow",
  key: { info: "platform-login-flow-cookie-v1", algorithm: "AES-GCM-256" },
  lifetimeSeconds: FLOW_LIFETIME_SECONDS,
  isFlow: (value): value is Record<string, unknown> & FlowState =>
    FLOW_STRINGS.every((field) => isNonEmptyString(value[field])),
};

export function sealFlowCookie(secret: string, loginPublicUrl: string, flow: FlowState): Promise<string> {
  return sealCookie(FLOW_COOKIE, secret, loginPublicUrl, flow);
}

export function clearFlowCookie(loginPublicUrl: string): string {
  return clearSealedCookie(FLOW_COOKIE, loginPublicUrl);
}

export type FlowCookieCheck = SealedCookieCheck<FlowState>;

export function openFlowCookie(
  request: Request,
  secret: string,
  loginPublicUrl: string,
  nowMS = Date.now(),
): Promise<FlowCookieCheck> {
  return openSealedCookie(FLOW_COOKIE, request, { secret, loginPublicUrl }, nowMS);
}
