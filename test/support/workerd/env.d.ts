import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      DB: D1Database;
      WORKFLOW_QUEUE: Queue<{ runId: string; scriptName: string }>;
      TEST_MIGRATIONS: D1Migration[];
      ADMIN_TOKEN: string;
      PLATFORM_DOMAIN: string;
      /** Starts an uploaded script in a real workerd, for the upload stand-in (test/support/node/scriptStarterService.ts). */
      SCRIPT_STARTER: Fetcher;
      WORKFLOW_RUNS: DurableObjectNamespace<import("#src/objects/WorkflowRun.ts").WorkflowRunActor>;
      RATE_LIMITER: DurableObjectNamespace<import("#src/objects/RateLimiter.ts").RateLimiter>;
      LIVE_RUN_BUDGET: DurableObjectNamespace<import("#src/objects/LiveRunBudget.ts").LiveRunBudget>;
      SESSION_CODES: DurableObjectNamespace<import("#src/objects/SessionCode.ts").SessionCode>;
      WORKFLOW_RUN_INDEX: DurableObjectNamespace<import("#src/objects/WorkflowRunIndexActor.ts").WorkflowRunIndexActor>;
      WORKFLOW_FLOW_KEYS: DurableObjectNamespace<import("#src/objects/WorkflowFlowKeyActor.ts").WorkflowFlowKeyActor>;
    }
  }
}
