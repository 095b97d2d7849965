import { streamQueryOfSearch } from "../../../../engine/streams/runStream.ts";
import { decodePathSegment } from "../../../../core/web/pathSegment.ts";
import { timingSafeEqual } from "node:crypto";
import {
  BULK_CONTROL_BODIES,
  parseSendOrStartBody,
  MAX_CONTROL_BODY_BYTES,
  RUN_CONTROL_BODIES,
  type RunControl,
  type RunControlBodies,
} from "../../../../contracts/workflowControl.ts";
import type { ProjectSchedule } from "../../../../contracts/workflowSchedules.ts";
import { errorResponse, PlatformError } from "../../../../core/errors.ts";
import { parseJsonObject, readBodyBytes } from "../../../../core/web/jsonBody.ts";
import { toBulkFilter } from "../../../../engine/control/bulkOperation.ts";
import type { JsonValue } from "../../../../engine/api/json.ts";
import { filterFromSearchParams, toRunListQuery } from "../../../../engine/storage/runQuery.ts";
import { backendStartOptions, type WorkflowBackend } from "../../../../engine/api/workflowApi.ts";

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

/** `/projects/:slug/workflows`, `…/:runId` and `…/:runId/<control>` of every run control. */
const WORKFLOWS_PATH = new RegExp(
  `^/projects/([^/]+)/workflows(?:/([^/]+)(?:/(${Object.keys(RUN_CONTROL_BODIES).join("|")}))?)?$`,
);

/** What each run control does on the project's backend, and its answer (as the project's own routes). */
const RUN_CONTROL_ANSWERS: {
  readonly [C in RunControl]: (backend: WorkflowBackend, runId: string, body: RunControlBodies[C]) => Promise<Response>;
} = {
  cancel: async (backend, runId, { reason }) => Response.json({ run: await backend.cancel(runId, reason) }),
  events: async (backend, runId, { name, payload }) => {
    await backend.send(runId, name, (payload ?? null) as JsonValue);
    return Response.json({ accepted: true }, { status: 202 });
  },
  pause: async (backend, runId, { reason }) => Response.json({ run: await backend.pause(runId, reason) }),
  resume: async (backend, runId) => Response.json({ run: await backend.resume(runId) }),
  rerun: async (backend, runId, { fromStep }) => {
    const { name, ...started } = await backend.rerun(runId, fromStep === undefined ? {} : { fromStep });
    return Response.json(
      { runId: started.runId, workflowId: started.workflowId, name, created: started.created },
      { status: 201 },
    );
  },
};

/** Reads and checks the control's body, then carries it out. */
async function answerRunControl<C extends RunControl>(
  control: C,
  backend: WorkflowBackend,
  runId: string,
  request: Request,
): Promise<Response> {
  const body = RUN_CONTROL_BODIES[control](await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
  return RUN_CONTROL_ANSWERS[control](backend, runId, body);
}

function tokenMatches(header: string | null, expected: string): boolean {
  const given = Buffer.from(/^Bearer (\S+)$/.exec(header ?? "")?.[1] ?? "");
  const wanted = Buffer.from(expected);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

/** The run id in a path segment; malformed percent-encoding names no run. */
function runIdIn(segment: string): string {
  const runId = decodePathSegment(segment);
  if (runId === null) throw new PlatformError("not_found", `Workflow run "${segment}" does not exist.`);
  return runId;
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
    const stream = /^\/projects\/([^/]+)\/workflows\/([^/]+)\/stream$/.exec(path);
    if (stream && request.method === "GET") {
      const backend = stream[1] === options.slug ? options.backend() : null;
      if (!backend?.readStream)
        throw new PlatformError("not_found", `No project named "${stream[1]}" in your account.`);
      const query = streamQueryOfSearch(new URL(request.url).searchParams, "GET …/stream");
      return Response.json(await backend.readStream(runIdIn(stream[2]!), query));
    }
    const match = WORKFLOWS_PATH.exec(path);
    if (!match) throw new PlatformError("not_found", "Not found.");
    const [, slug, segment] = match;
    // The path pattern lists only the run controls.
    const control = match[3] as RunControl | undefined;
    if (slug !== options.slug) throw new PlatformError("not_found", `No project named "${slug}" in your account.`);
    const backend = options.backend();
    if (!backend) throw new PlatformError("not_found", `Project "${slug}" registers no workflows.`);
    const method = request.method;

    if (segment === undefined && method === "GET") {
      const filter = filterFromSearchParams(new URL(request.url).searchParams);
      return Response.json(await backend.list(toRunListQuery(filter)));
    }
    // Bulk operations: `{ filter, reason? | fromStep?, dryRun? }`, as the API worker's routes.
    if ((segment === "cancel" || segment === "rerun") && control === undefined && method === "POST") {
      const bytes = await readBodyBytes(request, MAX_CONTROL_BODY_BYTES);
      const what = segment === "cancel" ? "workflow.cancelMany" : "workflow.rerunMany";
      if (segment === "cancel") {
        const { filter, reason, dryRun } = BULK_CONTROL_BODIES.cancel(bytes);
        const checked = toBulkFilter(filter, what);
        if (dryRun) return Response.json({ matched: await backend.countRuns(checked), affected: 0 });
        return Response.json(await backend.cancelMany(checked, reason === undefined ? {} : { reason }));
      }
      const { filter, fromStep, dryRun } = BULK_CONTROL_BODIES.rerun(bytes);
      const checked = toBulkFilter(filter, what);
      if (dryRun) return Response.json({ matched: await backend.countRuns(checked), affected: 0 });
      return Response.json(await backend.rerunMany(checked, fromStep === undefined ? {} : { fromStep }));
    }
    if (segment === "send" && control === undefined && method === "POST") {
      const { workflowId, name, payload, start } = parseSendOrStartBody(
        await readBodyBytes(request, MAX_CONTROL_BODY_BYTES),
      );
      const started = await backend.sendOrStart(
        workflowId,
        { name, payload: (payload ?? null) as JsonValue },
        { name: start.name, data: (start.data ?? null) as JsonValue },
      );
      return Response.json({ runId: started.runId, created: started.created }, { status: started.created ? 201 : 200 });
    }
    if (segment === undefined && method === "POST") {
      const body = parseJsonObject(await readBodyBytes(request, MAX_START_BODY_BYTES));
      if (typeof body.name !== "string")
        throw new PlatformError("invalid_input", "name must be the name of a registered workflow.");
      const { id, idempotencyKey, idempotencyTTLMS, priority } = body;
      const started = await backend.start(
        body.name,
        (body.data ?? null) as JsonValue,
        backendStartOptions(body.name, { id, idempotencyKey, idempotencyTTLMS, priority }),
      );
      return Response.json(
        { runId: started.runId, workflowId: started.workflowId, name: body.name, created: started.created },
        { status: started.created ? 201 : 200 },
      );
    }
    if (segment === undefined || method !== (control ? "POST" : "GET"))
      throw new PlatformError("not_found", "Not found.");
    const runId = runIdIn(segment);
    if (control) return answerRunControl(control, backend, runId, request);
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
