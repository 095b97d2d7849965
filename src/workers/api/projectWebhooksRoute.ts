import { listProjectWebhooks } from "../db/projectWebhooksTable.ts";
import type { ApiEnv } from "./env.ts";
import { projectUrlOf } from "./projectUrl.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

/**
 * `GET /projects/:slug/webhooks`: the project's verified webhook endpoints as
 * its last push (or `platform dev`) recorded them, each with the URL a
 * provider posts to (`platform webhook list`).
 */
export async function listProjectWebhookEndpoints(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const origin = projectUrlOf(env, project).replace(/\/$/, "");
  const webhooks = await listProjectWebhooks(env.DB, project.id);
  return Response.json({
    webhooks: webhooks.map((w) => ({ ...w, url: `${origin}/__platform/webhooks/${w.name}` })),
  });
}
