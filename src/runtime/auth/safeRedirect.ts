import { safeRedirectPath } from "../../core/web/redirectPath.ts";

/**
 * Where sign-in sends the browser. `redirect` parameters are checked by
 * `safeRedirectPath` (core/web/redirectPath.ts); anything unsafe falls back to
 * the project's home. The base path of a private deployment (`/<slug>`) is
 * added on every hop, so a redirect can never leave the project's prefix.
 */

/** Where to send the browser: `<basePath><safe path>`, or `<basePath>/` when `raw` is unsafe or missing. */
export function redirectLocation(raw: unknown, basePath: string): string {
  return basePath + (safeRedirectPath(raw, basePath) ?? "/");
}

/** `path` with `name=value` added to its query (before any fragment). */
export function withQueryParam(path: string, name: string, value: string): string {
  const hashAt = path.indexOf("#");
  const beforeHash = hashAt === -1 ? path : path.slice(0, hashAt);
  const hash = hashAt === -1 ? "" : path.slice(hashAt);
  const separator = beforeHash.includes("?") ? "&" : "?";
  return `${beforeHash}${separator}${encodeURIComponent(name)}=${encodeURIComponent(value)}${hash}`;
}
