import { timingSafeEqual } from "../../core/crypto/signed.ts";
import { hex } from "../../core/crypto/encoding.ts";
import {
  CLI_LOGIN_CODE,
  CLI_LOGIN_FLOW_MS,
  cliLoginVerification,
  decideCliLogin,
  openCliLogin,
} from "../db/cliLoginsTable.ts";
import { finishSignIn } from "./callbackRoute.ts";
import {
  type CliFlow,
  clearCliFlowCookie,
  hasCliFlowCookie,
  openCliFlowCookie,
  sealCliFlowCookie,
} from "./cliFlowCookie.ts";
import { cliAnsweredPage, cliApprovalPage, formToken } from "./cliSignInPages.ts";
import { redeemAuthorizationCode, redirectToProvider } from "./authorizationCodeFlow.ts";
import { requireConfiguration } from "./config.ts";
import type { LoginEnv } from "./env.ts";
import { discoverProvider } from "./identityProvider.ts";
import { errorPage, LoginError } from "./pages.ts";
import { signedInUser } from "./signedInUser.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";

/**
 * `platform login` in the browser (beside a project's sign-in, which
 * startRoute.ts and callbackRoute.ts serve): `GET /cli?code` opens the
 * login's single-use code and goes to the identity provider; its answer comes
 * back to the one registered `/callback`, which `routeCallback` hands here
 * when it belongs to this browser's CLI flow; the person then allows or
 * denies on a page of this worker (`POST /cli/approve`). The API worker gives
 * the CLI its token only after that (`POST /cli/login/token`).
 */

function againFromTerminal(message: string, status = 400): LoginError {
  return new LoginError(status, "This CLI sign-in cannot continue", `${message} Run \`platform login\` again.`);
}

const OPEN_FAILURES = {
  unknown: "This link does not belong to any `platform login`.",
  used: "This link was already opened (each one works once).",
  expired: "This link is more than 2 minutes old.",
} as const;

async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** `GET /cli?code=<64 hex>`: opens the code once and starts the OIDC flow for the CLI. */
export async function startCliSignIn(request: Request, env: LoginEnv): Promise<Response> {
  requireConfiguration(env);
  const codes = new URL(request.url).searchParams.getAll("code");
  if (codes.length !== 1 || !CLI_LOGIN_CODE.test(codes[0]!)) throw againFromTerminal("This link has no valid code.");
  const code = codes[0]!;
  const opened = await openCliLogin(env.DB, await sha256Hex(code), Date.now());
  if (!opened.ok) throw againFromTerminal(OPEN_FAILURES[opened.reason], opened.reason === "unknown" ? 404 : 410);

  return redirectToProvider(env, (secrets) =>
    sealCliFlowCookie(env.LOGIN_FLOW_SECRET, env.LOGIN_PUBLIC_URL, {
      stage: "signin",
      loginId: opened.login.id,
      verification: cliLoginVerification(code),
      clientHost: opened.login.client_host,
      exp: Math.floor((opened.login.opened_at! + CLI_LOGIN_FLOW_MS) / 1000),
      ...secrets,
    }),
  );
}

/**
 * `GET /callback`: the identity provider has one redirect URI for both
 * flows. The answer is the CLI's when this browser holds a CLI flow whose
 * `state` it carries; anything else is a project sign-in's (callbackRoute.ts).
 */
export async function routeCallback(request: Request, env: LoginEnv): Promise<Response> {
  const publicUrl = env.LOGIN_PUBLIC_URL ?? "";
  if (env.LOGIN_FLOW_SECRET && hasCliFlowCookie(request, publicUrl)) {
    const opened = await openCliFlowCookie(
      request,
      { secret: env.LOGIN_FLOW_SECRET, loginPublicUrl: publicUrl },
      "signin",
    );
    const state = new URL(request.url).searchParams.getAll("state");
    if (opened.ok && state.length === 1 && timingSafeEqual(state[0]!, opened.flow.state))
      return finishCliSignIn(request, env, opened.flow);
  }
  return finishSignIn(request, env);
}

