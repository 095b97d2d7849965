import { importKey } from "../../core/crypto/keys.ts";
import { openSealed, seal } from "../../core/crypto/sealed.ts";
import { PlatformError } from "../../core/errors.ts";
import { decode32ByteKey } from "./tokenVault.ts";

/**
 * `project_secrets`: a project's secrets, sealed as the token vault seals
 * plugin tokens (core/crypto/sealed.ts, AES-256-GCM with a fresh IV) but
 * under a key of the API worker's own, `SECRETS_ENCRYPTION_KEY`, with the
 * project id and the secret's name bound as additional data. Values leave
 * this module only for an upload of the project's worker (`openProjectSecrets`).
 */

export interface SecretSummary {
  name: string;
  /** Epoch ms of the last put. */
  updatedAt: number;
}

const secretsKey = (key: string | undefined) =>
  importKey(decode32ByteKey(key, "SECRETS_ENCRYPTION_KEY"), "AES-GCM-256");

const context = (projectId: number, name: string) => `project-secret:${projectId}:${name}`;

/** One secret of one project, as put. */
export interface ProjectSecret {
  projectId: number;
  name: string;
  value: string;
}

/** Writes (or replaces) one secret; answers whether it is new. */
export async function putProjectSecret(
  db: D1Database,
  key: string | undefined,
  { projectId, name, value }: ProjectSecret,
  now: number,
): Promise<{ created: boolean }> {
  const sealed = await seal(await secretsKey(key), value, context(projectId, name));
  const existed = await db
    .prepare("SELECT 1 FROM project_secrets WHERE project_id = ? AND name = ?")
    .bind(projectId, name)
    .first();
  await db
    .prepare(
      "INSERT INTO project_secrets (project_id, name, sealed_value, updated_at) VALUES (?, ?, ?, ?) " +
        "ON CONFLICT (project_id, name) DO UPDATE SET sealed_value = excluded.sealed_value, updated_at = excluded.updated_at",
    )
    .bind(projectId, name, sealed, now)
    .run();
  return { created: existed === null };
}

/** Names and times only, in name order. */
export async function listProjectSecrets(db: D1Database, projectId: number): Promise<SecretSummary[]> {
  const { results } = await db
    .prepare("SELECT name, updated_at FROM project_secrets WHERE project_id = ? ORDER BY name")
    .bind(projectId)
    .all<{ name: string; updated_at: number }>();
  return results.map((row) => ({ name: row.name, updatedAt: row.updated_at }));
}

/** Answers whether there was such a secret. */
export async function deleteProjectSecret(db: D1Database, projectId: number, name: string): Promise<boolean> {
  const result = await db
    .prepare("DELETE FROM project_secrets WHERE project_id = ? AND name = ?")
    .bind(projectId, name)
    .run();
  return result.meta.changes > 0;
}

/** Every secret of a project, opened: for the upload of its worker, and nothing else. */
export async function openProjectSecrets(
  db: D1Database,
  key: string | undefined,
  projectId: number,
): Promise<Record<string, string>> {
  const { results } = await db
    .prepare("SELECT name, sealed_value FROM project_secrets WHERE project_id = ? ORDER BY name")
    .bind(projectId)
    .all<{ name: string; sealed_value: string }>();
  if (results.length === 0) return {};
  const cryptoKey = await secretsKey(key);
  const opened: Record<string, string> = {};
  for (const row of results) {
    const value = await openSealed(cryptoKey, row.sealed_value, context(projectId, row.name));
    if (value === null)
      throw new PlatformError(
        "internal",
        `The secret ${row.name} could not be opened (wrong SECRETS_ENCRYPTION_KEY or altered data); put it again.`,
      );
    opened[row.name] = value;
  }
  return opened;
}
