import { PlatformError } from "../core/errors.ts";

/**
 * The platform's record of a project's sign-in sessions (so a session can
 * be ended, though its cookie is stateless): the project worker registers each session it
 * mints, asks whether one still stands, and ends them (sign-out, sign out
 * everywhere), through identity-signed calls to the API worker
 * (`PLATFORM_API`). A session the platform does not hold is not a session.
 *
 * | route | body | answer |
 * |---|---|---|
 * | `POST /internal/auth/redeem` | `{ jti, exp, session? }` | the callback token redeemed and, with `session`, the session started, both or neither |
 * | `POST /internal/auth/sessions/start` | `{ session }` | 200 `{ started: true }` (the local form's sign-in) |
 * | `POST /internal/auth/sessions/check` | `{ sid }` | 200 `{ active }` |
 * | `POST /internal/auth/sessions/end` | `{ sids }` | 200 `{ ended }` (sign-out) |
 * | `POST /internal/auth/sessions/end-user` | `{ user }` | 200 `{ ended }` (`auth.signOutEverywhere`) |
 */
export const SESSION_ROUTES = {
  start: "/internal/auth/sessions/start",
  check: "/internal/auth/sessions/check",
  end: "/internal/auth/sessions/end",
  endUser: "/internal/auth/sessions/end-user",
} as const;

/** A session id: 16 random bytes, base64url. */
export const SESSION_ID = /^[A-Za-z0-9_-]{22}$/;
/** A user key: SHA-256 (hex) of the lower-cased address, so the platform never keeps the address itself. */
export const USER_KEY = /^[0-9a-f]{64}$/;
/** Browsers cap cookie lifetimes at 400 days (RFC 6265bis); no session may outlive its cookie. */
export const MAX_SESSION_SECONDS = 400 * 86_400;
/** A session's length when `auth.allow()` names none: 30 days. */
export const DEFAULT_SESSION_SECONDS = 30 * 86_400;
/** How many sessions one sign-out may end: the same-named session cookies a request is read for. */
export const MAX_SESSIONS_PER_SIGN_OUT = 4;

/** A session as the platform records it. */
export interface SessionGrant {
  sid: string;
  /** The user key (`USER_KEY`). */
  user: string;
  /** Unix seconds: the session's own `exp`. */
  exp: number;
}

/** `{ sid, user, exp }` of a session that is live at `nowSeconds` and no longer than a cookie may live. */
export function parseSessionGrant(value: unknown, nowSeconds: number): SessionGrant {
  const grant = value as Partial<SessionGrant> | null;
  if (
    typeof grant !== "object" ||
    grant === null ||
    typeof grant.sid !== "string" ||
    !SESSION_ID.test(grant.sid) ||
    typeof grant.user !== "string" ||
    !USER_KEY.test(grant.user) ||
    typeof grant.exp !== "number" ||
    !Number.isSafeInteger(grant.exp) ||
    grant.exp <= nowSeconds ||
    grant.exp > nowSeconds + MAX_SESSION_SECONDS + 60
  ) {
    throw new PlatformError(
      "invalid_input",
      `session must be { sid (22 base64url characters), user (64 hex characters), exp (Unix seconds, in the future, at most ${MAX_SESSION_SECONDS} s away) }.`,
    );
  }
  return { sid: grant.sid, user: grant.user, exp: grant.exp };
}

/** A list of 1 to `MAX_SESSIONS_PER_SIGN_OUT` session ids. */
export function parseSessionIds(value: unknown): string[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > MAX_SESSIONS_PER_SIGN_OUT ||
    !value.every((sid) => typeof sid === "string" && SESSION_ID.test(sid))
  ) {
    throw new PlatformError(
      "invalid_input",
      `sids must be 1 to ${MAX_SESSIONS_PER_SIGN_OUT} session ids (22 base64url characters each).`,
    );
  }
  return value as string[];
}
