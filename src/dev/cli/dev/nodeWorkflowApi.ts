import { timingSafeEqual } from "node:crypto";
import { MAX_CONTROL_BODY_BYTES, parseCancelRunBody, parseSendEventBody } from "../../../contracts/workflowControl.ts";
import type { ProjectSchedule } from "../../../contracts/workflowSchedules.ts";
import { errorResponse, PlatformError } from "../../../core/errors.ts";
import { parseJsonObject, readBodyBytes } from "../../../core/web/jsonBody.ts";
import type { JsonValue } from "../../../engine/json.ts";
import { toRunListQuery } from "../../../engine/store.ts";
import { backendStartOptions, type WorkflowBackend } from "../../../engine/workflowApi.ts";

/**
 * `platform dev --node` has no API worker, so the Node server answers the
 * API's workflow routes itself, under {@link NODE_API_PATH} (a prefix the
 * runtime reserves, never the project's): the same paths, bodies, checks and
 * statuses as the API worker (src/workers/api/projectWorkflowRoutes.ts), on
 * the project's own backend, for the CLI token `platform dev` wrote to
 * `.platform/dev.json`.
 */
export const NODE_API_PATH = "/__platform/api";

/** As the API worker's start route: the engine's 1 MiB start data plus the envelope. */
const MAX_START_BODY_BYTES = 1024 * 1024 + 4096;

export interface NodeWorkflowApiOptions {
  slug: string;
  /** The only token this API accepts (`Authorization: Bearer …`). */
  cliToken: string;
  /**
   * The project's backend as loaded now (a rebuild swaps it); null when the project registers no
   * workflows. Its `schedules()` answers `GET /projects/:slug/schedules`.
   */
  backend: () => (WorkflowBackend & { schedules?(): ProjectSchedule[] }) | null;
}

function tokenMatches(header: string | null, expected: string): boolean {
  const given = Buffer.from(/^Bearer (\S+)$/.exec(header ?? "")?.[1] ?? "");
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The run id in a path segment; malformed percent-encoding names no run. */
function runIdIn(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new PlatformError("not_found", `Workflow run "${segment}" does not exist.`);
  }
}

/** Reads `?limit=` as the integer the list query expects; anything else stays as given so the check names it. */
function listFilter(params: URLSearchParams): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  for (const key of ["name", "status", "cursor"]) if (params.has(key)) filter[key] = params.get(key);
  if (params.has("limit"))
    filter.limit = /^\d+$/.test(params.get("limit")!) ? Number(params.get("limit")) : params.get("limit");
  return filter;
}

export function createNodeWorkflowApi(options: NodeWorkflowApiOptions): { fetch(request: Request): Promise<Response> } {
  const route = async (request: Request, path: string): Promise<Response> => {
    if (!tokenMatches(request.headers.get("authorization"), options.cliToken))
      throw new PlatformError("unauthorized", "Missing or invalid CLI token: use the one in .platform/dev.json.");
    const schedules = /^\/projects\/([^/]+)\/schedules$/.exec(path);
    if (schedules && request.method === "GET") {
      if (schedules[1] !== options.slug)
        throw new PlatformError("not_found", `No project named "${schedules[1]}" in your account.`);
      return Response.json({ schedules: options.backend()?.schedules?.() ?? [] });
    }
    const match = /^\/projects\/([^/]+)\/workflows(?:\/([^/]+)(\/cancel|\/events)?)?$/.exec(path);
    if (!match) throw new PlatformError("not_found", "Not found.");
    const [, slug, segment, action] = match;
    if (slug !== options.slug) throw new PlatformError("not_found", `No project named "${slug}" in your account.`);
    const backend = options.backend();
    if (!backend) throw new PlatformError("not_found", `Project "${slug}" registers no workflows.`);
    const method = request.method;

    if (segment === undefined && method === "GET") {
      const filter = listFilter(new URL(request.url).searchParams);
      return Response.json(await backend.list(toRunListQuery(filter)));
    }
    if (segment === undefined && method === "POST") {
      const body = parseJsonObject(await readBodyBytes(request, MAX_START_BODY_BYTES));
      if (typeof body.name !== "string")
        throw new PlatformError("invalid_input", "name must be the name of a registered workflow.");
      const { id, idempotencyKey, idempotencyTTLMS } = body;
      const started = await backend.start(
        body.name,
        (body.data ?? null) as JsonValue,
        backendStartOptions(body.name, { id, idempotencyKey, idempotencyTTLMS }),
      );
      return Response.json(
        { runId: started.runId, workflowId: started.workflowId, name: body.name, created: started.created },
        { status: started.created ? 201 : 200 },
      );
    }
    if (segment === undefined || method !== (action ? "POST" : "GET"))
      throw new PlatformError("not_found", "Not found.");
    const runId = runIdIn(segment);
    if (action === "/cancel") {
      const { reason } = parseCancelRunBody(await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
      return Response.json({ run: await backend.cancel(runId, reason) });
    }
    if (action === "/events") {
      const { name, payload } = parseSendEventBody(await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
      await backend.send(runId, name, (payload ?? null) as JsonValue);
      return Response.json({ accepted: true }, { status: 202 });
    }
    const view = await backend.get(runId);
    if (!view) throw new PlatformError("not_found", `Workflow run "${runId}" does not exist.`);
    return Response.json(view);
  };

  return {
    async fetch(request) {
      const path = new URL(request.url).pathname.slice(NODE_API_PATH.length);
      try {
        return await route(request, path);
      } catch (error) {
        // The engine in the project's bundle throws its own copy of PlatformError; errorResponse knows it by its brand.
        return errorResponse(error);
      }
    },
  };
}
