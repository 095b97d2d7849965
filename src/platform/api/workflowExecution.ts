import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject, readBodyBytes } from "../../core/web/jsonBody.ts";
import { IDENTITY_FAILURES, IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import { callProjectWorker } from "../dispatch/callProjectWorker.ts";
import type { Dispatcher } from "../dispatch/dispatcher.ts";
import { findProjectById, findProjectByScriptName } from "../db/projectsTable.ts";
import type { ApiEnv, WorkflowExecuteMessage } from "./env.ts";

/**
 * `POST /internal/workflow/execute`: a project's worker asks the platform to
 * (re)drive one of its runs. The project comes from the verified identity
 * token, never from the body, so a project can only kick its own script.
 */
export async function enqueueWorkflowExecution(request: Request, env: ApiEnv): Promise<Response> {
  const bytes = await readBodyBytes(request, 4 * 1024);
  const check = await verifyRequestToken(
    "identity",
    request.headers.get(IDENTITY_HEADER),
    async (projectId) => (await findProjectById(env.DB, projectId))?.worker_secret ?? null,
    { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body: bytes },
  );
  if (!check.ok) throw new PlatformError("unauthorized", IDENTITY_FAILURES[check.reason]);
  const body = parseJsonObject(bytes);
  if (typeof body.runId !== "string" || !/^[A-Za-z0-9_-][A-Za-z0-9_.:-]{0,199}$/.test(body.runId)) {
    throw new PlatformError("invalid_input", "runId must be a run id string.");
  }
  const project = await findProjectById(env.DB, check.projectId);
  if (!project) throw new PlatformError("unauthorized", IDENTITY_FAILURES.unknown_project);
  await env.WORKFLOW_QUEUE.send({ runId: body.runId, scriptName: project.script_name });
  return Response.json({ queued: true, runId: body.runId }, { status: 202 });
}

/** Seconds before a run that is not done is driven again through the queue. */
const REQUEUE_DELAY_SECONDS = 1;

/**
 * Queue consumer: calls the project's `/__workflow/{runId}/execute` and
 * re-enqueues the message while the run is not done.
 */
export async function consumeWorkflowQueue(
  batch: MessageBatch<WorkflowExecuteMessage>,
  env: ApiEnv,
  dispatcher: Dispatcher,
): Promise<void> {
  for (const message of batch.messages) {
    const { runId, scriptName } = message.body;
    const project = await findProjectByScriptName(env.DB, scriptName);
    if (!project) {
      console.error(`workflow queue: no project with script ${scriptName}; dropping run ${runId}`);
      message.ack();
      continue;
    }
    try {
      const response = await callProjectWorker(
        dispatcher,
        project,
        "POST",
        `/__workflow/${encodeURIComponent(runId)}/execute`,
      );
      if (response.status === 404) {
        console.error(`workflow queue: ${scriptName} does not know run ${runId}; dropping it`);
        message.ack();
        continue;
      }
      if (!response.ok)
        throw new Error(`execute answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      const { done } = (await response.json()) as { done: boolean };
      if (!done) await env.WORKFLOW_QUEUE.send(message.body, { delaySeconds: REQUEUE_DELAY_SECONDS });
      message.ack();
    } catch (error) {
      console.error(`workflow queue: run ${runId} of ${scriptName}:`, error);
      message.retry({ delaySeconds: REQUEUE_DELAY_SECONDS });
    }
  }
}
