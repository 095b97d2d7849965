import { errorResponse, PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import {
  IDENTITY_FAILURES,
  IDENTITY_HEADER,
  parseRequestToken,
  requestTokenExpiresAt,
} from "../../core/requestToken.ts";
import { callProjectWorker } from "../dispatch/callProjectWorker.ts";
import type { Dispatcher } from "../dispatch/dispatcher.ts";
import { findProjectByScriptName } from "../db/projectsTable.ts";
import { identifiedProjectCall } from "../db/identifiedProjectCall.ts";
import { spendIdentityToken } from "../db/spentIdentityTokens.ts";
import {
  claimExecutionInFlight,
  continueExecutionInFlight,
  releaseExecutionInFlight,
} from "../db/workflowExecutionsInFlight.ts";
import { takeProjectRates } from "../quota/takeProjectRates.ts";
import type { ApiEnv, WorkflowExecuteMessage } from "./env.ts";

/**
 * How often a project may ask for an execution: 60 per
 * 10 seconds, and its account 120 per 10 seconds across all its projects
 * (objects/accountRateLimits.ts), both counted in the account's
 * `RateLimiter` actor. The runtime itself never needs the route (run actors
 * wake themselves with alarms); this is headroom for a project driving its
 * runs by hand, and a ceiling for one account flooding the shared queue
 * however many projects it has.
 */
export const EXECUTE_RATE = { bucket: "workflow-execute", limit: 60, windowMS: 10_000 } as const;

/**
 * `POST /internal/workflow/execute`: a project's worker asks the platform to
 * (re)drive one of its runs. The project comes from the verified identity
 * token, never from the body, so a project can only kick its own script. Each
 * token is accepted once; past the project's rate the answer is 429 with
 * `Retry-After`; and a run that already has a message in flight gets no
 * second one (the answer is the same 202: the run is queued).
 */
export async function enqueueWorkflowExecution(request: Request, env: ApiEnv): Promise<Response> {
  const { project, body: bytes } = await identifiedProjectCall(request, env.DB, 4 * 1024);
  const now = Date.now();
  // Verified, so the token parses; only a verified token is recorded (no forger fills the table).
  const parts = parseRequestToken(request.headers.get(IDENTITY_HEADER))!;
  if (!(await spendIdentityToken(env.DB, parts.signature, requestTokenExpiresAt(parts.timestamp), now)))
    throw new PlatformError("unauthorized", IDENTITY_FAILURES.replayed);
  const refusal = await takeProjectRates(env.RATE_LIMITER, project, {
    rates: [EXECUTE_RATE],
    account: EXECUTE_RATE.bucket,
    projectRefusal: ({ limit, windowMS, bucket }, retryAfterSeconds) =>
      new PlatformError(
        "rate_limited",
        `Rate limit reached: a project may ask for ${limit} workflow executions per ${windowMS / 1000} seconds. Retry in ${retryAfterSeconds} s.`,
        { retryAfterSeconds, bucket, scope: "project" },
      ),
    now,
  });
  if (refusal) return errorResponse(refusal.error, { "Retry-After": String(refusal.retryAfterSeconds) });
  const body = parseJsonObject(bytes);
  if (typeof body.runId !== "string" || !/^[A-Za-z0-9_-][A-Za-z0-9_.:-]{0,199}$/.test(body.runId)) {
    throw new PlatformError("invalid_input", "runId must be a run id string.");
  }
  const message = { runId: body.runId, scriptName: project.script_name };
  if (await claimExecutionInFlight(env.DB, message.scriptName, message.runId, now)) {
    try {
      await env.WORKFLOW_QUEUE.send(message);
    } catch (error) {
      await releaseExecutionInFlight(env.DB, message.scriptName, message.runId);
      throw error;
    }
  }
  return Response.json({ queued: true, runId: body.runId }, { status: 202 });
}

/** Seconds before a run whose step-loop budget ran out is driven again through the queue. */
const CONTINUE_DELAY_SECONDS = 1;

/**
 * How many times one message is re-enqueued for a run whose budget ran out
 * at most: 20 × 50 s of step loop. The run's actor continues such a
 * run with its own alarm anyway, so past the cap the queue just lets go; the
 * cap keeps a worker that answers `continue` at once from looping forever.
 */
export const MAX_CONTINUATIONS = 20;

/** The execute route's answer: `done` (the fixed wire contract), and this platform's `continue` when the budget ran out. */
interface ExecuteAnswer {
  done: boolean;
  continue?: boolean;
}

/**
 * Queue consumer: calls the project's `/__workflow/{runId}/execute`. A run
 * that is done, or waiting (a retry's backoff, a step in flight: its actor's
 * alarm wakes it), lets its message go; only a run whose step-loop budget ran
 * out (`continue: true`) is re-enqueued, keeping its in-flight row. A failed
 * call is retried by the queue, the row kept.
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
      await releaseExecutionInFlight(env.DB, scriptName, runId);
      message.ack();
      continue;
    }
    try {
      const response = await callProjectWorker(dispatcher, project, {
        method: "POST",
        pathAndQuery: `/__workflow/${encodeURIComponent(runId)}/execute`,
      });
      if (response.status === 404) {
        console.error(`workflow queue: ${scriptName} does not know run ${runId}; dropping it`);
        await releaseExecutionInFlight(env.DB, scriptName, runId);
        message.ack();
        continue;
      }
      if (!response.ok)
        throw new Error(`execute answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      const answer = (await response.json()) as ExecuteAnswer;
      if (!answer.done && answer.continue === true) await continueOrLetGo(env, message.body);
      else await releaseExecutionInFlight(env.DB, scriptName, runId);
      message.ack();
    } catch (error) {
      console.error(`workflow queue: run ${runId} of ${scriptName}:`, error);
      message.retry({ delaySeconds: CONTINUE_DELAY_SECONDS });
    }
  }
}

/** Re-enqueues a run whose budget ran out, unless this message's continuations are spent. */
async function continueOrLetGo(env: ApiEnv, body: WorkflowExecuteMessage): Promise<void> {
  const continuations = await continueExecutionInFlight(env.DB, body.scriptName, body.runId, Date.now());
  if (continuations > MAX_CONTINUATIONS) {
    console.error(
      `workflow queue: run ${body.runId} of ${body.scriptName} continued ${MAX_CONTINUATIONS} times; its actor's alarm carries on`,
    );
    await releaseExecutionInFlight(env.DB, body.scriptName, body.runId);
    return;
  }
  await env.WORKFLOW_QUEUE.send(body, { delaySeconds: CONTINUE_DELAY_SECONDS });
}
