import { verifyCallbackToken, type CallbackCheck } from "../../core/callbackToken.ts";
import { authSettings } from "./authSettings.ts";
import type { AuthSite } from "./authSite.ts";
import { clearCookie, cookieName } from "./cookies.ts";
import { checkEmail } from "../../core/email.ts";
import { cookieValues } from "../../core/web/cookies.ts";
import { messagePage, securityHeaders } from "./pages.ts";
import { redirectLocation } from "./safeRedirect.ts";
import { displayName, freshSessionCookie, pictureUrl } from "./session.ts";
import { signInHref } from "./signInRoute.ts";

export const CALLBACK_PATH = "/api/auth/callback";

type Failure = Extract<CallbackCheck, { ok: false }>["reason"];

const FAILURES: Record<Failure, { status: number; message: string }> = {
  malformed: { status: 400, message: "The sign-in link is malformed or incomplete." },
  bad_signature: {
    status: 401,
    message: "The sign-in link was not issued for this app (its signature does not verify).",
  },
  expired: { status: 401, message: "The sign-in link has expired; sign-in links are valid for two minutes." },
  wrong_project: { status: 401, message: "The sign-in link was issued for another app." },
  wrong_browser: {
    status: 401,
    message:
      "The sign-in link belongs to another browser, or was already used: finish sign-in in the browser where you started it.",
  },
};

/**
 * GET /api/auth/callback?token=… (the `idp` flow): the login worker's token
 * must verify with this project's secret and id and match this browser's
 * binding cookie. The binding cookie is cleared whatever the outcome, so a
 * token is accepted once. The email must pass the domain rule here too.
 * Success: a fresh session and 303 to the token's `rdr`, re-validated and
 * prefixed with the base path. No response leaks the URL (which carries the
 * token) through `Referer`, and none is cached.
 */
export async function finishSignIn(request: Request, site: AuthSite, nowMs = Date.now()): Promise<Response> {
  const token = new URL(request.url).searchParams.get("token");
  const bindings = cookieValues(request, cookieName("bind", site)).slice(0, 4);
  let check = await verifyCallbackToken(token, site.secret, site.projectId, bindings[0] ?? null, nowMs);
  for (const binding of bindings.slice(1)) {
    if (check.ok || check.reason !== "wrong_browser") break;
    check = await verifyCallbackToken(token, site.secret, site.projectId, binding, nowMs);
  }

  const headers = new Headers({ "Referrer-Policy": "no-referrer" });
  headers.append("Set-Cookie", clearCookie("bind", site));
  const retry: [string, string][] = [
    ["Sign in again", signInHref(site, "/")],
    ["Back to the app", site.basePath + "/"],
  ];
  if (!check.ok) {
    const failure = FAILURES[check.reason];
    return messagePage(
      { status: failure.status, title: "Sign-in failed", message: failure.message, links: retry },
      headers,
    );
  }
  const { claims } = check;
  const email = checkEmail(claims.email, authSettings().domains);
  if (!email.ok) {
    const message =
      email.reason === "malformed"
        ? "The identity provider returned an email address this app cannot accept."
        : `${claims.email} may not sign in to this app: only addresses at ${authSettings().domains!.join(", ")} are allowed.`;
    return messagePage({ status: 403, title: "Sign-in refused", message, links: retry }, headers);
  }
  const user = { email: email.email, name: displayName(claims.name, email.email), picture: pictureUrl(claims.picture) };
  if (user.picture === undefined) delete user.picture;
  headers.append("Set-Cookie", await freshSessionCookie(site, user, nowMs));
  headers.set("Location", redirectLocation(claims.rdr, site.basePath));
  return new Response(null, { status: 303, headers: securityHeaders(headers) });
}
