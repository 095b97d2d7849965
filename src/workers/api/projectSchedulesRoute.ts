import { projectSchedules } from "../../contracts/workflowSchedules.ts";
import { listProjectCrons } from "../db/projectCronsTable.ts";
import type { ApiEnv } from "./env.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

/**
 * `GET /projects/:slug/schedules`: the project's scheduled
 * workflows as its last push recorded them, each with its next tick
 * (`platform workflow schedules`).
 */
export async function listProjectSchedules(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  return Response.json({ schedules: projectSchedules(await listProjectCrons(env.DB, project.id), Date.now()) });
}
