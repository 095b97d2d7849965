import type { ProjectPluginKey } from "./projectPluginKey.ts";

/**
 * `plugin_deployed_manifests`: each project's last deployed metadata for a
 * plugin (the chat-server plugin's commands), so work that happens after the
 * deploy (a server installed later) can act on it at once.
 */
export async function storeDeployedManifest(
  db: D1Database,
  { pluginId, projectId }: ProjectPluginKey,
  manifest: Record<string, unknown>,
  now = Date.now(),
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO plugin_deployed_manifests (plugin_id, project_id, manifest, deployed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (plugin_id, project_id) DO UPDATE SET manifest = excluded.manifest, deployed_at = excluded.deployed_at`,
    )
    .bind(pluginId, projectId, JSON.stringify(manifest), now)
    .run();
}

/** The project's last deployed manifest for the plugin, or null before its first deploy. */
export async function readDeployedManifest(
  db: D1Database,
  pluginId: string,
  projectId: number,
): Promise<Record<string, unknown> | null> {
  const text = await db
    .prepare("SELECT manifest FROM plugin_deployed_manifests WHERE plugin_id = ? AND project_id = ?")
    .bind(pluginId, projectId)
    .first<string>("manifest");
  return text === null ? null : (JSON.parse(text) as Record<string, unknown>);
}
