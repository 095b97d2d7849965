/**
 * The `redirect` a project sends to `/start`: where inside the project the
 * person lands after sign-in. Only a same-origin, project-relative path is
 * accepted (the project adds its own `/<slug>` prefix): one leading "/", no
 * "//" or backslash, no scheme, no control characters or raw whitespace, no "."
 * or ".." segment, and the same once more after one round of percent-decoding
 * (so `/%2F%2Fevil.example` cannot turn into `//evil.example` later).
 */
const MAX_LENGTH = 2048;
const PROBE_ORIGIN = "https://project.invalid";

function isSafePath(path: string, decoded: boolean): boolean {
  if (!path.startsWith("/") || path.startsWith("//")) return false;
  if (path.includes("\\")) return false;
  // C0 controls, DEL, the C1 range and the Unicode line separators; a raw
  // space too (a decoded "%20" is an ordinary character of a query).
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(path) || (!decoded && path.includes(" "))) return false;
  const pathname = path.split(/[?#]/, 1)[0]!;
  if (pathname.split("/").some((segment) => segment === "." || segment === "..")) return false;
  let parsed: URL;
  try {
    parsed = new URL(path, PROBE_ORIGIN);
  } catch {
    return false;
  }
  return parsed.origin === PROBE_ORIGIN;
}

/** The path itself when it is acceptable, otherwise `null`. */
export function validateRedirectPath(value: string | null): string | null {
  if (value === null || value.length === 0 || value.length > MAX_LENGTH) return null;
  if (!isSafePath(value, false)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    return null;
  }
  if (!isSafePath(decoded, true)) return null;
  return value;
}
