import { bindingHash, signSignInStart } from "../../core/callbackToken.ts";
import { randomBase64url } from "../../core/crypto/encoding.ts";
import { checkEmail } from "../../core/email.ts";
import { cookieValues } from "../../core/web/cookies.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { authSettings } from "./authSettings.ts";
import type { AuthSite } from "./authSite.ts";
import { clearCookie, cookieName, setCookie } from "./cookies.ts";
import { CSRF_COOKIE_MAX_AGE, csrfTokenFor, csrfTokenValid, newCsrfNonce } from "./csrfToken.ts";
import { messagePage, securityHeaders, signInFormPage } from "./pages.ts";
import { safeRedirectPath } from "../../core/web/redirectPath.ts";
import { withQueryParam } from "./safeRedirect.ts";
import { sameOriginRefusal } from "./refusals.ts";
import { isSameOriginPost } from "./sameOrigin.ts";
import { displayName, mintSession, SESSION_NOT_RECORDED, sessionStarted } from "./session.ts";
import { sessionRegistryFor } from "./sessionRegistry.ts";

export const SIGN_IN_PATH = "/api/auth/signin/idp";
/** The binding cookie lives as long as a sign-in at the identity provider may take. */
export const BINDING_COOKIE_MAX_AGE = 600;
const FORM_LIMIT_BYTES = 16 * 1024;

/**
 * GET /api/auth/signin/idp?redirect=<project path>.
 * `idp` flow: a fresh binding cookie, then 302 to the login worker with the
 * cookie's hash, signed with the project's secret (the login worker refuses
 * a `bind` the project did not sign); the hash comes back inside the
 * callback token. `dummy` flow:
 * the local form, with a CSRF nonce cookie.
 */
export async function startSignIn(request: Request, site: AuthSite): Promise<Response> {
  const redirect = safeRedirectPath(new URL(request.url).searchParams.get("redirect"), site.basePath) ?? "/";
  const headers = new Headers();
  if (site.flow === "dummy") {
    const nonce = newCsrfNonce();
    headers.append("Set-Cookie", setCookie("csrf", site, nonce, { maxAge: CSRF_COOKIE_MAX_AGE, sameSite: "Strict" }));
    return signInFormPage(
      {
        action: site.basePath + SIGN_IN_PATH,
        slug: site.slug,
        csrfToken: await csrfTokenFor(site.secret, nonce),
        redirect,
        domains: authSettings().domains,
      },
      headers,
    );
  }
  let start: URL | null = null;
  try {
    start = site.loginUrl ? new URL(site.loginUrl + "/start") : null;
  } catch {
    start = null;
  }
  if (!start || (start.protocol !== "https:" && start.protocol !== "http:")) {
    return messagePage({
      status: 503,
      title: "Sign-in is not available",
      message:
        "This project worker has no usable PLATFORM_LOGIN_URL binding (the login worker's URL), so sign-in cannot start.",
      links: [["Back to the app", site.basePath + "/"]],
    });
  }
  const binding = randomBase64url(32);
  const signIn = { slug: site.slug, redirect, bind: await bindingHash(binding) };
  const { exp, sig } = await signSignInStart(site.secret, site.projectId, signIn);
  start.search = new URLSearchParams({
    project: signIn.slug,
    redirect,
    bind: signIn.bind,
    exp: String(exp),
    sig,
  }).toString();
  headers.append("Set-Cookie", setCookie("bind", site, binding, { maxAge: BINDING_COOKIE_MAX_AGE }));
  headers.set("Location", start.toString());
  return new Response(null, { status: 302, headers: securityHeaders(headers) });
}

/**
 * POST /api/auth/signin/idp (local form only): same-origin `Origin`, a valid
 * CSRF token, then Cancel (back with `auth_error=cancelled`) or Login (the
 * domain rule, then a fresh session, recorded by the platform before its
 * cookie is set). Every refusal sets no session.
 */
export async function submitSignInForm(request: Request, site: AuthSite): Promise<Response> {
  if (!isSameOriginPost(request, site.origin))
    return sameOriginRefusal(site, "The sign-in form was not sent from this app's own page.");
  const type = (request.headers.get("content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") {
    return messagePage({
      status: 400,
      title: "Sign-in failed",
      message: "The sign-in form must be sent as application/x-www-form-urlencoded.",
    });
  }
  let form: URLSearchParams;
  try {
    form = new URLSearchParams(new TextDecoder().decode(await readBodyBytes(request, FORM_LIMIT_BYTES)));
  } catch {
    return messagePage({
      status: 413,
      title: "Sign-in failed",
      message: `The sign-in form is larger than ${FORM_LIMIT_BYTES} bytes.`,
    });
  }
  const nonces = cookieValues(request, cookieName("csrf", site)).slice(0, 4);
  let csrfOk = false;
  for (const nonce of nonces) if (!csrfOk) csrfOk = await csrfTokenValid(site.secret, nonce, form.get("csrf"));
  if (!csrfOk) {
    return messagePage({
      status: 403,
      title: "Sign-in refused",
      message: "The form's security token is missing, expired or not this browser's. Open the sign-in page again.",
      links: [["Sign in again", signInHref(site, "/")]],
    });
  }

  const redirect = safeRedirectPath(form.get("redirect"), site.basePath) ?? "/";
  const action = form.get("action");
  const headers = new Headers();
  if (action === "cancel") {
    headers.append("Set-Cookie", clearCookie("csrf", site, "Strict"));
    headers.set("Location", withQueryParam(site.basePath + redirect, "auth_error", "cancelled"));
    return new Response(null, { status: 303, headers: securityHeaders(headers) });
  }
  if (action !== "login") {
    return messagePage({
      status: 400,
      title: "Sign-in failed",
      message: "The form must be sent with its Login or Cancel button.",
    });
  }
  const email = form.get("email") ?? "";
  const check = checkEmail(email, authSettings().domains);
  if (!check.ok) {
    const message =
      check.reason === "malformed"
        ? `"${email}" is not an email address sign-in accepts (one "@", no quotes or spaces, a domain with a dot).`
        : `${email} may not sign in to this app: only addresses at ${authSettings().domains!.join(", ")} are allowed.`;
    return messagePage({
      status: check.reason === "malformed" ? 400 : 403,
      title: "Sign-in refused",
      message,
      links: [
        ["Try another address", signInHref(site, redirect)],
        ["Back to the app", site.basePath + "/"],
      ],
    });
  }
  const session = await mintSession(site, { email: check.email, name: displayName(form.get("name"), check.email) });
  let started: "started" | "full" | "unavailable";
  try {
    started = await sessionRegistryFor(site).start(session.grant);
  } catch (error) {
    console.error(`auth: ${(error as Error).message}`);
    started = "unavailable";
  }
  if (started !== "started") {
    return messagePage({
      status: 503,
      title: "Sign-in failed",
      message: SESSION_NOT_RECORDED[started],
      links: [["Sign in again", signInHref(site, redirect)]],
    });
  }
  sessionStarted(site, session);
  headers.append("Set-Cookie", session.cookie);
  headers.append("Set-Cookie", clearCookie("csrf", site, "Strict"));
  headers.set("Location", site.basePath + redirect);
  return new Response(null, { status: 303, headers: securityHeaders(headers) });
}

/** `<basePath>/api/auth/signin/idp?redirect=<path>`. */
export function signInHref(site: { basePath: string }, redirect: string): string {
  return `${site.basePath}${SIGN_IN_PATH}?redirect=${encodeURIComponent(redirect)}`;
}
