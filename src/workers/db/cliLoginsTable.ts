/**
 * `cli_logins`: the state of each `platform login` (migrations/0008_cli_logins.sql).
 * Every transition is one conditional UPDATE, so of concurrent attempts
 * exactly one wins: a code is opened once, approved or denied once, redeemed once.
 */

/** How long the browser link's code may wait to be opened. */
export const CLI_LOGIN_CODE_LIFETIME_MS = 2 * 60 * 1000;
/** How long, once opened, the person has to sign in and approve (the login worker's flow lifetime). */
export const CLI_LOGIN_FLOW_MS = 10 * 60 * 1000;
/** Rows older than this are dead whatever their state, and purged. */
const PURGE_AFTER_MS = 60 * 60 * 1000;

export interface CliLoginRow {
  id: number;
  client_host: string;
  created_at: number;
  expires_at: number;
  opened_at: number | null;
  approved_email: string | null;
  denied_at: number | null;
  redeemed_at: number | null;
}

const COLUMNS = "id, client_host, created_at, expires_at, opened_at, approved_email, denied_at, redeemed_at";

/** Stores a new login (purging dead ones first). */
export async function insertCliLogin(
  db: D1Database,
  login: { codeHash: string; pollHash: string; clientHost: string; now: number },
): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM cli_logins WHERE created_at < ?").bind(login.now - PURGE_AFTER_MS),
    db
      .prepare(
        "INSERT INTO cli_logins (code_hash, poll_hash, client_host, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
      )
      .bind(login.codeHash, login.pollHash, login.clientHost, login.now, login.now + CLI_LOGIN_CODE_LIFETIME_MS),
  ]);
}

export type OpenedCliLogin = { ok: true; login: CliLoginRow } | { ok: false; reason: "unknown" | "expired" | "used" };

/** Opens the login whose code hashes to `codeHash`: once, before the code expires. */
export async function openCliLogin(db: D1Database, codeHash: string, now: number): Promise<OpenedCliLogin> {
  const opened = await db
    .prepare(
      `UPDATE cli_logins SET opened_at = ? WHERE code_hash = ? AND opened_at IS NULL AND expires_at > ? RETURNING ${COLUMNS}`,
    )
    .bind(now, codeHash, now)
    .first<CliLoginRow>();
  if (opened) return { ok: true, login: opened };
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM cli_logins WHERE code_hash = ?`)
    .bind(codeHash)
    .first<CliLoginRow>();
  if (!row) return { ok: false, reason: "unknown" };
  return { ok: false, reason: row.opened_at !== null ? "used" : "expired" };
}

/** Records the person's answer for an opened login, once, within the flow's lifetime. */
export async function decideCliLogin(
  db: D1Database,
  id: number,
  decision: { approvedEmail: string } | { denied: true },
  now: number,
): Promise<boolean> {
  const [set, value] = "denied" in decision ? ["denied_at", now] : ["approved_email", decision.approvedEmail];
  const row = await db
    .prepare(
      `UPDATE cli_logins SET ${set} = ? WHERE id = ? AND opened_at IS NOT NULL AND opened_at > ? AND approved_email IS NULL AND denied_at IS NULL RETURNING id`,
    )
    .bind(value, id, now - CLI_LOGIN_FLOW_MS)
    .first<{ id: number }>();
  return row !== null;
}

export type CliLoginPoll =
  | { state: "pending" }
  | { state: "approved"; email: string }
  | { state: "unknown" | "expired" | "denied" | "redeemed" };

/**
 * What the CLI holding `pollHash` may learn: still pending, refused, dead, or
 * approved, the last only once (the caller then issues the CLI token).
 */
export async function pollCliLogin(db: D1Database, pollHash: string, now: number): Promise<CliLoginPoll> {
  const redeemed = await db
    .prepare(
      "UPDATE cli_logins SET redeemed_at = ? WHERE poll_hash = ? AND approved_email IS NOT NULL AND redeemed_at IS NULL AND opened_at > ? RETURNING approved_email",
    )
    .bind(now, pollHash, now - CLI_LOGIN_FLOW_MS)
    .first<{ approved_email: string }>();
  if (redeemed) return { state: "approved", email: redeemed.approved_email };
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM cli_logins WHERE poll_hash = ?`)
    .bind(pollHash)
    .first<CliLoginRow>();
  if (!row) return { state: "unknown" };
  if (row.redeemed_at !== null) return { state: "redeemed" };
  if (row.denied_at !== null) return { state: "denied" };
  const deadline = row.opened_at === null ? row.expires_at : row.opened_at + CLI_LOGIN_FLOW_MS;
  return deadline <= now ? { state: "expired" } : { state: "pending" };
}

/** A login code as the API issues it: 32 random bytes, hex. */
export const CLI_LOGIN_CODE = /^[0-9a-f]{64}$/;

/**
 * What the CLI prints and the approval page shows, so the person can see the
 * page belongs to the `platform login` they started (`3F2A-9C1D`).
 */
export function cliLoginVerification(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4, 8)}`.toUpperCase();
}
