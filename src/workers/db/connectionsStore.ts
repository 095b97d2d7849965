import type { ProjectPluginKey } from "./projectPluginKey.ts";
import { type PluginProblemSummary, pluginProblemsByPlugin } from "./pluginProblems.ts";
import { changedRows } from "./statementResults.ts";
import { openToken, sealToken } from "./tokenVault.ts";

/**
 * `plugin_oauth_connections`: one connection per plugin per project (unique
 * constraint). A reinstall replaces the row (and clears `revoked_at`); tokens
 * are stored sealed by the token vault and only opened inside the plugin.
 */
export interface NewConnection {
  pluginId: string;
  projectId: number;
  externalUserId: string;
  accessToken: string;
  refreshToken?: string | null;
  /** ms since the epoch, or null for tokens that do not expire. */
  tokenExpiresAt?: number | null;
}

export interface Connection {
  pluginId: string;
  projectId: number;
  externalUserId: string;
  accessToken: string;
  refreshToken: string | null;
  tokenExpiresAt: number | null;
  connectedAt: number;
  updatedAt: number;
  revokedAt: number | null;
}

/**
 * A connection's health: `revoked` once the provider said the app is gone
 * (uninstall, tokens revoked), `needs_reconnect` while its last call was
 * refused for the token (cleared by a successful call or a reinstall),
 * `degraded` while the plugin as a whole has a problem no reinstall fixes
 * (pluginProblems.ts: the shared chat-server bot's Gateway session refused),
 * shown on every connection of that plugin.
 */
export type ConnectionStatus = "active" | "degraded" | "needs_reconnect" | "revoked";

/** What the API and the CLI may see of a connection: never a token. */
export interface ConnectionSummary {
  plugin: string;
  externalUserId: string;
  connectedAt: string;
  tokenExpiresAt: string | null;
  status: ConnectionStatus;
  revoked: boolean;
  revokedAt: string | null;
  /** The provider's last refusal (e.g. `token_revoked`, `401 Unauthorized`) and when. */
  lastError: string | null;
  lastErrorAt: string | null;
  /** The plugin's own problem (cause, fix, since), shown on every connection of it; null when none. */
  problem: PluginProblemSummary | null;
}

