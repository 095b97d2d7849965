import { errorResponse, PlatformError } from "../../core/errors.ts";
import { DEFAULT_JSON_LIMIT_BYTES, parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { MAX_EVENT_PAYLOAD_BYTES } from "../../engine/json.ts";
import type { WorkflowActorEnv } from "./workflowActorClient.ts";
import { toRunListQuery } from "../../engine/store.ts";
import { workflow } from "../../engine/workflowApi.ts";
import { actorForRun } from "./durableObjectBackend.ts";

/**
 * An event's body: its payload may take the whole event limit (checked exactly by the engine), plus room for
 * the name. (The entry wrapper already caps internal bodies at 1 MiB before it checks the caller.)
 */
const EVENT_BODY_LIMIT_BYTES = MAX_EVENT_PAYLOAD_BYTES + 4096;

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
 * - `POST /__workflow/start` `{ name, data, id?, idempotencyKey?, idempotencyTTLMS? }` (CLI and console)
 * - beyond the spec: `POST /__workflow/runs/:runId/cancel` `{ reason? }` → 200 `{ run }`;
 *   `POST /__workflow/runs/:runId/events` `{ name, payload? }` → 202 `{ accepted: true }`
 *   (404 unknown run, 409 finished run, 400 bad input; a body over the wrapper's 1 MiB gets its 404)
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
  const control = /^\/runs\/([^/]+)\/(cancel|events)$/.exec(rest);
  if (control && request.method === "POST") {
    const runId = runIdIn(control[1]!);
    if (runId === null || !actorForRun(env, runId)) return notFound(runId ?? control[1]!);
    if (control[2] === "cancel") {
      const bytes = await readBodyBytes(request, DEFAULT_JSON_LIMIT_BYTES);
      const body = bytes.length === 0 ? {} : parseJsonObject(bytes);
      if (body.reason !== undefined && typeof body.reason !== "string")
        throw new PlatformError("invalid_input", "reason must be a string.");
      return Response.json({ run: await workflow.cancel(runId, body.reason) });
    }
    const body = parseJsonObject(await readBodyBytes(request, EVENT_BODY_LIMIT_BYTES));
    if (typeof body.name !== "string") throw new PlatformError("invalid_input", "name must be the event's name.");
    await workflow.send(runId, body.name, body.payload);
    return Response.json({ accepted: true }, { status: 202 });
  }
  if (rest === "/start" && request.method === "POST") {
    const body = parseJsonObject(new Uint8Array(await request.arrayBuffer()));
    if (typeof body.name !== "string")
      throw new PlatformError("invalid_input", "name must be the name of a registered workflow.");
    const run = await workflow.start(body.name, body.data, {
      ...(body.id === undefined ? {} : { id: body.id as string }),
      ...(body.idempotencyKey === undefined ? {} : { idempotencyKey: body.idempotencyKey as string }),
      ...(body.idempotencyTTLMS === undefined ? {} : { idempotencyTTLMS: body.idempotencyTTLMS as number }),
    });
    return Response.json(
      { runId: run.id, workflowId: run.workflowId, name: run.name, created: run.created },
      { status: run.created ? 201 : 200 },
    );
  }
  return errorResponse(new PlatformError("not_found", "Not found."));
}
