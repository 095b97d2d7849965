/**
 * `redirect` parameters (the login worker's `/start`, a project's sign-in,
 * the callback token's `rdr`, cancel) accept same-origin, project-relative
 * paths only: one leading "/", no "//" or backslash (browsers read "\" as
 * "/"), no scheme, no "." or ".." segment, no control characters and no
 * whitespace of any kind (U+00A0 and the other Unicode spaces included). The
 * same holds once more after one round of percent-decoding, so
 * `/%2F%2Fevil.example` cannot turn into `//evil.example` later; there a
 * decoded ASCII space (`?q=a%20b`) is an ordinary character of a query.
 */
const MAX_LENGTH = 2048;
const FORBIDDEN_RAW = /[\u0000-\u001f\u007f-\u009f\s\\]/u;
const FORBIDDEN_DECODED = /[\u0000-\u001f\u007f-\u009f\\]|[^\S ]/u;
const PROBE_ORIGIN = "https://project.invalid";

function plainPath(value: string, forbidden: RegExp): boolean {
  if (forbidden.test(value)) return false;
  if (!value.startsWith("/") || value.startsWith("//")) return false;
  const path = value.split(/[?#]/, 1)[0]!;
  return !path.split("/").some((segment) => segment === "." || segment === "..");
}

function sameOriginUrl(raw: unknown): URL | null {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > MAX_LENGTH) return null;
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
  return url.origin === PROBE_ORIGIN ? url : null;
}

/** Whether `raw` is a safe same-origin path, as given. */
export function isSafeRedirectPath(raw: unknown): raw is string {
  return sameOriginUrl(raw) !== null;
}

/**
 * The project-relative path (`/…`, with query and fragment) `raw` names, or
 * `null` when it is not safe. A private deployment's base path (`/<slug>`)
 * already on the path is removed once: the runtime adds it on every hop.
 */
export function safeRedirectPath(raw: unknown, basePath = ""): string | null {
  const url = sameOriginUrl(raw);
  if (!url) return null;
  let pathname = url.pathname;
  if (basePath && (pathname === basePath || pathname.startsWith(basePath + "/")))
    pathname = pathname.slice(basePath.length) || "/";
  return pathname + url.search + url.hash;
}
