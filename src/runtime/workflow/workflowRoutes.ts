import { decodePathSegment } from "../../core/web/pathSegment.ts";
import {
  MAX_CONTROL_BODY_BYTES,
  parseBulkCancelBody,
  parseSendOrStartBody,
  parseBulkRerunBody,
  parseStrandedRunsBody,
  parseRerunRunBody,
} from "../../contracts/workflowControl.ts";
import { errorResponse, PlatformError } from "../../core/errors.ts";
import { DEFAULT_JSON_LIMIT_BYTES, parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { MAX_EVENT_PAYLOAD_BYTES } from "../../engine/api/json.ts";
import { toBulkFilter } from "../../engine/control/bulkOperation.ts";
import { filterFromSearchParams } from "../../engine/storage/runQuery.ts";
import { streamQueryOfSearch } from "../../engine/streams/runStream.ts";
import { installedWorkflowBackend, workflow } from "../../engine/api/workflowApi.ts";
import type { WorkflowActorEnv } from "./workflowActorClient.ts";
import { actorForRun } from "./durableObjectBackend.ts";

/**
 * An event's body: its payload may take the whole event limit (checked exactly by the engine), plus room for
 * the name. (The entry wrapper already caps internal bodies at 1 MiB before it checks the caller.)
 */
const EVENT_BODY_LIMIT_BYTES = MAX_EVENT_PAYLOAD_BYTES + 4096;

/** The backend behind `workflow.*`, for what the user-facing API does not offer (counts, the stranded-runs check). */
function requireBackend() {
  const backend = installedWorkflowBackend();
  if (!backend) throw new PlatformError("not_ready", "The workflow engine has not started.");
  return backend;
}

/** A bulk operation's dry run: how many runs it would act on (the CLI's and console's confirmation). */
async function countOnly(filter: unknown, what: string): Promise<Response> {
  return Response.json({ matched: await requireBackend().countRuns(toBulkFilter(filter, what)), affected: 0 });
}

/** `POST /__workflow/check` `{ workflows }`: the stranded-runs check, answered from the backend's index. */
async function handleStrandedRunsCheck(request: Request): Promise<Response> {
  const { workflows } = parseStrandedRunsBody(await readBodyBytes(request, DEFAULT_JSON_LIMIT_BYTES));
  return Response.json(await requireBackend().findStrandedRuns(workflows));
}

function notFound(runId: string): Response {
  return errorResponse(new PlatformError("not_found", `Workflow run "${runId}" does not exist.`));
}

/**
 * The project's internal workflow routes (the entry wrapper has already
 * checked that the platform is calling):
 * - `POST /__workflow/:runId/execute` → `{ done }`, plus this platform's `continue: true` when the
 *   step-loop budget ran out (the queue consumer's call; only then does it re-enqueue the run)
 * - `GET /__workflow/runs?name&status&…&limit&cursor` (every filter of `workflow.list`), `GET /__workflow/runs/:runId`
 * - `GET /__workflow/runs/:runId/stream?from&topic` → one batch of the run's stream `{ messages, ended, retryAfterMS? }`
 *   (it waits for the next message while the run's actor runs a step; `platform workflow watch` reads it)
 * - `POST /__workflow/start` `{ name, data, id?, idempotencyKey?, idempotencyTTLMS?, priority? }` (CLI and console)
 * - `POST /__workflow/send` `{ workflowId, name, payload?, start: { name, data? } }` (start-or-send) →
 *   201 `{ runId, created: true }` or 200 `{ runId, created: false }`
 * - `POST /__workflow/runs/:runId/cancel` `{ reason? }` → 200 `{ run }`;
 *   `POST /__workflow/runs/:runId/events` `{ name, payload? }` → 202 `{ accepted: true }`;
 *   `POST /__workflow/runs/:runId/pause` `{ reason? }` and `…/resume` → 200 `{ run }`;
 *   `POST /__workflow/runs/:runId/rerun` `{ fromStep? }` → 201 `{ runId, workflowId, name, created }`
 *   (404 unknown run, 409 finished, paused or live run as each says, 400 bad input; a body over the
 *   wrapper's 1 MiB gets its 404)
 * - `POST /__workflow/cancel-many` `{ filter, reason? }` and `POST /__workflow/rerun-many`
 *   `{ filter, fromStep? }` → 200 `{ matched, affected }`; `POST /__workflow/check` `{ workflows }` →
 *   200 `{ count, runs }`, the live runs code with those workflows would strand (the stranded-runs check)
 */
export async function handleWorkflowRoute(request: Request, env: WorkflowActorEnv, rest: string): Promise<Response> {
  const url = new URL(request.url);
  const execute = /^\/([^/]+)\/execute$/.exec(rest);
  if (execute && request.method === "POST") {
    const runId = decodePathSegment(execute[1]!);
    const actor = runId === null ? null : actorForRun(env, runId);
    if (runId === null || !actor) return notFound(runId ?? execute[1]!);
    return Response.json(await actor.execute(runId));
  }
  if (rest === "/runs" && request.method === "GET") {
    return Response.json(await workflow.list(filterFromSearchParams(url.searchParams)));
  }
  const one = /^\/runs\/([^/]+)$/.exec(rest);
  if (one && request.method === "GET") {
    const runId = decodePathSegment(one[1]!);
    const view = runId === null ? null : await workflow.get(runId);
    return view ? Response.json(view) : notFound(runId ?? one[1]!);
  }
  const stream = /^\/runs\/([^/]+)\/stream$/.exec(rest);
  if (stream && request.method === "GET") {
    const runId = decodePathSegment(stream[1]!);
    const backend = requireBackend();
    if (runId === null || !backend.readStream) return notFound(runId ?? stream[1]!);
    return Response.json(await backend.readStream(runId, streamQueryOfSearch(url.searchParams, "GET …/stream")));
  }
  const control = /^\/runs\/([^/]+)\/(cancel|events|pause|resume|rerun)$/.exec(rest);
  if (control && request.method === "POST") {
    const runId = decodePathSegment(control[1]!);
    if (runId === null || !actorForRun(env, runId)) return notFound(runId ?? control[1]!);
    if (control[2] === "cancel" || control[2] === "pause") {
      const bytes = await readBodyBytes(request, DEFAULT_JSON_LIMIT_BYTES);
      const body = bytes.length === 0 ? {} : parseJsonObject(bytes);
      if (body.reason !== undefined && typeof body.reason !== "string")
        throw new PlatformError("invalid_input", "reason must be a string.");
      const run =
        control[2] === "cancel" ? await workflow.cancel(runId, body.reason) : await workflow.pause(runId, body.reason);
      return Response.json({ run });
    }
    if (control[2] === "resume") return Response.json({ run: await workflow.resume(runId) });
    if (control[2] === "rerun") {
      const body = parseRerunRunBody(await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
      const run = await workflow.rerun(runId, body);
      return Response.json(
        { runId: run.id, workflowId: run.workflowId, name: run.name, created: run.created },
        { status: 201 },
      );
    }
    const body = parseJsonObject(await readBodyBytes(request, EVENT_BODY_LIMIT_BYTES));
    if (typeof body.name !== "string") throw new PlatformError("invalid_input", "name must be the event's name.");
    await workflow.send(runId, body.name, body.payload);
    return Response.json({ accepted: true }, { status: 202 });
  }
  if (rest === "/cancel-many" && request.method === "POST") {
    const { filter, reason, dryRun } = parseBulkCancelBody(await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
    if (dryRun) return countOnly(filter, "workflow.cancelMany");
    return Response.json(await workflow.cancelMany(filter, reason === undefined ? {} : { reason }));
  }
  if (rest === "/rerun-many" && request.method === "POST") {
    const { filter, fromStep, dryRun } = parseBulkRerunBody(await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
    if (dryRun) return countOnly(filter, "workflow.rerunMany");
    return Response.json(await workflow.rerunMany(filter, fromStep === undefined ? {} : { fromStep }));
  }
  if (rest === "/check" && request.method === "POST") return handleStrandedRunsCheck(request);
  if (rest === "/send" && request.method === "POST") {
    const { workflowId, name, payload, start } = parseSendOrStartBody(
      await readBodyBytes(request, EVENT_BODY_LIMIT_BYTES),
    );
    const answer = await workflow.send(workflowId, name, payload, { start });
    return Response.json(answer, { status: answer.created ? 201 : 200 });
  }
  if (rest === "/start" && request.method === "POST") {
    const body = parseJsonObject(new Uint8Array(await request.arrayBuffer()));
    if (typeof body.name !== "string")
      throw new PlatformError("invalid_input", "name must be the name of a registered workflow.");
    const run = await workflow.start(body.name, body.data, {
      ...(body.id === undefined ? {} : { id: body.id as string }),
      ...(body.idempotencyKey === undefined ? {} : { idempotencyKey: body.idempotencyKey as string }),
      ...(body.idempotencyTTLMS === undefined ? {} : { idempotencyTTLMS: body.idempotencyTTLMS as number }),
      ...(body.priority === undefined ? {} : { priority: body.priority as number }),
    });
    return Response.json(
      { runId: run.id, workflowId: run.workflowId, name: run.name, created: run.created },
      { status: run.created ? 201 : 200 },
    );
  }
  return errorResponse(new PlatformError("not_found", "Not found."));
}
