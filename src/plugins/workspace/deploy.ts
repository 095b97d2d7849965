/**
 * `POST /deploy` (identity token): the project's workspace metadata, either
 * `{ events }` or the whole `{ plugins: { workspace: { events } } }`, sent by
 * `platform push` / `platform dev`. The event names are recorded on the
 * project's workspace (resource metadata `events`), and /webhook then
 * deliveries only those; before the first deploy every event is delivered.
 */
import { PlatformError } from "../../core/errors.ts";
import { WORKSPACE_EVENT_KINDS, type WorkspaceEventKind } from "../../contracts/workspaceEvents.ts";
import { recordResourceEvents } from "../../workers/db/resourceClaims.ts";
import { readDeployMetadata } from "../kit/deployMetadata.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type WorkspaceEnv } from "./env.ts";

export function parseEvents(value: unknown): WorkspaceEventKind[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new PlatformError("invalid_input", "events must be an array of event names.");
  const out = new Set<WorkspaceEventKind>();
  value.forEach((name, i) => {
    if (!(WORKSPACE_EVENT_KINDS as readonly unknown[]).includes(name)) {
      throw new PlatformError(
        "invalid_input",
        `events[${i}]: unknown event ${JSON.stringify(name)}; use ${WORKSPACE_EVENT_KINDS.join(", ")}.`,
      );
    }
    out.add(name as WorkspaceEventKind);
  });
  return [...out];
}

export async function handleDeploy(request: Request, env: WorkspaceEnv): Promise<Response> {
  const { project, metadata } = await readDeployMetadata(request, env, PLUGIN_ID);
  const events = parseEvents(metadata.events);
  const workspaces = await recordResourceEvents(
    env.DB,
    { pluginId: PLUGIN_ID, resourceType: RESOURCE_TYPE, projectId: project.id },
    events,
  );
  return Response.json({ events, workspaces });
}
