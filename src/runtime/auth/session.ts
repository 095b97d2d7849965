import { authSettings } from "./authSettings.ts";
import type { AuthProject, AuthSite } from "./authSite.ts";
import type { SignedInUser } from "../../core/callbackToken.ts";
import { SESSION_ID, type SessionGrant } from "../../contracts/signInSessions.ts";
import { hex } from "../../core/crypto/encoding.ts";
import { checkEmail } from "../../core/email.ts";
import { cookieValues } from "../../core/web/cookies.ts";
import { cookieName, setCookie } from "./cookies.ts";
import { isolateSessions, type SessionCache } from "./sessionCache.ts";
import { sessionRegistryFor } from "./sessionRegistry.ts";
import { openSessionOnce } from "./openedSessions.ts";
import { newSessionId, sealSession, type SessionRecord } from "./sessionSeal.ts";

/**
 * What `auth.user()` returns for a signed-in user.
 * @example
 * const user: AuthUser | null = await auth.user(request);
 * if (user) console.log(user.email, user.name, user.picture);
 */
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
export function sessionHolds(record: SessionRecord, projectId: number, nowMS: number): boolean {
  const now = Math.floor(nowMS / 1000);
  const { domains, sessionMaxAge } = authSettings();
  if (record.pid !== projectId) return false;
  if (now >= record.exp || record.iat > now + CLOCK_SKEW || now - record.iat >= sessionMaxAge) return false;
  return checkEmail(record.email, domains).ok;
}

/** This isolate's key for a session (sessionCache.ts). */
export function sessionKey(project: Pick<AuthProject, "projectId">, sid: string): string {
  return `${project.projectId}:${sid}`;
}

/** How a session cookie is read: the clock, this isolate's cache, and what a session that cannot be checked reads as. */
export interface SessionReading {
  nowMS?: number;
  cache?: SessionCache;
  unverifiable?: "nobody" | "throw";
}

/**
 * The signed-in user of `request` per its session cookie, or `null`. Reads
 * only the cookie; never a header, query or body. A cookie that opens and
 * holds (`sessionHolds`) must also name a session the platform still records
 * (not signed out, not signed out everywhere): asked through `cache`, so at
 * most once per session per `SESSION_RECHECK_MS` in this isolate. When the
 * platform cannot be asked, the session cannot be vouched for and reads as
 * nobody (logged), or, with `unverifiable: "throw"`, the `not_ready` error
 * is thrown once no other cookie reads as somebody.
 */
export async function userFromSession(
  request: Request,
  site: AuthSite,
  { nowMS = Date.now(), cache = isolateSessions, unverifiable = "nobody" }: SessionReading = {},
): Promise<AuthUser | null> {
  const values = cookieValues(request, cookieName("session", site)).slice(0, MAX_CANDIDATES);
  let unchecked: unknown = null;
  for (const value of values) {
    const record = await openSessionOnce(site.secret, value);
    if (!record || !sessionHolds(record, site.projectId, nowMS) || !SESSION_ID.test(record.sid)) continue;
    let active: boolean;
    try {
      active = await cache.isActive(sessionKey(site, record.sid), record.email, nowMS, () =>
        sessionRegistryFor(site).isActive(record.sid),
      );
    } catch (error) {
      console.error(`auth: a session could not be checked, so it reads as nobody: ${(error as Error).message}`);
      unchecked ??= error;
      continue;
    }
    if (active) {
      return record.picture === undefined
        ? { email: record.email, name: record.name }
        : { email: record.email, name: record.name, picture: record.picture };
    }
  }
  if (unchecked && unverifiable === "throw") throw unchecked;
  return null;
}

/** The records of this project's session cookies on `request` (expired or not): what a sign-out ends. */
export async function sessionRecordsOf(request: Request, site: AuthSite): Promise<Readonly<SessionRecord>[]> {
  const records: Readonly<SessionRecord>[] = [];
  for (const value of cookieValues(request, cookieName("session", site)).slice(0, MAX_CANDIDATES)) {
    const record = await openSessionOnce(site.secret, value);
    if (record && record.pid === site.projectId && SESSION_ID.test(record.sid)) records.push(record);
  }
  return records;
}

/**
 * What the platform files a user's sessions under: SHA-256 of the
 * lower-cased address, so the address itself never leaves the project and
 * `Ada@Example.com` and `ada@example.com` are one user.
 */
export async function userKeyOf(email: string): Promise<string> {
  return hex(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`platform-session-user-v1\n${email.toLowerCase()}`)),
  );
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

/** Why a sign-in signed nobody in although everything else checked out: the platform did not record its session. */
export const SESSION_NOT_RECORDED = {
  full: "This app has reached the platform's limit of live sign-in sessions, so nobody was signed in. Try again later.",
  unavailable: "The platform could not record this sign-in, so nobody was signed in. Try again in a moment.",
} as const;

/** A session minted for a sign-in: its `Set-Cookie`, and what the platform must record before it is handed out. */
export interface MintedSession {
  /** `Set-Cookie` for the brand-new session. */
  cookie: string;
  grant: SessionGrant;
  email: string;
}

/**
 * A brand-new session (new `sid`, new IV): whatever session cookie the
 * browser sent before is overwritten, never adopted. It is a session only
 * once the platform has recorded `grant` (the caller's step, then
 * `sessionStarted`).
 */
export async function mintSession(site: AuthSite, user: AuthUser, nowMS = Date.now()): Promise<MintedSession> {
  const { sessionMaxAge } = authSettings();
  const iat = Math.floor(nowMS / 1000);
  const record: SessionRecord = {
    pid: site.projectId,
    email: user.email,
    name: user.name,
    iat,
    exp: iat + sessionMaxAge,
    sid: newSessionId(),
  };
  if (user.picture !== undefined) record.picture = user.picture;
  return {
    cookie: setCookie("session", site, await sealSession(site.secret, record), { maxAge: sessionMaxAge }),
    grant: { sid: record.sid, user: await userKeyOf(user.email), exp: record.exp },
    email: user.email,
  };
}

/** The platform recorded the session: this isolate knows it is active without asking. */
export function sessionStarted(site: AuthSite, session: MintedSession, nowMS = Date.now()): void {
  isolateSessions.remember(sessionKey(site, session.grant.sid), session.email, true, nowMS);
}
