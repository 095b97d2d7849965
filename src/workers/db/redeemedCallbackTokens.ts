import type { SessionGrant } from "../../contracts/signInSessions.ts";
import { sessionStartOutcome, startSessionStatements, type SessionStart } from "./projectSessionsTable.ts";

/**
 * `redeemed_callback_tokens`: the `jti` of every callback token a project
 * redeemed, kept until the token has expired (plus the clock skew the runtime
 * may have). Only tokens the project verified are recorded, under the project
 * the caller authenticated as, so a project can neither fill another's list
 * nor burn its tokens. Expired rows are purged by every insert.
 */
export const REDEEMED_TOKEN_SKEW_SECONDS = 60;

/** A callback token a project redeemed (its `jti`, kept until `expiresAt`), with the session it signs in. */
export interface RedeemedToken {
  projectId: number;
  jti: string;
  expiresAt: number;
  session?: SessionGrant;
}

/**
 * Records the token as redeemed: `redeemed` true the first time, false for a
 * replay. With `session`, in the same transaction, starts the session the
 * token signs in, only when the token was not redeemed before: a token
 * starts at most one session, and a session is never started by a replay.
 */
export async function recordRedeemedToken(
  db: D1Database,
  { projectId, jti, expiresAt, session }: RedeemedToken,
  nowSeconds: number,
): Promise<{ redeemed: boolean; session?: SessionStart }> {
  const purge = db
    .prepare("DELETE FROM redeemed_callback_tokens WHERE expires_at < ?")
    .bind(nowSeconds - REDEEMED_TOKEN_SKEW_SECONDS);
  const redeem = db
    .prepare(
      "INSERT INTO redeemed_callback_tokens (project_id, jti, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING jti",
    )
    .bind(projectId, jti, expiresAt);
  if (!session) {
    const [, inserted] = await db.batch([purge, redeem]);
    return { redeemed: (inserted?.results.length ?? 0) > 0 };
  }
  // The session's insert runs first and only while the token is not recorded; the token's insert follows.
  const [purgeSessions, startSession] = startSessionStatements(
    db,
    { projectId, grant: session, unlessRedeemed: { jti } },
    nowSeconds,
  );
  const [, , started, inserted] = await db.batch([purge, purgeSessions!, startSession!, redeem]);
  const redeemed = (inserted?.results.length ?? 0) > 0;
  if (!redeemed) return { redeemed };
  return { redeemed, session: await sessionStartOutcome(db, projectId, session.sid, started) };
}
