/** `users`: one row per person, keyed by lower-cased email. */
export interface UserRow {
  id: number;
  email: string;
}

/** Creates the user with this email, or returns the one that already has it. */
export async function upsertUserByEmail(db: D1Database, email: string, now: number): Promise<UserRow> {
  const user = await db
    .prepare(
      "INSERT INTO users (email, created_at) VALUES (?, ?) ON CONFLICT (email) DO UPDATE SET email = excluded.email RETURNING id, email",
    )
    .bind(email, now)
    .first<UserRow>();
  return user!;
}
