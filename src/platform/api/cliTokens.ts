import { PlatformError } from "../../core/errors.ts";

/** CLI tokens are `plt_` + 32 random bytes (base64url); only their SHA-256 is stored. */
export function generateCliToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return "plt_" + btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export async function hashCliToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export interface CliUser {
  id: number;
  email: string;
}

function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match ? match[1]! : null;
}

/** Resolves the CLI user behind `Authorization: Bearer plt_…`, or throws `unauthorized`. */
export async function authenticateCliUser(request: Request, db: D1Database, now = Date.now()): Promise<CliUser> {
  const token = bearerToken(request);
  if (!token) throw new PlatformError("unauthorized", "Missing CLI token: send Authorization: Bearer <token>.");
  if (!/^plt_[A-Za-z0-9_-]{43}$/.test(token)) throw new PlatformError("unauthorized", "Invalid CLI token.");
  const row = await db
    .prepare(
      "SELECT users.id AS id, users.email AS email, cli_tokens.expires_at AS expires_at FROM cli_tokens JOIN users ON users.id = cli_tokens.user_id WHERE cli_tokens.token_hash = ?",
    )
    .bind(await hashCliToken(token))
    .first<{ id: number; email: string; expires_at: number | null }>();
  if (!row) throw new PlatformError("unauthorized", "Invalid CLI token.");
  if (row.expires_at !== null && row.expires_at <= now) throw new PlatformError("unauthorized", "CLI token expired.");
  return { id: row.id, email: row.email };
}

/** Constant-time comparison of the admin bearer token against the configured secret. */
export async function isAdminRequest(request: Request, adminToken: string | undefined): Promise<boolean> {
  const token = bearerToken(request);
  if (!adminToken || !token) return false;
  const [a, b] = await Promise.all([hashCliToken(token), hashCliToken(adminToken)]);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
