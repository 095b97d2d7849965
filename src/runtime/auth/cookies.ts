import { serializeCookie } from "../../core/web/cookies.ts";

/**
 * Cookie names, paths and attributes of sign-in, per mode.
 *
 * | mode | session | binding (deployed flow) | CSRF nonce (local form) | Path |
 * |---|---|---|---|---|
 * | deployed, public | `__Host-platform_session` | `__Host-platform_bind` | `__Host-platform_csrf` | `/` |
 * | deployed, private | `__Secure-platform_session_<slug>` | `__Secure-platform_bind_<slug>` | `__Secure-platform_csrf_<slug>` | `/<slug>` |
 * | local, public | `platform_session` | `platform_bind` | `platform_csrf` | `/` |
 * | local, private | `platform_session_<slug>` | `platform_bind_<slug>` | `platform_csrf_<slug>` | `/<slug>` |
 *
 * `__Host-` needs `Path=/`, so a private deployment (which shares its origin
 * with other private deployments) uses `__Secure-` and a per-project name and
 * path. Local development is plain http, where `Secure`, and with it both
 * prefixes, cannot be used. No cookie ever has a `Domain` (host-only). The
 * binding cookie is `SameSite=None; Secure` in every mode (see `setCookie`).
 */

export type CookieKind = "session" | "bind" | "csrf";

export interface CookieScope {
  /** `PLATFORM_LOCAL === "1"`: no `Secure`, no prefix. */
  local: boolean;
  /** `""` (public) or `/<slug>` (private deployment). */
  basePath: string;
}

export function cookieName(kind: CookieKind, scope: CookieScope): string {
  const base = `platform_${kind}`;
  const slug = scope.basePath.slice(1);
  if (scope.local) return slug ? `${base}_${slug}` : base;
  return slug ? `__Secure-${base}_${slug}` : `__Host-${base}`;
}

export function cookiePath(scope: CookieScope): string {
  return scope.basePath || "/";
}

/** What a caller chooses for a sign-in cookie; path, `Secure` and the name follow from the kind and scope. */
export interface SignInCookieOptions {
  /** Seconds; 0 removes the cookie. */
  maxAge: number;
  /** Lax unless given. */
  sameSite?: "Lax" | "Strict";
}

/**
 * A `Set-Cookie` value: HttpOnly always, Secure unless local, host-only, path-scoped.
 *
 * The binding cookie is the exception: `SameSite=None; Secure`, locally too.
 * The login worker hands the token over with a POST from its own origin,
 * which is another site when deployed (a platform domain on the public suffix
 * list) and locally (`127.0.0.1:<port>` vs `localhost:<port>`); a Lax cookie
 * would not ride that POST. It is only a binding, not a session: a cross-site
 * request that carries it can complete nothing but a sign-in this browser
 * started itself. Browsers accept `Secure` from `http://localhost` (a
 * potentially trustworthy origin), so local development needs no https.
 */
export function setCookie(kind: CookieKind, scope: CookieScope, value: string, options: SignInCookieOptions): string {
  const binding = kind === "bind";
  return serializeCookie(cookieName(kind, scope), value, {
    path: cookiePath(scope),
    maxAge: options.maxAge,
    sameSite: binding ? "None" : (options.sameSite ?? "Lax"),
    secure: binding || !scope.local,
  });
}

/** Removes a cookie: same name, path and attributes, empty value, `Max-Age=0`. */
export function clearCookie(kind: CookieKind, scope: CookieScope, sameSite: "Lax" | "Strict" = "Lax"): string {
  return setCookie(kind, scope, "", { maxAge: 0, sameSite });
}
