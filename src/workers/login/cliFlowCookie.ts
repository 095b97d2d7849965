import { cookieValue } from "../../core/web/cookies.ts";
import { FLOW_LIFETIME_SECONDS } from "./flowCookie.ts";
import {
  clearSealedCookie,
  openSealedCookie,
  type SealedCookieCheck,
  type SealedCookieKind,
  type SealedCookieSite,
  sealCookie,
  sealedCookieName,
} from "./sealedCookie.ts";

/**
 * A `platform login` in this browser, kept like a project sign-in's flow
 * (flowCookie.ts) in a sealed cookie (sealedCookie.ts) of its own name and
 * key. Stage "signin" holds the OIDC state until the provider returns; stage
 * "approve" holds who signed in and the approval form's token until the
 * person answers.
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

const STAGE_STRINGS = {
  signin: ["state", "nonce", "verifier"],
  approve: ["email", "csrf"],
} as const;

function isCliFlow(value: Record<string, unknown>): value is Record<string, unknown> & CliFlow {
  if (value.stage !== "signin" && value.stage !== "approve") return false;
  const strings = ["verification", "clientHost", ...STAGE_STRINGS[value.stage]];
  return typeof value.loginId === "number" && strings.every((field) => typeof value[field] === "string");
}

const CLI_FLOW_COOKIE: SealedCookieKind<CliFlow> = {
  name: "login_cli_flow",
  key: { info: "platform-login-cli-flow-cookie-v1", algorithm: "AES-GCM-256" },
  lifetimeSeconds: FLOW_LIFETIME_SECONDS,
  isFlow: isCliFlow,
};

export function sealCliFlowCookie(secret: string, loginPublicUrl: string, flow: CliFlow): Promise<string> {
  return sealCookie(CLI_FLOW_COOKIE, secret, loginPublicUrl, flow);
}

export function clearCliFlowCookie(loginPublicUrl: string): string {
  return clearSealedCookie(CLI_FLOW_COOKIE, loginPublicUrl);
}

export function hasCliFlowCookie(request: Request, loginPublicUrl: string): boolean {
  return cookieValue(request, sealedCookieName(CLI_FLOW_COOKIE, loginPublicUrl)) !== null;
}

/** The browser's CLI flow at `stage`, or why there is none. */
export async function openCliFlowCookie<S extends CliFlow["stage"]>(
  request: Request,
  site: SealedCookieSite,
  stage: S,
  nowMS = Date.now(),
): Promise<SealedCookieCheck<Extract<CliFlow, { stage: S }>>> {
  const opened = await openSealedCookie(CLI_FLOW_COOKIE, request, site, nowMS);
  if (opened.ok && opened.flow.stage !== stage) return { ok: false, reason: "invalid" };
  return opened as SealedCookieCheck<Extract<CliFlow, { stage: S }>>;
}
