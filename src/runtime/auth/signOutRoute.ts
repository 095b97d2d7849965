import type { AuthSite } from "./authSite.ts";
import { clearCookie } from "./cookies.ts";
import { securityHeaders, signOutConfirmPage, signOutRetryPage } from "./pages.ts";
import { sameOriginRefusal } from "./refusals.ts";
import { isSameOriginNavigation, isSameOriginPost } from "./sameOrigin.ts";
import { sessionKey, sessionRecordsOf } from "./session.ts";
import { isolateSessions } from "./sessionCache.ts";
import { sessionRegistryFor } from "./sessionRegistry.ts";

export const SIGN_OUT_PATH = "/api/auth/signout";

/**
 * GET or POST /api/auth/signout: ends the session on the platform (so a copy
 * of the cookie taken earlier stops working too: at once in this isolate,
 * within `SESSION_RECHECK_MS` everywhere else), clears the session cookie
 * (same name, path and attributes, `Max-Age=0`) and 303s to the app's home.
 * When the platform cannot end it, nothing changes: a 503 page with a button
 * to try again, the cookie kept. Only for requests from the app itself: a
 * cross-site GET (a link or image on another site) gets a 403 page with a
 * same-origin POST button instead, a cross-site POST a plain 403.
 */
export async function signOut(request: Request, site: AuthSite, nowMS = Date.now()): Promise<Response> {
  const home = site.basePath + "/";
  const action = site.basePath + SIGN_OUT_PATH;
  if (request.method === "GET" && !isSameOriginNavigation(request, site.origin)) {
    return signOutConfirmPage(action, home);
  }
  if (request.method === "POST" && !isSameOriginPost(request, site.origin)) {
    return sameOriginRefusal(site, "The sign-out request was not sent from this app's own page.");
  }
  const records = await sessionRecordsOf(request, site);
  if (records.length) {
    try {
      await sessionRegistryFor(site).end(records.map((r) => r.sid));
    } catch (error) {
      console.error(`auth: sign-out did not finish: ${(error as Error).message}`);
      return signOutRetryPage(action, home);
    }
    isolateSessions.end(
      records.map((r) => ({ key: sessionKey(site, r.sid), email: r.email })),
      nowMS,
    );
  }
  const headers = new Headers({ Location: home });
  headers.append("Set-Cookie", clearCookie("session", site));
  return new Response(null, { status: 303, headers: securityHeaders(headers) });
}
