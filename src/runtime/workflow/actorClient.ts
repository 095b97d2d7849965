import { PlatformError, type PlatformErrorCode } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import type { WorkflowRunView } from "../../engine/describeRun.ts";
import type { JsonValue } from "../../engine/json.ts";
import type { RecoveryReason } from "../../engine/recovery.ts";
import type { RunListPage, RunListQuery, RunSummary } from "../../engine/store.ts";
import type { StartedRun } from "../../engine/workflowApi.ts";
import type { WorkflowRun } from "./actors/WorkflowRunActor.ts";
import type { WorkflowRunIndex } from "./actors/WorkflowRunIndexActor.ts";

// Kept apart from the actor classes (which import cloudflare:workers) so the
// `platform` module stays importable outside workerd.

export interface WorkflowActorEnv extends PlatformEnv {
  WORKFLOW_RUNS: DurableObjectNamespace<WorkflowRun>;
  WORKFLOW_RUN_INDEX: DurableObjectNamespace<WorkflowRunIndex>;
}

/**
 * How other code calls the actors. The RPC stubs' inferred types recurse
 * through JSON values too deeply for the type checker, so callers see these
 * plain signatures instead (the actors' methods return exactly these shapes).
 */
export interface WorkflowRunActor {
  start(input: { runId: string; workflowId: string; name: string; data: JsonValue }): Promise<StartedRun>;
  execute(runId: string): Promise<{ done: boolean }>;
  get(runId: string): Promise<WorkflowRunView | null>;
  waitForTerminal(runId: string, maxWaitMS: number): Promise<WorkflowRunView | null>;
  recover(runId: string): Promise<RunRecovery>;
}

/** What `recover` found (null: not stuck) and whether it started an execution (false when the repair ended the run). */
export interface RunRecovery {
  reason: RecoveryReason | null;
  reenqueued: boolean;
}

export interface WorkflowRunIndexActor {
  record(summary: RunSummary): Promise<void>;
  list(query: RunListQuery): Promise<RunListPage>;
  get(runId: string): Promise<RunSummary | null>;
  activeRunIds(): Promise<string[]>;
}

export function workflowRunActor(env: WorkflowActorEnv, id: DurableObjectId): WorkflowRunActor {
  return withPlatformErrors(env.WORKFLOW_RUNS.get(id), ["start", "execute", "get", "waitForTerminal", "recover"]);
}

export function runIndexOf(env: WorkflowActorEnv): WorkflowRunIndexActor {
  return withPlatformErrors(env.WORKFLOW_RUN_INDEX.get(env.WORKFLOW_RUN_INDEX.idFromName("index")), ["record", "list", "get", "activeRunIds"]);
}

/**
 * An error thrown in an actor reaches the caller as a plain Error that keeps
 * its own properties (name, code, details) but not its class. Callers branch
 * on `instanceof PlatformError` (errorResponse, `run.result()` users), so the
 * class is restored here.
 */
function withPlatformErrors<T>(stub: object, methods: readonly (keyof T & string)[]): T {
  const call = (method: string) => async (...args: unknown[]) => {
    try {
      return await (stub as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
    } catch (error) {
      const remote = error as { name?: unknown; code?: unknown; message?: unknown; details?: unknown } | null;
      if (error instanceof PlatformError || remote?.name !== "PlatformError" || typeof remote.code !== "string") throw error;
      throw new PlatformError(remote.code as PlatformErrorCode, String(remote.message), remote.details as Record<string, unknown> | undefined);
    }
  };
  return Object.fromEntries(methods.map((method) => [method, call(method)])) as T;
}

