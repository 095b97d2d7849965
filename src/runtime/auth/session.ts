import { authSettings } from "./authSettings.ts";
import type { AuthSite } from "./authSite.ts";
import type { SignedInUser } from "../../core/callbackToken.ts";
import { checkEmail } from "../../core/email.ts";
import { cookieValues } from "../../core/web/cookies.ts";
import { cookieName, setCookie } from "./cookies.ts";
import { newSessionId, openSession, sealSession, type SessionRecord } from "./sessionSeal.ts";

/** What `auth.user()` returns for a signed-in user. */
export type AuthUser = SignedInUser;

/** A signed `iat` this far in the future is refused (clock skew allowance, seconds). */
const CLOCK_SKEW = 60;
/** At most this many same-named session cookies are tried (see `cookieValues`). */
const MAX_CANDIDATES = 4;

/**
 * Whether a decrypted session still holds, checked on every read: the
 * project matches, it has not expired (`exp`, and `iat` + the *current*
 * `sessionMaxAge`, so shortening it cuts existing sessions too), and the email
 * still passes the *current* domain rule.
 */
export function sessionHolds(record: SessionRecord, projectId: number, nowMs: number): boolean {
  const now = Math.floor(nowMs / 1000);
  const { domains, sessionMaxAge } = authSettings();
  if (record.pid !== projectId) return false;
  if (now >= record.exp || record.iat > now + CLOCK_SKEW || now - record.iat >= sessionMaxAge) return false;
  return checkEmail(record.email, domains).ok;
}

/** The signed-in user of `request` per its session cookie, or `null`. Reads only the cookie; never a header, query or body. */
export async function userFromSession(request: Request, site: AuthSite, nowMs = Date.now()): Promise<AuthUser | null> {
  const values = cookieValues(request, cookieName("session", site)).slice(0, MAX_CANDIDATES);
  for (const value of values) {
    const record = await openSession(site.secret, value);
    if (record && sessionHolds(record, site.projectId, nowMs)) {
      return record.picture === undefined
        ? { email: record.email, name: record.name }
        : { email: record.email, name: record.name, picture: record.picture };
    }
  }
  return null;
}

/** A display name: control characters removed, trimmed, at most 200 characters; the email's local part when empty. */
export function displayName(name: unknown, email: string): string {
  const clean =
    typeof name === "string"
      ? name
          .replace(/[\u0000-\u001f\u007f-\u009f]/g, "")
          .trim()
          .slice(0, 200)
      : "";
  return clean || email.slice(0, email.indexOf("@"));
}

/** An http(s) picture URL, or `undefined`. */
export function pictureUrl(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > 2048) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `Set-Cookie` for a brand-new session (new `sid`, new IV): whatever session
 * cookie the browser sent before is overwritten, never adopted.
 */
export async function freshSessionCookie(site: AuthSite, user: AuthUser, nowMs = Date.now()): Promise<string> {
  const { sessionMaxAge } = authSettings();
  const iat = Math.floor(nowMs / 1000);
  const record: SessionRecord = {
    pid: site.projectId,
    email: user.email,
    name: user.name,
    iat,
    exp: iat + sessionMaxAge,
    sid: newSessionId(),
  };
  if (user.picture !== undefined) record.picture = user.picture;
  return setCookie("session", site, await sealSession(site.secret, record), { maxAge: sessionMaxAge });
}
