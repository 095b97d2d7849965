import type { ResourceType } from "../../contracts/pluginRegistry.ts";
import { PlatformError } from "../../core/errors.ts";
import { findProjectById, type ProjectRow } from "./projectsTable.ts";
import { allRows, changedRows } from "./statementResults.ts";

export type { ResourceType };

/**
 * `plugin_resources`: one external resource (a chat server, a workspace: the
 * `resourceType` of each installable plugin's descriptor) belongs to at most
 * one project. The unique constraint decides, so two racing installs cannot
 * both win.
 */

export interface ResourceClaim {
  pluginId: string;
  resourceType: ResourceType;
  projectId: number;
  externalResourceId: string;
  displayName: string;
  /** Stored as JSON. Seal secrets (e.g. a per-workspace bot token) with the token vault first. */
  metadata?: Record<string, unknown>;
}

export interface ResourceRow {
  id: number;
  plugin_id: string;
  resource_type: ResourceType;
  project_id: number;
  external_resource_id: string;
  display_name: string;
  metadata: string;
  created_at: number;
}

export interface ResourceSummary {
  plugin: string;
  type: string;
  externalId: string;
  displayName: string;
  claimedAt: string;
  /** The commands registered in it (chat servers, after a deploy or an install). */
  commands?: string[];
}

/** A project's resources of one type through one plugin. */
export type ProjectResources = Pick<ResourceClaim, "pluginId" | "resourceType" | "projectId">;

/** One resource a project claimed. */
export type ClaimedResource = ProjectResources & Pick<ResourceClaim, "externalResourceId">;

export const ALREADY_CONNECTED_MESSAGE = "This resource is already connected to another project.";

/**
 * Claims a resource for a project. The same project's re-claim succeeds (and
 * refreshes the display name and metadata); another project's resource throws
 * `conflict` (409) and changes nothing.
 */
export async function claimResource(db: D1Database, claim: ResourceClaim, now = Date.now()): Promise<void> {
  const row = await db
    .prepare(
      `INSERT INTO plugin_resources (plugin_id, resource_type, project_id, external_resource_id, display_name, metadata, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (plugin_id, resource_type, external_resource_id) DO UPDATE SET
         display_name = excluded.display_name, metadata = excluded.metadata
       WHERE plugin_resources.project_id = excluded.project_id
       RETURNING project_id`,
    )
    .bind(
      claim.pluginId,
      claim.resourceType,
      claim.projectId,
      claim.externalResourceId,
      claim.displayName,
      JSON.stringify(claim.metadata ?? {}),
      now,
    )
    .first<{ project_id: number }>();
  if (!row) {
    throw new PlatformError("conflict", ALREADY_CONNECTED_MESSAGE, {
      plugin: claim.pluginId,
      resourceType: claim.resourceType,
      externalResourceId: claim.externalResourceId,
    });
  }
}

/** Gives a project's resource up (uninstall); true when it held it. */
export async function releaseResource(
  db: D1Database,
  { pluginId, resourceType, externalResourceId, projectId }: ClaimedResource,
): Promise<boolean> {
  const released = await changedRows(
    db
      .prepare(
        "DELETE FROM plugin_resources WHERE plugin_id = ? AND resource_type = ? AND external_resource_id = ? AND project_id = ?",
      )
      .bind(pluginId, resourceType, externalResourceId, projectId),
  );
  return released > 0;
}

/** Gives up every resource a project claimed through a plugin (uninstall); returns the rows released. */
export function releaseProjectResources(db: D1Database, pluginId: string, projectId: number): Promise<ResourceRow[]> {
  return allRows<ResourceRow>(
    db,
    "DELETE FROM plugin_resources WHERE plugin_id = ? AND project_id = ? RETURNING *",
    pluginId,
    projectId,
  );
}

/** Which project (and its worker) owns an external resource: how a webhook finds where to delivery. */
export async function findResourceOwner(
  db: D1Database,
  pluginId: string,
  resourceType: ResourceType,
  externalResourceId: string,
): Promise<{ resource: ResourceRow; project: ProjectRow } | null> {
  const resource = await db
    .prepare("SELECT * FROM plugin_resources WHERE plugin_id = ? AND resource_type = ? AND external_resource_id = ?")
    .bind(pluginId, resourceType, externalResourceId)
    .first<ResourceRow>();
  if (!resource) return null;
  const project = await findProjectById(db, resource.project_id);
  return project ? { resource, project } : null;
}

export function listProjectResources(db: D1Database, projectId: number, pluginId?: string): Promise<ResourceRow[]> {
  return pluginId
    ? allRows<ResourceRow>(
        db,
        "SELECT * FROM plugin_resources WHERE project_id = ? AND plugin_id = ? ORDER BY id",
        projectId,
        pluginId,
      )
    : allRows<ResourceRow>(db, "SELECT * FROM plugin_resources WHERE project_id = ? ORDER BY plugin_id, id", projectId);
}

/** The project's most recent resource of a type (a plugin with one resource per project). */
export function findProjectResource(
  db: D1Database,
  pluginId: string,
  resourceType: ResourceType,
  projectId: number,
): Promise<ResourceRow | null> {
  return db
    .prepare(
      "SELECT * FROM plugin_resources WHERE plugin_id = ? AND resource_type = ? AND project_id = ? ORDER BY id DESC LIMIT 1",
    )
    .bind(pluginId, resourceType, projectId)
    .first<ResourceRow>();
}

/** Gives up the project's other resources of a type (a plugin with one resource per project, after a reinstall elsewhere). */
export async function releaseOtherResources(
  db: D1Database,
  { pluginId, resourceType, projectId }: ProjectResources,
  keptExternalResourceId: string,
): Promise<void> {
  await db
    .prepare(
      "DELETE FROM plugin_resources WHERE plugin_id = ? AND resource_type = ? AND project_id = ? AND external_resource_id <> ?",
    )
    .bind(pluginId, resourceType, projectId, keptExternalResourceId)
    .run();
}

/** Replaces a resource's metadata (only the owning project's row). */
export async function replaceResourceMetadata(
  db: D1Database,
  resourceId: number,
  projectId: number,
  metadata: Record<string, unknown>,
): Promise<void> {
  await db
    .prepare("UPDATE plugin_resources SET metadata = ? WHERE id = ? AND project_id = ?")
    .bind(JSON.stringify(metadata), resourceId, projectId)
    .run();
}

/**
 * Records the event names a project listens to (`metadata.events`) on its
 * resources of a type; returns how many. `json_set` touches only `events`, so
 * a concurrent write of other keys (a token refresh) is not disturbed.
 */
export function recordResourceEvents(
  db: D1Database,
  { pluginId, resourceType, projectId }: ProjectResources,
  events: readonly string[],
): Promise<number> {
  return changedRows(
    db
      .prepare(
        "UPDATE plugin_resources SET metadata = json_set(metadata, '$.events', json(?)) WHERE plugin_id = ? AND resource_type = ? AND project_id = ?",
      )
      .bind(JSON.stringify(events), pluginId, resourceType, projectId),
  );
}

export function toResourceSummary(row: ResourceRow): ResourceSummary {
  let commands: unknown;
  try {
    commands = (JSON.parse(row.metadata) as { commands?: unknown }).commands;
  } catch {
    commands = undefined;
  }
  return {
    plugin: row.plugin_id,
    type: row.resource_type,
    externalId: row.external_resource_id,
    displayName: row.display_name,
    claimedAt: new Date(row.created_at).toISOString(),
    ...(Array.isArray(commands) ? { commands: commands.filter((c): c is string => typeof c === "string") } : {}),
  };
}
