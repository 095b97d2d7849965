/**
 * `redeemed_callback_tokens`: the `jti` of every callback token a project
 * redeemed, kept until the token has expired (plus the clock skew the runtime
 * may have). Only tokens the project verified are recorded, under the project
 * the caller authenticated as, so a project can neither fill another's list
 * nor burn its tokens. Expired rows are purged by every insert.
 */
export const REDEEMED_TOKEN_SKEW_SECONDS = 60;

/** Records the token as redeemed: true the first time, false for a replay. */
export async function recordRedeemedToken(
  db: D1Database,
  projectId: number,
  jti: string,
  expiresAt: number,
  nowSeconds: number,
): Promise<boolean> {
  const [, inserted] = await db.batch([
    db
      .prepare("DELETE FROM redeemed_callback_tokens WHERE expires_at < ?")
      .bind(nowSeconds - REDEEMED_TOKEN_SKEW_SECONDS),
    db
      .prepare(
        "INSERT INTO redeemed_callback_tokens (project_id, jti, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING jti",
      )
      .bind(projectId, jti, expiresAt),
  ]);
  return (inserted?.results.length ?? 0) > 0;
}
