import { toPluginProject, type PluginDelivery, type PluginUser } from "../../contracts/pluginDelivery.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { makeResourceOwnerRef } from "../kit/resourceOwnerRef.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** A chat-server user as deliveries name them: the id and the display name when there is one. */
export function userOf(raw: Record<string, unknown>): PluginUser {
  const name = str(raw.global_name) ?? str(raw.username);
  return { id: String(raw.id), ...(name ? { name } : {}) };
}

/** Who a delivery is for and from: the server's opaque reference, the project's plugin-safe view, the user if known. */
export async function addressedTo(
  env: ChatServerEnv,
  project: ProjectRow,
  guildId: string,
  user: PluginUser | undefined,
): Promise<Pick<PluginDelivery, "resource" | "project" | "user">> {
  return {
    resource: await makeResourceOwnerRef(env, {
      pluginId: PLUGIN_ID,
      resourceType: RESOURCE_TYPE,
      externalResourceId: guildId,
    }),
    project: toPluginProject(project),
    ...(user ? { user } : {}),
  };
}
