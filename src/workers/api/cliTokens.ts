import { hex, randomBase64url } from "../../core/crypto/encoding.ts";
import { timingSafeEqual } from "../../core/crypto/signed.ts";
import { PlatformError } from "../../core/errors.ts";
import { findCliTokenUser } from "../db/cliTokensTable.ts";
import type { UserRow } from "../db/usersTable.ts";

/** CLI tokens are `plt_` + 32 random bytes (base64url); only their SHA-256 is stored. */
export function generateCliToken(): string {
  return "plt_" + randomBase64url(32);
}

export async function hashCliToken(token: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return hex(digest);
}

export type CliUser = UserRow;

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
  const row = await findCliTokenUser(db, await hashCliToken(token));
  if (!row) throw new PlatformError("unauthorized", "Invalid CLI token.");
  if (row.expires_at !== null && row.expires_at <= now) throw new PlatformError("unauthorized", "CLI token expired.");
  return { id: row.id, email: row.email };
}

/** Constant-time comparison of the admin bearer token against the configured secret. */
export async function isAdminRequest(request: Request, adminToken: string | undefined): Promise<boolean> {
  const token = bearerToken(request);
  if (!adminToken || !token) return false;
  const [a, b] = await Promise.all([hashCliToken(token), hashCliToken(adminToken)]);
  return timingSafeEqual(a, b);
}
