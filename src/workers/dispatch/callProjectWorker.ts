import { errorResponse, PlatformError } from "../../core/errors.ts";
import { INTERNAL_HEADER, type SignedRequestParts, signRequestToken } from "../../core/requestToken.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { ProjectRow } from "../db/projectsTable.ts";

/** The request to a project's internal route; `body` is JSON (none by default). */
export interface ProjectWorkerCall extends Pick<SignedRequestParts, "method" | "pathAndQuery"> {
  body?: string | null;
}

/**
 * Calls one of a project's internal routes (`/__workflow/*`, `/__cron/*`,
 * `/__plugin/*`) as the platform: the request carries an `internal` token
 * signed with the project's worker secret, which the runtime checks.
 */
export async function callProjectWorker(
  dispatcher: Dispatcher,
  project: Pick<ProjectRow, "id" | "slug" | "script_name" | "worker_secret">,
  { method, pathAndQuery, body = null }: ProjectWorkerCall,
): Promise<Response> {
  const worker = dispatcher.get(project.script_name);
  // The project exists (the caller found it): what is missing is its worker upstream, as the gateway answers too.
  if (!worker)
    return errorResponse(new PlatformError("upstream_error", `Project worker ${project.script_name} is not deployed.`));
  const token = await signRequestToken(
    "internal",
    { method, pathAndQuery, body },
    { projectId: project.id, secret: project.worker_secret },
  );
  return worker.fetch(`https://${project.slug}.internal${pathAndQuery}`, {
    method,
    body,
    headers: { [INTERNAL_HEADER]: token, ...(body === null ? {} : { "content-type": "application/json" }) },
  });
}
