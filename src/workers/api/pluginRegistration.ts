import { PLUGINS, type PluginId } from "../../contracts/pluginRegistry.ts";
import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import type { ProjectRow } from "../db/projectsTable.ts";
import type { ApiEnv } from "./env.ts";

export type PluginRegistration = Partial<Record<PluginId, "registered" | "unregistered" | "not bound" | string>>;

/** The plugins a build's metadata says the project uses (an entry under `plugins`, e.g. its commands or events). */
export function pluginsUsedBy(metadata: Record<string, unknown> | null): Set<string> {
  const plugins = metadata?.plugins;
  if (typeof plugins !== "object" || plugins === null || Array.isArray(plugins)) return new Set();
  return new Set(Object.keys(plugins));
}

/**
 * After a deploy, hands the project's plugin handlers (metadata `plugins`) to
 * `POST /deploy` of each plugin whose descriptor asks for them (through the
 * binding it names), as the project itself would: with an identity token
 * signed by its worker secret, which only the API worker holds. Only the
 * plugins the project uses are called, and those its previous deployment
 * used (`usedBefore`), which learn that it has no handlers for them any
 * more ("unregistered"); the others are neither called nor reported. The
 * chat-server plugin then registers the project's commands on every server
 * it claimed. A plugin that refuses is reported, not fatal: the bundle is
 * already live.
 */
export async function registerWithPlugins(
  env: ApiEnv,
  project: ProjectRow,
  metadata: Record<string, unknown>,
  usedBefore: ReadonlySet<string> = new Set(),
): Promise<PluginRegistration> {
  const used = pluginsUsedBy(metadata);
  const body = JSON.stringify({ plugins: (metadata.plugins as Record<string, unknown> | undefined) ?? {} });
  const entries = await Promise.all(
    PLUGINS.filter((plugin) => plugin.deploy && (used.has(plugin.id) || usedBefore.has(plugin.id))).map(
      async ({ id: pluginId, binding }) => {
        const plugin = env[binding];
        if (!plugin) return [pluginId, "not bound"] as const;
        const token = await signRequestToken(
          "identity",
          { method: "POST", pathAndQuery: "/deploy", body },
          { projectId: project.id, secret: project.worker_secret },
        );
        try {
          const response = await plugin.fetch("https://plugin.internal/deploy", {
            method: "POST",
            headers: { "content-type": "application/json", [IDENTITY_HEADER]: token },
            body,
          });
          if (response.ok) return [pluginId, used.has(pluginId) ? "registered" : "unregistered"] as const;
          return [pluginId, `refused (${response.status}): ${(await response.text()).slice(0, 200)}`] as const;
        } catch (error) {
          return [pluginId, `unreachable: ${String(error)}`] as const;
        }
      },
    ),
  );
  return Object.fromEntries(entries) as PluginRegistration;
}
