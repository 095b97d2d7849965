import { errorResponse, PlatformError } from "../../core/errors.ts";
import { safeRedirectPath } from "../../core/web/redirectPath.ts";
import { basePathOf } from "../entry/requestBasePath.ts";
import { securityHeaders } from "./pages.ts";
import { signInHref } from "./signInRoute.ts";
import { isNavigation } from "../../core/web/navigation.ts";

/** `auth.require()`'s options. */
export interface RequireOptions {
  /**
   * `true` (default): a browser navigation with nobody signed in is redirected
   * to the sign-in page instead of the plain 401;
   * `false`: every such request gets the 401 JSON.
   */
  redirect?: boolean;
}

/**
 * The answer to a request nobody is signed in for: a navigation goes to
 * `<basePath>/api/auth/signin/idp?redirect=<path and query>` (302; a path that
 * is not a safe same-origin one becomes `/`), anything else gets 401 JSON
 * naming the sign-in URL. Both vary on `Accept` and are never cached.
 */
export function signInRequired(request: Request, options: RequireOptions = {}): Response {
  const url = new URL(request.url);
  const basePath = basePathOf(request);
  const back = safeRedirectPath(url.pathname + url.search, basePath) ?? "/";
  const signIn = signInHref({ basePath }, back);
  const headers = { "Cache-Control": "no-store", Vary: "Accept" };
  if (options.redirect !== false && isNavigation(request)) {
    return new Response(null, { status: 302, headers: securityHeaders(new Headers({ ...headers, Location: signIn })) });
  }
  return errorResponse(new PlatformError("unauthorized", `Sign in required: ${url.origin}${signIn}`), headers);
}
