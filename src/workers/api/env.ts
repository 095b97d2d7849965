import type { DispatcherEnv } from "../shared/dispatcher.ts";

export interface WorkflowExecuteMessage {
  runId: string;
  scriptName: string;
}

export interface ApiEnv extends DispatcherEnv {
  DB: D1Database;
  WORKFLOW_QUEUE: Queue<WorkflowExecuteMessage>;
  /** Bootstraps users (`POST /admin/users`). Set with `wrangler secret put ADMIN_TOKEN`. */
  ADMIN_TOKEN?: string;
}
