/**
 * Whether a request was sent by a page of the project's own origin (or typed
 * by the user), from the headers browsers set and pages cannot forge.
 *
 * Note: on a private deployment "same origin" includes every other private
 * project on the platform domain; see docs/sign-in.md, on path scoping.
 */

/** A POST: `Origin` must equal ours (`null` never does); without `Origin`, `Sec-Fetch-Site: same-origin`. */
export function isSameOriginPost(request: Request, origin: string): boolean {
  const sent = request.headers.get("origin");
  if (sent !== null) return sent === origin;
  return request.headers.get("sec-fetch-site") === "same-origin";
}

/**
 * A GET navigation: `Sec-Fetch-Site` `same-origin` or `none` (typed, bookmark);
 * from browsers that do not send it, an `Origin` or `Referer` of this origin.
 * No evidence at all counts as cross-site.
 */
export function isSameOriginNavigation(request: Request, origin: string): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin" || site === "none";
  const sent = request.headers.get("origin");
  if (sent !== null) return sent === origin;
  const referer = request.headers.get("referer");
  if (!referer) return false;
  try {
    return new URL(referer).origin === origin;
  } catch {
    return false;
  }
}
