import type { UserRow } from "./usersTable.ts";

/** `cli_tokens`: a user's CLI tokens, stored only as their SHA-256 (hex). */
export interface NewCliToken {
  userId: number;
  tokenHash: string;
  label: string;
  createdAt: number;
}

export async function insertCliToken(db: D1Database, token: NewCliToken): Promise<void> {
  await db
    .prepare("INSERT INTO cli_tokens (user_id, token_hash, label, created_at) VALUES (?, ?, ?, ?)")
    .bind(token.userId, token.tokenHash, token.label, token.createdAt)
    .run();
}

/** The user a token hash belongs to, with the token's expiry (`null` = never). */
export function findCliTokenUser(
  db: D1Database,
  tokenHash: string,
): Promise<(UserRow & { expires_at: number | null }) | null> {
  return db
    .prepare(
      "SELECT users.id AS id, users.email AS email, cli_tokens.expires_at AS expires_at FROM cli_tokens JOIN users ON users.id = cli_tokens.user_id WHERE cli_tokens.token_hash = ?",
    )
    .bind(tokenHash)
    .first<UserRow & { expires_at: number | null }>();
}

/** Deletes the token with this hash (`platform logout`); false when there was none. */
export async function deleteCliToken(db: D1Database, tokenHash: string): Promise<boolean> {
  const row = await db
    .prepare("DELETE FROM cli_tokens WHERE token_hash = ? RETURNING id")
    .bind(tokenHash)
    .first<{ id: number }>();
  return row !== null;
}
