/**
 * `POST /uninstall` of an OAuth plugin (identity token, as `/deploy`; the API
 * worker calls it for `platform plugin uninstall`): undoes the install at the
 * provider first (the plugin's own steps: revoke the token where the provider
 * has a revocation endpoint, remove the bot's commands), then deletes the
 * connection and releases every resource the project claimed, so another
 * project can install into them. Answers what it did; a provider step that
 * fails is reported, not fatal (the project must always be able to let go).
 */
import { PlatformError } from "../../core/errors.ts";
import { deleteConnection } from "../../workers/db/connectionsStore.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import {
  listProjectResources,
  releaseProjectResources,
  toResourceSummary,
  type ResourceRow,
  type ResourceSummary,
} from "../../workers/db/resourceClaims.ts";
import { authenticateProjectCall } from "./authenticateProjectCall.ts";
import type { PluginEnv } from "./pluginEnv.ts";

export interface UninstallReport {
  plugin: string;
  /** One sentence per provider step (token revoked, commands removed, or why not). */
  atProvider: string[];
  connectionDeleted: boolean;
  released: ResourceSummary[];
}

/** The provider's part: each step answers a sentence saying what it did, and throws only for a bug. */
export type ProviderUninstall<Env> = (env: Env, project: ProjectRow, resources: ResourceRow[]) => Promise<string[]>;

export function uninstallPlugin<Env extends PluginEnv>(pluginId: string, atProvider: ProviderUninstall<Env>) {
  return async (request: Request, env: Env): Promise<Response> => {
    const { project } = await authenticateProjectCall(request, env.DB);
    const resources = await listProjectResources(env.DB, project.id, pluginId);
    const provider = await atProvider(env, project, resources);
    const connectionDeleted = await deleteConnection(env.DB, pluginId, project.id);
    const released = await releaseProjectResources(env.DB, pluginId, project.id);
    if (!connectionDeleted && !released.length) {
      throw new PlatformError("not_found", `The ${pluginId} plugin is not installed in project ${project.slug}.`);
    }
    const report: UninstallReport = {
      plugin: pluginId,
      atProvider: provider,
      connectionDeleted,
      released: released.map(toResourceSummary),
    };
    return Response.json(report);
  };
}
