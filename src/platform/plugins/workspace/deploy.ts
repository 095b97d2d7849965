/**
 * `POST /deploy` (identity token): the project's workspace metadata, either
 * `{ events }` or the whole `{ plugins: { workspace: { events } } }`, sent by
 * `platform push` / `platform dev`. The event names are recorded on the
 * project's workspace (resource metadata `events`), and /webhook then
 * dispatches only those; before the first deploy every event is dispatched.
 */
import { PlatformError } from "../../../core/errors.ts";
import { parseJsonObject } from "../../../core/web/jsonBody.ts";
import { authenticateProjectCall } from "../shared/index.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type WorkspaceEnv } from "./env.ts";
import type { WorkspaceEventName } from "./webhook.ts";

export const EVENT_NAMES: readonly WorkspaceEventName[] = ["message", "mention", "reaction"];

export function parseEvents(value: unknown): WorkspaceEventName[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new PlatformError("invalid_input", "events must be an array of event names.");
  const out = new Set<WorkspaceEventName>();
  value.forEach((name, i) => {
    if (!(EVENT_NAMES as readonly unknown[]).includes(name)) {
      throw new PlatformError("invalid_input", `events[${i}]: unknown event ${JSON.stringify(name)}; use ${EVENT_NAMES.join(", ")}.`);
    }
    out.add(name as WorkspaceEventName);
  });
  return [...out];
}

export async function handleDeploy(request: Request, env: WorkspaceEnv): Promise<Response> {
  const { project, body } = await authenticateProjectCall(request, env.DB);
  const input = parseJsonObject(body);
  const plugins = input.plugins as { workspace?: unknown } | undefined;
  const meta = (plugins && typeof plugins === "object" ? plugins.workspace ?? {} : input) as { events?: unknown };
  const events = parseEvents(meta.events);
  // json_set touches only `events`: a token refresh running at the same time is not disturbed.
  const result = await env.DB.prepare(
    "UPDATE plugin_resources SET metadata = json_set(metadata, '$.events', json(?)) WHERE plugin_id = ? AND resource_type = ? AND project_id = ?",
  )
    .bind(JSON.stringify(events), PLUGIN_ID, RESOURCE_TYPE, project.id)
    .run();
  return Response.json({ events, workspaces: result.meta.changes ?? 0 });
}