async function finishCliSignIn(
  request: Request,
  env: LoginEnv,
  flow: Extract<CliFlow, { stage: "signin" }>,
): Promise<Response> {
  const clear = clearCliFlowCookie(env.LOGIN_PUBLIC_URL);
  try {
    requireConfiguration(env);
    const url = new URL(request.url);
    const metadata = await discoverProvider(env);
    const iss = url.searchParams.get("iss");
    if (iss !== null && iss !== metadata.issuer)
      throw againFromTerminal("The answer comes from another identity provider than the one this sign-in went to.");
    if (url.searchParams.get("error") !== null)
      throw againFromTerminal(`The identity provider reported "${url.searchParams.get("error")!.slice(0, 100)}".`);
    const { claims, accessToken } = await redeemAuthorizationCode(env, metadata, {
      url,
      flow,
      refuse: againFromTerminal,
    });
    // The platform itself as the "project": every verified email may have a CLI account.
    const user = await signedInUser(
      env,
      metadata,
      { id: 0, slug: env.PLATFORM_DOMAIN, private: false, workerSecret: "", domains: null },
      { idClaims: claims, accessToken, backLink: { href: env.LOGIN_PUBLIC_URL, text: "Back" } },
    );
    const csrf = formToken();
    const cookie = await sealCliFlowCookie(env.LOGIN_FLOW_SECRET, env.LOGIN_PUBLIC_URL, {
      stage: "approve",
      loginId: flow.loginId,
      verification: flow.verification,
      clientHost: flow.clientHost,
      exp: flow.exp,
      email: user.email,
      csrf,
    });
    return cliApprovalPage({
      action: `${env.LOGIN_PUBLIC_URL.replace(/\/+$/, "")}/cli/approve`,
      csrf,
      email: user.email,
      clientHost: flow.clientHost,
      platformHost: env.PLATFORM_DOMAIN,
      verification: flow.verification,
      setCookies: [cookie],
    });
  } catch (error) {
    if (error instanceof LoginError) return errorPage(error, { "Set-Cookie": clear });
    throw error;
  }
}

/**
 * `POST /cli/approve` (form: `csrf`, `decision` = allow | deny): records the
 * person's answer once. Only the page this worker rendered for this browser
 * can answer: the form token must match the sealed flow's, and a cross-site
 * POST carries neither the SameSite=Lax cookie nor this origin.
 */
export async function answerCliSignIn(request: Request, env: LoginEnv): Promise<Response> {
  requireConfiguration(env);
  const clear = clearCliFlowCookie(env.LOGIN_PUBLIC_URL);
  // Defence in depth behind the form token and the SameSite cookie: a browser names a foreign page's origin
  // (a privacy setting may send "null" or nothing instead).
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== "null" && origin !== new URL(env.LOGIN_PUBLIC_URL).origin)
    throw againFromTerminal("This answer was not sent from the approval page.", 403);
  const opened = await openCliFlowCookie(
    request,
    { secret: env.LOGIN_FLOW_SECRET, loginPublicUrl: env.LOGIN_PUBLIC_URL },
    "approve",
  );
  if (!opened.ok)
    return errorPage(
      againFromTerminal(
        opened.reason === "expired"
          ? "This sign-in was started more than 10 minutes ago."
          : "This browser has no CLI sign-in waiting for an answer.",
      ),
      { "Set-Cookie": clear },
    );
  if (!(request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded"))
    throw againFromTerminal("The answer must come from the approval page's form.");
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(request, 1024);
  } catch {
    throw againFromTerminal("The answer is too large.", 413);
  }
  const form = new URLSearchParams(new TextDecoder().decode(bytes));
  const csrf = form.getAll("csrf");
  if (csrf.length !== 1 || !timingSafeEqual(csrf[0]!, opened.flow.csrf))
    throw againFromTerminal("This answer was not sent from the approval page.", 403);
  const decision = form.get("decision");
  if (decision !== "allow" && decision !== "deny") throw againFromTerminal("Choose Allow or Deny.");
  const allowed = decision === "allow";
  const recorded = await decideCliLogin(
    env.DB,
    opened.flow.loginId,
    allowed ? { approvedEmail: opened.flow.email } : { denied: true },
    Date.now(),
  );
  if (!recorded)
    return errorPage(againFromTerminal("This sign-in was already answered, or it expired.", 410), {
      "Set-Cookie": clear,
    });
  return cliAnsweredPage(allowed, opened.flow.email, [clear]);
}
