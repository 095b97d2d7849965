import { errorResponse, PlatformError } from "../../core/errors.ts";
import type { PlatformRuntime } from "../entry/platformRuntime.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import type { WorkflowActorEnv } from "./workflowActorClient.ts";
import { durableObjectWorkflowBackend } from "./durableObjectBackend.ts";
import { sweepStuckRuns } from "./recoverySweep.ts";
import { handleWorkflowRoute } from "./workflowRoutes.ts";
import { createStreamLinkIssuer, noteProjectBase, streamSecretOf } from "./streamLinks.ts";
import { serveRunStream } from "./streamRoute.ts";
import { createCallbackLinkIssuer } from "./callbackLinks.ts";
import { serveRunCallback } from "./callbackRoute.ts";
import { setCallbackLinkIssuer } from "../../engine/control/callbackLink.ts";
import { workflowRunHost } from "../../objects/workflowRunHost.ts";
import { setStepEnvSource } from "../../engine/execution/stepContext.ts";
import { projectVariables } from "../entry/projectVariables.ts";
import {
  describeScheduledRun,
  forgetWorkflowRegistrations,
  installWorkflowBackend,
  installedWorkflowBackend,
  setCronRegistrar,
  setStreamLinkIssuer,
  startScheduledRun,
  workflow as registry,
  workflowDefinitions,
  type CronRegistrar,
  type WorkflowFunction,
} from "../../engine/api/workflowApi.ts";

function hasActors(env: PlatformEnv): env is WorkflowActorEnv {
  return Boolean(env.WORKFLOW_RUNS && env.WORKFLOW_RUN_INDEX);
}

/** The Durable Object backend behind `workflow.*`, for each environment with the run actors the runtime is given. */
export function installDurableObjectBackend(runtime: PlatformRuntime): void {
  runtime.onEnv((env) => {
    if (hasActors(env)) installWorkflowBackend(durableObjectWorkflowBackend(env));
  });
}

/**
 * The workflow capability of a project worker, plugged into `runtime`: the
 * recovery cron (the engine registers it on the first `workflow()` call) and
 * each schedule's cron, the run actors' host, the Durable Object backend,
 * the internal `__workflow` route, stream URLs and build metadata. Called
 * once, by `src/runtime/workflow/index.ts` where it declares `workflow`, so
 * only a project that imports `workflow` carries any of it. Answers the
 * engine's registry.
 */
export function installWorkflowCapability(runtime: PlatformRuntime): WorkflowFunction {
  const registerCron: CronRegistrar = ({ workflow: scheduled, ...cron }) =>
    runtime.registerCron({
      ...cron,
      run:
        scheduled === undefined
          ? async (env) => (hasActors(env) ? sweepStuckRuns(env) : "Re-enqueued 0 workflow(s)")
          : async (_env, _ctx, { scheduledTime }) => {
              // By hand (no scheduledTime): the latest tick so far, which starts nothing if it already ran.
              return describeScheduledRun(
                scheduled,
                await startScheduledRun(scheduled, scheduledTime ?? workflowRunHost.clock()),
              );
            },
    });
  setCronRegistrar(registerCron);

  // The run actors live in this worker: their environment is the runtime's too.
  workflowRunHost.useEnv = (env) => runtime.useEnv(env as PlatformEnv);
  // The run index actor's bulk operations cancel and rerun runs through the same backend as `workflow.*`.
  workflowRunHost.runControls = (env) => durableObjectWorkflowBackend(env as unknown as WorkflowActorEnv);

  installDurableObjectBackend(runtime);
  // The registrar too: an engine test's resetWorkflowsForTests() drops it, and this module is not evaluated again.
  runtime.onForget(() => {
    forgetWorkflowRegistrations();
    setCronRegistrar(registerCron);
  });

  // `ctx.env`: the project's variables in the runtime's environment (a run actor hands it over through workflowRunHost).
  setStepEnvSource(() => projectVariables(runtime.env));

  runtime.registerInternalRoute("__workflow", async (request, env, _ctx, rest) => {
    if (!hasActors(env)) return errorResponse(new PlatformError("not_found", "This project has no workflow actors."));
    return handleWorkflowRoute(request, env, rest);
  });

  // Stream URLs (workflow.streamURL): signed with the project's secret, served before user code, without a session.
  setStreamLinkIssuer(
    createStreamLinkIssuer(
      () => runtime.env,
      () => workflowRunHost.clock(),
    ),
  );
  runtime.registerPublicRoute(async (request, env) => {
    noteProjectBase(request);
    return serveRunStream(request, {
      backend: installedWorkflowBackend,
      secret: () => streamSecretOf(env),
      now: () => workflowRunHost.clock(),
    });
  });

  // Callback URLs (ctx.callbackURL): signed like stream URLs, served the same way; a POST delivers the event once.
  setCallbackLinkIssuer(createCallbackLinkIssuer(() => runtime.env));
  runtime.registerPublicRoute(async (request, env) =>
    serveRunCallback(request, {
      backend: installedWorkflowBackend,
      secret: () => streamSecretOf(env),
      now: () => workflowRunHost.clock(),
    }),
  );

  runtime.registerMetadata("workflows", () =>
    workflowDefinitions().map((d) => ({
      name: d.name,
      steps: Object.keys(d.steps),
      maxAttempts: d.maxAttempts,
      backoff: d.backoff,
      stepTimeoutMS: d.stepTimeoutMS,
      ...(Object.keys(d.stepOptions).length ? { stepOptions: d.stepOptions } : {}),
      ...(d.nonRetryableErrors.length ? { nonRetryableErrors: d.nonRetryableErrors } : {}),
      ...(Object.keys(d.renamed).length ? { renamed: d.renamed } : {}),
      retentionMS: d.retentionMS,
      ...(d.schedule ? { schedule: d.schedule } : {}),
    })),
  );
  return registry;
}
