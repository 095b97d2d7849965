import { listProjectWebhooks } from "../db/projectWebhooksTable.ts";
import type { ApiEnv } from "./env.ts";
import { MAX_LOG_READ } from "./projectLogs/ProjectLog.ts";
import { projectLogOf } from "./projectLogs/projectLogRoutes.ts";
import { projectUrlOf } from "./projectUrl.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import { webhookDeliveriesByEndpoint } from "./webhookDeliveriesByEndpoint.ts";
import type { CliRequest } from "./withCliUser.ts";

/**
 * `GET /projects/:slug/webhooks`: the project's verified webhook endpoints as
 * its last push (or `platform dev`) recorded them, each with the URL a
 * provider posts to and its last deliveries, found in the newest lines of
 * the project's log (`platform webhook list` and the console show both).
 */
export async function listProjectWebhookEndpoints(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const origin = projectUrlOf(env, project).replace(/\/$/, "");
  const webhooks = await listProjectWebhooks(env.DB, project.id);
  const log = webhooks.length ? projectLogOf(env, project.id) : null;
  const entries = log ? (await log.read({ limit: MAX_LOG_READ, waitMS: 0 })).entries : [];
  return Response.json(
    {
      webhooks: webhookDeliveriesByEndpoint(
        webhooks.map((w) => ({ ...w, url: `${origin}/__platform/webhooks/${w.name}` })),
        entries,
      ),
    },
    { headers: { "Cache-Control": "no-store" } },
  );
}
