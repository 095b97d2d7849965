/**
 * `redirect` parameters (sign-in, the callback token's `rdr`, cancel) accept
 * same-origin, project-relative paths only. Anything else falls back to the
 * project's home. The base path of a private deployment (`/<slug>`) is added
 * by the runtime on every hop, so a redirect can never leave the project's
 * prefix; a path that already carries the prefix is accepted once, without it.
 */

// As given: control characters, any whitespace and backslashes (browsers read "\" as "/").
const FORBIDDEN_RAW = /[\u0000-\u001f\u007f-\u009f\s\\]/u;
// Once decoded, an encoded space is an ordinary character of a query (`?q=a%20b`);
// controls, line separators and backslashes are still refused.
const FORBIDDEN_DECODED = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/u;
const PROBE_ORIGIN = "https://project.invalid";

function plainPath(value: string, forbidden: RegExp): boolean {
  if (forbidden.test(value)) return false;
  if (!value.startsWith("/") || value.startsWith("//")) return false;
  const path = value.split(/[?#]/, 1)[0]!;
  return !path.split("/").some((segment) => segment === "." || segment === "..");
}

/**
 * The project-relative path (`/…`, with query and fragment) `raw` names, or
 * `null` when it is not a safe same-origin path. Checked as given and once
 * percent-decoded, so `/%2F%2Fevil.example` and `/a/%2E%2E/b` are refused.
 */
export function safeRedirectPath(raw: unknown, basePath = ""): string | null {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > 2048) return null;
  if (!plainPath(raw, FORBIDDEN_RAW)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (!plainPath(decoded, FORBIDDEN_DECODED)) return null;
  let url: URL;
  try {
    url = new URL(raw, PROBE_ORIGIN);
  } catch {
    return null;
  }
  if (url.origin !== PROBE_ORIGIN) return null;
  let pathname = url.pathname;
  if (basePath && (pathname === basePath || pathname.startsWith(basePath + "/"))) pathname = pathname.slice(basePath.length) || "/";
  return pathname + url.search + url.hash;
}

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
