import { errorResponse, PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import type { WorkflowActorEnv } from "./actorClient.ts";
import { toRunListQuery } from "../../engine/store.ts";
import { workflow } from "../../engine/workflowApi.ts";
import { actorForRun } from "./durableObjectBackend.ts";

function notFound(runId: string): Response {
  return errorResponse(new PlatformError("not_found", `Workflow run "${runId}" does not exist.`));
}

/** The run id in a path segment; null when the segment is not valid percent-encoding (no run has such an id). */
function runIdIn(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** Reads `?limit=` as the integer the list query expects; anything else stays as given so the check names it. */
function listFilter(params: URLSearchParams) {
  const filter: Record<string, unknown> = {};
  for (const key of ["name", "status", "cursor"]) if (params.has(key)) filter[key] = params.get(key);
  if (params.has("limit"))
    filter.limit = /^\d+$/.test(params.get("limit")!) ? Number(params.get("limit")) : params.get("limit");
  return filter;
}

/**
 * The project's internal workflow routes (the entry wrapper has already
 * checked that the platform is calling):
 * - `POST /__workflow/:runId/execute` → `{ done }`, plus `continue: true` (beyond the spec) when the
 *   step-loop budget ran out (the queue consumer's call; only then does it re-enqueue the run)
 * - `GET /__workflow/runs?name&status&limit&cursor`, `GET /__workflow/runs/:runId`
 * - `POST /__workflow/start` `{ name, data, id? }` (CLI and console)
 */
export async function handleWorkflowRoute(request: Request, env: WorkflowActorEnv, rest: string): Promise<Response> {
  const url = new URL(request.url);
  const execute = /^\/([^/]+)\/execute$/.exec(rest);
  if (execute && request.method === "POST") {
    const runId = runIdIn(execute[1]!);
    const actor = runId === null ? null : actorForRun(env, runId);
    if (runId === null || !actor) return notFound(runId ?? execute[1]!);
    return Response.json(await actor.execute(runId));
  }
  if (rest === "/runs" && request.method === "GET") {
    return Response.json(await workflow.list(toRunListQuery(listFilter(url.searchParams))));
  }
  const one = /^\/runs\/([^/]+)$/.exec(rest);
  if (one && request.method === "GET") {
    const runId = runIdIn(one[1]!);
    const view = runId === null ? null : await workflow.get(runId);
    return view ? Response.json(view) : notFound(runId ?? one[1]!);
  }
  if (rest === "/start" && request.method === "POST") {
    const body = parseJsonObject(new Uint8Array(await request.arrayBuffer()));
    if (typeof body.name !== "string")
      throw new PlatformError("invalid_input", "name must be the name of a registered workflow.");
    const run = await workflow.start(body.name, body.data, body.id === undefined ? {} : { id: body.id as string });
    return Response.json(
      { runId: run.id, workflowId: run.workflowId, name: run.name, created: run.created },
      { status: run.created ? 201 : 200 },
    );
  }
  return errorResponse(new PlatformError("not_found", "Not found."));
}
