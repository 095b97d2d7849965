import { decodePathSegment } from "../../core/web/pathSegment.ts";
import {
  BULK_CONTROL_BODIES,
  parseSendOrStartBody,
  MAX_CONTROL_BODY_BYTES,
  RUN_CONTROL_BODIES,
  type RunControl,
} from "../../contracts/workflowControl.ts";
import { PlatformError } from "../../core/errors.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { callProjectWorker } from "../dispatch/callProjectWorker.ts";
import { resolveDispatcher } from "../dispatch/dispatcher.ts";
import { projectHasCron } from "../db/projectCronsTable.ts";
import type { ApiEnv } from "./env.ts";
import { withMappedStepErrors } from "./projectLogs/mappedRunView.ts";
import { projectLogOf } from "./projectLogs/projectLogRoutes.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import type { CliRequest } from "./withCliUser.ts";

/** Relays a project's answer, keeping its status and JSON body. */
async function relay(response: Response): Promise<Response> {
  return new Response(response.body, { status: response.status, headers: { "content-type": "application/json" } });
}

/**
 * The CLI's (and console's) window on a project's workflows. Runs live in the
 * project's own Durable Objects, so the API worker asks the project through
 * its authenticated internal routes.
 */
export async function listProjectWorkflowRuns(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const query = new URL(request.url).search;
  return relay(
    await callProjectWorker(resolveDispatcher(env), project, {
      method: "GET",
      pathAndQuery: `/__workflow/runs${query}`,
    }),
  );
}

/**
 * The project's internal path for one run, with `action` after it (`""`, `"/cancel"`, `"/events"`).
 * The router leaves the segment percent-encoded: decoded once and encoded again, it reaches the
 * project as exactly one segment that decodes to the run id the caller meant.
 */
function runPath(request: CliRequest, action = ""): string {
  const segment = request.params.runId!;
  const runId = decodePathSegment(segment);
  if (runId === null) throw new PlatformError("not_found", `Workflow run "${segment}" does not exist.`);
  return `/__workflow/runs/${encodeURIComponent(runId)}${action}`;
}

/** One run's view, its failed steps' stacks pointed at the project's sources (mappedRunView.ts). */
export async function getProjectWorkflowRun(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const answer = await callProjectWorker(resolveDispatcher(env), project, {
    method: "GET",
    pathAndQuery: runPath(request),
  });
  const log = projectLogOf(env, project.id);
  if (!answer.ok || !log) return relay(answer);
  return Response.json(await withMappedStepErrors(await answer.json(), (stacks, at) => log.mapStacks(stacks, at)));
}

/**
 * `GET /projects/:slug/workflows/:runId/stream?from&topic`: one batch of the run's stream (`platform
 * workflow watch` reads batch after batch); the project's answer, a wait for the next message included, passes through.
 */
export async function streamProjectWorkflowRun(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const query = new URL(request.url).search;
  return relay(
    await callProjectWorker(resolveDispatcher(env), project, {
      method: "GET",
      pathAndQuery: runPath(request, `/stream${query}`),
    }),
  );
}

/** `POST /projects/:slug/workflows` `{ name, data, id?, idempotencyKey?, idempotencyTTLMS? }`: starts a registered workflow. */
export async function startProjectWorkflow(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const body = new TextDecoder().decode(await readBodyBytes(request, 1024 * 1024 + 4096));
  return relay(
    await callProjectWorker(resolveDispatcher(env), project, {
      method: "POST",
      pathAndQuery: "/__workflow/start",
      body,
    }),
  );
}

/** Checks a control's body here, then forwards it as canonical JSON; the project's answer passes through. */
async function forwardControl(
  request: CliRequest,
  env: ApiEnv,
  path: (request: CliRequest) => string,
  parse: (bytes: Uint8Array) => object,
): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const body = parse(await readBodyBytes(request, MAX_CONTROL_BODY_BYTES));
  return relay(
    await callProjectWorker(resolveDispatcher(env), project, {
      method: "POST",
      pathAndQuery: path(request),
      body: JSON.stringify(body),
    }),
  );
}

/** `POST /projects/:slug/workflows/:runId/<control>`, forwarded to the project's `/__workflow/runs/:runId/<control>`. */
function forwardRunControl(control: RunControl) {
  return (request: CliRequest, env: ApiEnv) =>
    forwardControl(request, env, (r) => runPath(r, `/${control}`), RUN_CONTROL_BODIES[control]);
}

/** `POST /projects/:slug/workflows/:runId/cancel` `{ reason? }`: 200 `{ run }`, 404, 409. */
export const cancelProjectWorkflowRun = forwardRunControl("cancel");

/**
 * `POST /projects/:slug/workflows/:runId/events` `{ name, payload? }`: delivers an
 * event to a run (`workflow.send`); the project's answer (202, 404, 409, 400, 413) passes through.
 */
export const sendProjectWorkflowEvent = forwardRunControl("events");

/** `POST /projects/:slug/workflows/:runId/pause` `{ reason? }`: 200 `{ run }`, 404, 409. */
export const pauseProjectWorkflowRun = forwardRunControl("pause");

/** `POST /projects/:slug/workflows/:runId/resume`: 200 `{ run }`, 404, 409. */
export const resumeProjectWorkflowRun = forwardRunControl("resume");

/** `POST /projects/:slug/workflows/:runId/rerun` `{ fromStep? }`: 201 `{ runId, … }`, 404, 409, 400. */
export const rerunProjectWorkflowRun = forwardRunControl("rerun");

/**
 * `POST /projects/:slug/workflows/cancel` `{ filter, reason?, dryRun? }` (`workflow.cancelMany`):
 * 200 `{ matched, affected }`; `dryRun` counts the runs and acts on none (the CLI's confirmation).
 */
export const cancelManyProjectWorkflowRuns = (request: CliRequest, env: ApiEnv) =>
  forwardControl(request, env, () => "/__workflow/cancel-many", BULK_CONTROL_BODIES.cancel);

/**
 * `POST /projects/:slug/workflows/send` `{ workflowId, name, payload?, start: { name, data? } }`
 * (start-or-send): 201 `{ runId, created: true }` when it started the run, 200 when an active run took the event.
 */
export const sendOrStartProjectWorkflow = (request: CliRequest, env: ApiEnv) =>
  forwardControl(request, env, () => "/__workflow/send", parseSendOrStartBody);

/** `POST /projects/:slug/workflows/rerun` `{ filter, fromStep?, dryRun? }` (`workflow.rerunMany`). */
export const rerunManyProjectWorkflowRuns = (request: CliRequest, env: ApiEnv) =>
  forwardControl(request, env, () => "/__workflow/rerun-many", BULK_CONTROL_BODIES.rerun);

/** `POST /projects/:slug/crons/:name/run`: runs one of the project's crons now (e.g. the recovery sweep). */
export async function runProjectCron(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  // The router leaves the name percent-encoded: a schedule's cron is `__schedule/<workflow>`.
  const name = decodePathSegment(request.params.name!);
  if (name === null || !(await projectHasCron(env.DB, project.id, name)))
    throw new PlatformError(
      "not_found",
      `Project "${project.slug}" has no cron named "${name ?? request.params.name}".`,
    );
  return relay(
    await callProjectWorker(resolveDispatcher(env), project, {
      method: "POST",
      pathAndQuery: `/__cron/${encodeURIComponent(name)}`,
    }),
  );
}
