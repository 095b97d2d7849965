import type { AuthSite } from "./authSite.ts";
import { clearCookie } from "./cookies.ts";
import { securityHeaders, signOutConfirmPage } from "./pages.ts";
import { sameOriginRefusal } from "./refusals.ts";
import { isSameOriginNavigation, isSameOriginPost } from "./sameOrigin.ts";

export const SIGN_OUT_PATH = "/api/auth/signout";

/**
 * GET or POST /api/auth/signout: clears the session cookie (same name, path
 * and attributes, `Max-Age=0`) and 303s to the app's home. Only for requests
 * from the app itself: a cross-site GET (a link or image on another site)
 * gets a 403 page with a same-origin POST button instead, a cross-site POST a
 * plain 403. Sessions are stateless: sign-out ends this browser's session; a
 * copy of the cookie value taken earlier stays valid until it expires.
 */
export function signOut(request: Request, site: AuthSite): Response {
  const home = site.basePath + "/";
  if (request.method === "GET" && !isSameOriginNavigation(request, site.origin)) {
    return signOutConfirmPage(site.basePath + SIGN_OUT_PATH, home);
  }
  if (request.method === "POST" && !isSameOriginPost(request, site.origin)) {
    return sameOriginRefusal(site, "The sign-out request was not sent from this app's own page.");
  }
  const headers = new Headers({ Location: home });
  headers.append("Set-Cookie", clearCookie("session", site));
  return new Response(null, { status: 303, headers: securityHeaders(headers) });
}
