import type { SessionGrant } from "../../contracts/signInSessions.ts";

/**
 * `project_sessions` (migrations/0012_project_sessions.sql): the live sign-in sessions of every
 * project. A row exists from sign-in until sign-out, sign-out-everywhere or
 * its `exp`; the project worker reads a session cookie as somebody only while
 * its row is there. Rows are only ever written under the project the caller
 * authenticated as.
 */

/** A project holds at most this many live sessions (beyond it, sign-in is refused until some end or expire). */
export const MAX_LIVE_SESSIONS_PER_PROJECT = 100_000;

/** A session to start in a project; `unlessRedeemed` ties it to a callback token. */
export interface SessionToStart {
  projectId: number;
  grant: SessionGrant;
  unlessRedeemed?: { jti: string };
}

/**
 * Purges expired rows (every project's) and inserts the session, for the
 * batch the caller runs; `unlessRedeemed`: only while that callback token is
 * not recorded as redeemed (redeemedCallbackTokens.ts).
 */
export function startSessionStatements(
  db: D1Database,
  { projectId, grant, unlessRedeemed }: SessionToStart,
  nowSeconds: number,
): D1PreparedStatement[] {
  // The cap is checked in the insert itself, so concurrent sign-ins cannot pass it together.
  const conditions = ["(SELECT COUNT(*) FROM project_sessions WHERE project_id = ?) < ?"];
  const values: unknown[] = [projectId, grant.sid, grant.user, grant.exp, projectId, MAX_LIVE_SESSIONS_PER_PROJECT];
  if (unlessRedeemed) {
    conditions.push("NOT EXISTS (SELECT 1 FROM redeemed_callback_tokens WHERE project_id = ? AND jti = ?)");
    values.push(projectId, unlessRedeemed.jti);
  }
  return [
    db.prepare("DELETE FROM project_sessions WHERE expires_at <= ?").bind(nowSeconds),
    db
      .prepare(
        `INSERT INTO project_sessions (project_id, sid, user_key, expires_at) SELECT ?, ?, ?, ? WHERE ${conditions.join(" AND ")} ON CONFLICT DO NOTHING RETURNING sid`,
      )
      .bind(...values),
  ];
}

/** `started` (a new row), `exists` (the same sid was started before), or `full` (the project is at the cap). */
export type SessionStart = "started" | "exists" | "full";

export async function sessionStartOutcome(
  db: D1Database,
  projectId: number,
  sid: string,
  inserted: D1Result | undefined,
): Promise<SessionStart> {
  if ((inserted?.results.length ?? 0) > 0) return "started";
  const row = await db
    .prepare("SELECT 1 AS found FROM project_sessions WHERE project_id = ? AND sid = ?")
    .bind(projectId, sid)
    .first();
  return row ? "exists" : "full";
}

export async function startSession(
  db: D1Database,
  projectId: number,
  grant: SessionGrant,
  nowSeconds: number,
): Promise<SessionStart> {
  const [, inserted] = await db.batch(startSessionStatements(db, { projectId, grant }, nowSeconds));
  return sessionStartOutcome(db, projectId, grant.sid, inserted);
}

/** The session is recorded and unexpired. */
export async function isSessionActive(
  db: D1Database,
  projectId: number,
  sid: string,
  nowSeconds: number,
): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS found FROM project_sessions WHERE project_id = ? AND sid = ? AND expires_at > ?")
    .bind(projectId, sid, nowSeconds)
    .first();
  return row !== null;
}

/** Ends the project's sessions with these ids; how many there were. */
export async function endSessions(db: D1Database, projectId: number, sids: readonly string[]): Promise<number> {
  const result = await db
    .prepare(`DELETE FROM project_sessions WHERE project_id = ? AND sid IN (${sids.map(() => "?").join(", ")})`)
    .bind(projectId, ...sids)
    .run();
  return result.meta.changes;
}

/** Ends every session of the user in the project; how many there were. */
export async function endUserSessions(db: D1Database, projectId: number, userKey: string): Promise<number> {
  const result = await db
    .prepare("DELETE FROM project_sessions WHERE project_id = ? AND user_key = ?")
    .bind(projectId, userKey)
    .run();
  return result.meta.changes;
}
