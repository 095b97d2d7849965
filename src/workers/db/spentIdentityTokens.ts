/**
 * `spent_identity_tokens`: identity tokens a single-use route has accepted,
 * kept until the token would have expired anyway. A token's signature is
 * unique to its project, second and the request it signs, so it is the key.
 * Only verified tokens are recorded (a forger cannot fill the table), and
 * expired rows are purged as new tokens are spent.
 */

/** Records the token as spent until `expiresAt`: true the first time, false for a replay. */
export async function spendIdentityToken(
  db: D1Database,
  signature: string,
  expiresAt: number,
  now: number,
): Promise<boolean> {
  const [, inserted] = await db.batch([
    db.prepare("DELETE FROM spent_identity_tokens WHERE expires_at < ?").bind(now),
    db
      .prepare(
        "INSERT INTO spent_identity_tokens (signature, expires_at) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING signature",
      )
      .bind(signature, expiresAt),
  ]);
  return (inserted?.results.length ?? 0) > 0;
}
