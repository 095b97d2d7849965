import { verifyCallbackToken, type CallbackCheck } from "../../core/callbackToken.ts";
import { PlatformError } from "../../core/errors.ts";
import { checkEmail } from "../../core/email.ts";
import { cookieValues } from "../../core/web/cookies.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { authSettings } from "./authSettings.ts";
import type { AuthSite } from "./authSite.ts";
import { clearCookie, cookieName } from "./cookies.ts";
import { messagePage, securityHeaders } from "./pages.ts";
import { redeemCallbackTokenWithPlatform } from "./redeemCallbackTokenWithPlatform.ts";
import { redirectLocation } from "./safeRedirect.ts";
import { displayName, mintSession, pictureUrl, SESSION_NOT_RECORDED, sessionStarted } from "./session.ts";
import { signInHref } from "./signInRoute.ts";

export const CALLBACK_PATH = "/api/auth/callback";
/** A token is at most ~4.2 KiB; its form body, percent-encoded, well under this. */
export const CALLBACK_BODY_LIMIT_BYTES = 8 * 1024;

type Failure =
  | Extract<CallbackCheck, { ok: false }>["reason"]
  | "not_a_form"
  | "too_large"
  | "replayed"
  | "full"
  | "unavailable";

const FAILURES: Record<Failure, { status: number; message: string }> = {
  not_a_form: {
    status: 400,
    message: "The sign-in answer must be the login service's form (application/x-www-form-urlencoded).",
  },
  too_large: { status: 413, message: `The sign-in answer is larger than ${CALLBACK_BODY_LIMIT_BYTES} bytes.` },
  malformed: { status: 400, message: "The sign-in answer is malformed or incomplete." },
  bad_signature: {
    status: 401,
    message: "The sign-in answer was not issued for this app (its signature does not verify).",
  },
  expired: { status: 401, message: "The sign-in answer has expired; it is valid for two minutes." },
  wrong_project: { status: 401, message: "The sign-in answer was issued for another app." },
  wrong_browser: {
    status: 401,
    message:
      "The sign-in answer belongs to another browser, or was already used: finish sign-in in the browser where you started it.",
  },
  replayed: { status: 401, message: "This sign-in answer was already used; each one signs in once." },
  full: { status: 503, message: SESSION_NOT_RECORDED.full },
  unavailable: { status: 503, message: SESSION_NOT_RECORDED.unavailable },
};

function retryLinks(site: AuthSite): [string, string][] {
  return [
    ["Sign in again", signInHref(site, "/")],
    ["Back to the app", site.basePath + "/"],
  ];
}

/**
 * GET /api/auth/callback: the callback token never travels in a URL, so a
 * GET (with or without `?token=`) is refused with 405 and changes nothing.
 */
export function refuseCallbackGet(site: AuthSite): Response {
  return messagePage(
    {
      status: 405,
      title: "Sign-in failed",
      message:
        "This address only accepts the login service's form, not a link. Nothing was signed in: start sign-in again.",
      links: retryLinks(site),
    },
    new Headers({ Allow: "POST", "Referrer-Policy": "no-referrer" }),
  );
}

/** The one `token` field of the POSTed form, or why there is none. */
async function tokenFromForm(request: Request): Promise<{ token: string | null } | { failure: Failure }> {
  const type = (request.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") return { failure: "not_a_form" };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      await readBodyBytes(request, CALLBACK_BODY_LIMIT_BYTES),
    );
  } catch (error) {
    if (error instanceof PlatformError && error.code === "payload_too_large") return { failure: "too_large" };
    return { failure: "malformed" };
  }
  const tokens = new URLSearchParams(text).getAll("token");
  return { token: tokens.length === 1 ? tokens[0]! : null };
}

/**
 * POST /api/auth/callback (the `idp` flow), the login worker's form with
 * `token`: the token must verify with this project's secret and id, match
 * this browser's binding cookie, pass the domain rule, and be redeemed for
 * the first time at the platform (its `jti` is recorded until it expires,
 * and the fresh session recorded in the same step). The binding cookie is
 * cleared whatever the outcome. Success: the session's cookie and 303 to the token's `rdr`, re-validated and prefixed with the
 * base path. Refusals are pages that set no session and never show the token.
 */
export async function finishSignIn(request: Request, site: AuthSite, nowMS = Date.now()): Promise<Response> {
  const headers = new Headers({ "Referrer-Policy": "no-referrer" });
  headers.append("Set-Cookie", clearCookie("bind", site));
  const refuse = (failure: Failure) =>
    messagePage(
      {
        status: FAILURES[failure].status,
        title: "Sign-in failed",
        message: FAILURES[failure].message,
        links: retryLinks(site),
      },
      headers,
    );

  const form = await tokenFromForm(request);
  if ("failure" in form) return refuse(form.failure);
  const bindings = cookieValues(request, cookieName("bind", site)).slice(0, 4);
  let check = await verifyCallbackToken(
    form.token,
    { workerSecret: site.secret, projectId: site.projectId, bindingCookieValue: bindings[0] ?? null },
    nowMS,
  );
  for (const binding of bindings.slice(1)) {
    if (check.ok || check.reason !== "wrong_browser") break;
    check = await verifyCallbackToken(
      form.token,
      { workerSecret: site.secret, projectId: site.projectId, bindingCookieValue: binding },
      nowMS,
    );
  }
  if (!check.ok) return refuse(check.reason);

  const { claims } = check;
  const email = checkEmail(claims.email, authSettings().domains);
  if (!email.ok) {
    const message =
      email.reason === "malformed"
        ? "The identity provider returned an email address this app cannot accept."
        : `${claims.email} may not sign in to this app: only addresses at ${authSettings().domains!.join(", ")} are allowed.`;
    return messagePage({ status: 403, title: "Sign-in refused", message, links: retryLinks(site) }, headers);
  }
  const user = { email: email.email, name: displayName(claims.name, email.email), picture: pictureUrl(claims.picture) };
  if (user.picture === undefined) delete user.picture;
  const session = await mintSession(site, user, nowMS);
  const redemption = await redeemCallbackTokenWithPlatform(site, claims, session.grant);
  if (redemption !== "redeemed") return refuse(redemption);
  sessionStarted(site, session, nowMS);
  headers.append("Set-Cookie", session.cookie);
  headers.set("Location", redirectLocation(claims.rdr, site.basePath));
  return new Response(null, { status: 303, headers: securityHeaders(headers) });
}
