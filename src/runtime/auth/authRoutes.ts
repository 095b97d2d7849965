import { errorResponse, PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { rememberEnv, siteFor, type AuthSite } from "./authSite.ts";
import { CALLBACK_PATH, finishSignIn, refuseCallbackGet } from "./callbackRoute.ts";
import { messagePage } from "./pages.ts";
import { SIGN_IN_PATH, startSignIn, submitSignInForm } from "./signInRoute.ts";
import { SIGN_OUT_PATH, signOut } from "./signOutRoute.ts";

/**
 * The sign-in routes, answered before user code (registered with the entry
 * only in projects that use `auth`). Paths are project-relative: the entry
 * has already stripped a private deployment's `/<slug>`.
 *
 * | route | dummy flow (local) | idp flow (deployed / local OIDC) |
 * |---|---|---|
 * | GET  /api/auth/signin/idp | the form | binding cookie + 302 to the login worker |
 * | POST /api/auth/signin/idp | Login / Cancel | 404 |
 * | POST /api/auth/callback   | 404 | the login worker's form: token → session (once) |
 * | GET  /api/auth/callback   | 404 | 405: the token never travels in a URL |
 * | GET, POST /api/auth/signout | clear the session | clear the session |
 *
 * Every request also records its environment here, so `auth.user(request)`
 * can find the project's secret from the request alone.
 */
export async function handleAuthRoute(request: Request, env: PlatformEnv): Promise<Response | null> {
  rememberEnv(request, env);
  const url = new URL(request.url);
  const path = url.pathname;
  if (path !== SIGN_IN_PATH && path !== CALLBACK_PATH && path !== SIGN_OUT_PATH) return null;
  let site: AuthSite;
  try {
    site = siteFor(request, env);
  } catch (error) {
    if (!(error instanceof PlatformError)) throw error;
    return messagePage({ status: 503, title: "Sign-in is not available", message: error.message });
  }
  const method = request.method;
  if (path === SIGN_IN_PATH) {
    if (method === "GET") return startSignIn(request, site);
    if (method === "POST" && site.flow === "dummy") return submitSignInForm(request, site);
  } else if (path === CALLBACK_PATH) {
    if (method === "POST" && site.flow === "idp") return finishSignIn(request, site);
    if (method === "GET" && site.flow === "idp") return refuseCallbackGet(site);
  } else if (method === "GET" || method === "POST") {
    return signOut(request, site);
  }
  return errorResponse(new PlatformError("not_found", `No route for ${method} ${path}.`));
}