interface ConnectionRow {
  plugin_id: string;
  project_id: number;
  external_user_id: string;
  access_token: string;
  refresh_token: string | null;
  token_expires_at: number | null;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

const context = (pluginId: string, projectId: number, field: "access" | "refresh") =>
  `${pluginId}:${field}:${projectId}`;

export async function upsertConnection(
  db: D1Database,
  vaultSecret: string | undefined,
  c: NewConnection,
  now = Date.now(),
): Promise<void> {
  const access = await sealToken(vaultSecret, c.accessToken, context(c.pluginId, c.projectId, "access"));
  const refresh = c.refreshToken
    ? await sealToken(vaultSecret, c.refreshToken, context(c.pluginId, c.projectId, "refresh"))
    : null;
  await db
    .prepare(
      `INSERT INTO plugin_oauth_connections
         (plugin_id, project_id, external_user_id, access_token, refresh_token, token_expires_at, created_at, updated_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)
       ON CONFLICT (plugin_id, project_id) DO UPDATE SET
         external_user_id = excluded.external_user_id, access_token = excluded.access_token,
         refresh_token = excluded.refresh_token, token_expires_at = excluded.token_expires_at,
         created_at = excluded.created_at, updated_at = excluded.updated_at, revoked_at = NULL,
         last_error = NULL, last_error_at = NULL`,
    )
    .bind(c.pluginId, c.projectId, c.externalUserId, access, refresh, c.tokenExpiresAt ?? null, now, now)
    .run();
}

/** A connection's new tokens, as a refresh answered them. */
export type RefreshedTokens = ProjectPluginKey & Pick<NewConnection, "accessToken" | "refreshToken" | "tokenExpiresAt">;

/** Stores refreshed tokens on an existing connection. */
export async function updateConnectionTokens(
  db: D1Database,
  vaultSecret: string | undefined,
  { pluginId, projectId, ...tokens }: RefreshedTokens,
  now = Date.now(),
): Promise<void> {
  const access = await sealToken(vaultSecret, tokens.accessToken, context(pluginId, projectId, "access"));
  const refresh = tokens.refreshToken
    ? await sealToken(vaultSecret, tokens.refreshToken, context(pluginId, projectId, "refresh"))
    : null;
  await db
    .prepare(
      "UPDATE plugin_oauth_connections SET access_token = ?, refresh_token = ?, token_expires_at = ?, updated_at = ? WHERE plugin_id = ? AND project_id = ?",
    )
    .bind(access, refresh, tokens.tokenExpiresAt ?? null, now, pluginId, projectId)
    .run();
}

/** Marks a project's connection revoked (kept for the record); true when a row changed. */
export async function markConnectionRevoked(
  db: D1Database,
  pluginId: string,
  projectId: number,
  now = Date.now(),
): Promise<boolean> {
  return (await revokeConnections(db, pluginId, "project_id", projectId, now)) > 0;
}

/** Marks every connection of a provider user/team revoked (e.g. Slack `tokens_revoked`); returns how many. */
export function markConnectionsRevokedForExternalUser(
  db: D1Database,
  pluginId: string,
  externalUserId: string,
  now = Date.now(),
): Promise<number> {
  return revokeConnections(db, pluginId, "external_user_id", externalUserId, now);
}

/** Revokes the plugin's live connections whose `column` is `value`; returns how many. */
function revokeConnections(
  db: D1Database,
  pluginId: string,
  column: "project_id" | "external_user_id",
  value: number | string,
  now: number,
): Promise<number> {
  return changedRows(
    db
      .prepare(
        `UPDATE plugin_oauth_connections SET revoked_at = ?, updated_at = ? WHERE plugin_id = ? AND ${column} = ? AND revoked_at IS NULL`,
      )
      .bind(now, now, pluginId, value),
  );
}

/** Records the provider's refusal of the connection's token: the connection needs reconnecting. */
export async function markConnectionNeedsReconnect(
  db: D1Database,
  { pluginId, projectId }: ProjectPluginKey,
  providerError: string,
  now = Date.now(),
): Promise<void> {
  await db
    .prepare(
      "UPDATE plugin_oauth_connections SET last_error = ?, last_error_at = ? WHERE plugin_id = ? AND project_id = ? AND revoked_at IS NULL",
    )
    .bind(providerError.slice(0, 500), now, pluginId, projectId)
    .run();
}

/** A call the provider accepted: the connection is healthy again (writes only when it was not). */
export async function clearConnectionError(db: D1Database, pluginId: string, projectId: number): Promise<void> {
  await db
    .prepare(
      "UPDATE plugin_oauth_connections SET last_error = NULL, last_error_at = NULL WHERE plugin_id = ? AND project_id = ? AND last_error IS NOT NULL",
    )
    .bind(pluginId, projectId)
    .run();
}

/** Deletes a project's connection (uninstall); true when there was one. */
export async function deleteConnection(db: D1Database, pluginId: string, projectId: number): Promise<boolean> {
  const deleted = await changedRows(
    db.prepare("DELETE FROM plugin_oauth_connections WHERE plugin_id = ? AND project_id = ?").bind(pluginId, projectId),
  );
  return deleted > 0;
}

/** Marks a rotating token expired so its next use refreshes it; false when there is nothing to refresh with. */
export async function expireConnectionToken(db: D1Database, pluginId: string, projectId: number): Promise<boolean> {
  const changed = await changedRows(
    db
      .prepare(
        "UPDATE plugin_oauth_connections SET token_expires_at = 0 WHERE plugin_id = ? AND project_id = ? AND refresh_token IS NOT NULL AND revoked_at IS NULL",
      )
      .bind(pluginId, projectId),
  );
  return changed > 0;
}

/** The connection with its tokens opened, or null. A revoked one is returned too (check `revokedAt`). */
export async function readConnection(
  db: D1Database,
  vaultSecret: string | undefined,
  pluginId: string,
  projectId: number,
): Promise<Connection | null> {
  const row = await db
    .prepare("SELECT * FROM plugin_oauth_connections WHERE plugin_id = ? AND project_id = ?")
    .bind(pluginId, projectId)
    .first<ConnectionRow>();
  if (!row) return null;
  return {
    pluginId: row.plugin_id,
    projectId: row.project_id,
    externalUserId: row.external_user_id,
    accessToken: await openToken(vaultSecret, row.access_token, context(pluginId, projectId, "access")),
    refreshToken: row.refresh_token
      ? await openToken(vaultSecret, row.refresh_token, context(pluginId, projectId, "refresh"))
      : null,
    tokenExpiresAt: row.token_expires_at,
    connectedAt: row.created_at,
    updatedAt: row.updated_at,
    revokedAt: row.revoked_at,
  };
}

export async function listConnectionSummaries(db: D1Database, projectId: number): Promise<ConnectionSummary[]> {
  const [{ results }, problems] = await Promise.all([
    db
      .prepare(
        "SELECT plugin_id, external_user_id, created_at, token_expires_at, revoked_at, last_error, last_error_at FROM plugin_oauth_connections WHERE project_id = ? ORDER BY plugin_id",
      )
      .bind(projectId)
      .all<Omit<ConnectionRow, "project_id" | "access_token" | "refresh_token" | "updated_at">>(),
    pluginProblemsByPlugin(db),
  ]);
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return results.map((r) => {
    const problem = problems.get(r.plugin_id) ?? null;
    return {
      plugin: r.plugin_id,
      externalUserId: r.external_user_id,
      connectedAt: new Date(r.created_at).toISOString(),
      tokenExpiresAt: iso(r.token_expires_at),
      status:
        r.revoked_at !== null ? "revoked" : r.last_error !== null ? "needs_reconnect" : problem ? "degraded" : "active",
      revoked: r.revoked_at !== null,
      revokedAt: iso(r.revoked_at),
      lastError: r.last_error,
      lastErrorAt: iso(r.last_error_at),
      problem,
    };
  });
}
