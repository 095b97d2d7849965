import { deriveKey } from "../../core/crypto/keys.ts";
import { openSealed, seal } from "../../core/crypto/sealed.ts";
import { cookieValue, serializeCookie } from "../../core/web/cookies.ts";
import { FLOW_LIFETIME_SECONDS } from "./flowCookie.ts";

/**
 * A `platform login` in this browser, kept like a project sign-in's flow
 * (flowCookie.ts) in an AES-GCM sealed, HttpOnly, SameSite=Lax cookie of its
 * own name and key, so neither flow can be passed off as the other. Stage
 * "signin" holds the OIDC state until the provider returns; stage "approve"
 * holds who signed in and the approval form's token until the person answers.
 */
interface CliFlowBase {
  /** The `cli_logins` row the browser opened. */
  loginId: number;
  /** Shown to the person, as the CLI printed it. */
  verification: string;
  clientHost: string;
  /** Unix seconds; the flow is dead after it. */
  exp: number;
}

export type CliFlow =
  | (CliFlowBase & { stage: "signin"; state: string; nonce: string; verifier: string })
  | (CliFlowBase & { stage: "approve"; email: string; csrf: string });

const CLI_FLOW_KEY = { info: "platform-login-cli-flow-cookie-v1", algorithm: "AES-GCM-256" } as const;
const MAX_COOKIE_VALUE_CHARS = 4200;

export function cliFlowCookieName(loginPublicUrl: string): string {
  return loginPublicUrl.toLowerCase().startsWith("https:") ? "__Host-login_cli_flow" : "login_cli_flow";
}

function cookie(loginPublicUrl: string, value: string, maxAge: number): string {
  return serializeCookie(cliFlowCookieName(loginPublicUrl), value, {
    path: "/",
    maxAge,
    sameSite: "Lax",
    secure: loginPublicUrl.toLowerCase().startsWith("https:"),
  });
}

export async function sealCliFlowCookie(secret: string, loginPublicUrl: string, flow: CliFlow): Promise<string> {
  const name = cliFlowCookieName(loginPublicUrl);
  const value = await seal(await deriveKey(secret, CLI_FLOW_KEY), JSON.stringify(flow), name);
  return cookie(loginPublicUrl, value, FLOW_LIFETIME_SECONDS);
}

export function clearCliFlowCookie(loginPublicUrl: string): string {
  return cookie(loginPublicUrl, "", 0);
}

export function hasCliFlowCookie(request: Request, loginPublicUrl: string): boolean {
  return cookieValue(request, cliFlowCookieName(loginPublicUrl)) !== null;
}

/** The browser's CLI flow at `stage`, or why there is none. */
export async function openCliFlowCookie<S extends CliFlow["stage"]>(
  request: Request,
  secret: string,
  loginPublicUrl: string,
  stage: S,
  nowMs = Date.now(),
): Promise<
  { ok: true; flow: Extract<CliFlow, { stage: S }> } | { ok: false; reason: "missing" | "invalid" | "expired" }
> {
  const name = cliFlowCookieName(loginPublicUrl);
  const value = cookieValue(request, name);
  if (!value) return { ok: false, reason: "missing" };
  if (value.length > MAX_COOKIE_VALUE_CHARS) return { ok: false, reason: "invalid" };
  const plain = await openSealed(await deriveKey(secret, CLI_FLOW_KEY), value, name);
  let flow: CliFlow;
  try {
    flow = JSON.parse(plain ?? "") as CliFlow;
  } catch {
    return { ok: false, reason: "invalid" };
  }
  if (typeof flow !== "object" || flow === null || flow.stage !== stage) return { ok: false, reason: "invalid" };
  if (nowMs / 1000 > flow.exp) return { ok: false, reason: "expired" };
  return { ok: true, flow: flow as Extract<CliFlow, { stage: S }> };
}
