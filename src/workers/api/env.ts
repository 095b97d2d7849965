import type { InstallUrlVar, PluginBinding } from "../../contracts/pluginRegistry.ts";
import type { LiveRunBudget } from "../../objects/LiveRunBudget.ts";
import type { RateLimiter } from "../../objects/RateLimiter.ts";
import type { SessionCode } from "../../objects/SessionCode.ts";
import type { DispatcherEnv } from "../dispatch/dispatcher.ts";
import type { ProjectLog } from "./projectLogs/ProjectLog.ts";

export interface WorkflowExecuteMessage {
  runId: string;
  scriptName: string;
}

/** Service bindings to the plugin workers (pluginRegistry.ts), for handing them a deployed project's handlers. */
type PluginWorkers = { [binding in PluginBinding]?: Fetcher };
/** Public URLs of the installable plugins' workers, for install links (`<url>/install?code=…`). */
type PluginInstallUrls = { [urlVar in InstallUrlVar]?: string };

export interface ApiEnv extends DispatcherEnv, PluginWorkers, PluginInstallUrls {
  DB: D1Database;
  WORKFLOW_QUEUE: Queue<WorkflowExecuteMessage>;
  /** Seals project secrets at rest (`platform secret put`): 32 bytes, hex or base64. Set with `wrangler secret put SECRETS_ENCRYPTION_KEY`. */
  SECRETS_ENCRYPTION_KEY?: string;
  /** Bootstraps users (`POST /admin/users`). Set with `wrangler secret put ADMIN_TOKEN`. */
  ADMIN_TOKEN?: string;
  /** Public domain projects answer on, e.g. `example.app`. */
  PLATFORM_DOMAIN?: string;
  /** Local only (`platform up`): where projects are reached, e.g. `http://localhost:8800`; default `https://<PLATFORM_DOMAIN>`. */
  PROJECTS_BASE_URL?: string;
  /** The login worker's public URL, e.g. `https://login.example.app`; deployed projects get it as `PLATFORM_LOGIN_URL`. */
  LOGIN_PUBLIC_URL?: string;
  /** Workers for Platforms upload target (`PUT /projects/:slug/deployment`). */
  CLOUDFLARE_ACCOUNT_ID?: string;
  DISPATCH_NAMESPACE?: string;
  /** Secret: an API token with Workers Scripts:Edit. */
  CLOUDFLARE_API_TOKEN?: string;
  /** Defaults to https://api.cloudflare.com/client/v4. */
  CLOUDFLARE_API_BASE?: string;
  /** Tests only: a fake Cloudflare API reached through a binding instead of the internet. */
  CLOUDFLARE_API?: Fetcher;
  /** Most projects one account may own (a whole number from 1; default 20, see projectsPerAccount.ts). */
  MAX_PROJECTS_PER_ACCOUNT?: string;
  /** Most live runs (started, not ended) one account may have (a whole number from 1; default 10,000, see liveRunsPerAccount.ts). */
  MAX_LIVE_RUNS_PER_ACCOUNT?: string;
  /** The live-run budget, one actor per account (exported by this worker): `POST /internal/workflow/live-runs/*`. */
  LIVE_RUN_BUDGET: DurableObjectNamespace<LiveRunBudget>;
  /** Rate counters, one actor per account (the plugins' actor, exported by this worker): `POST /internal/workflow/execute` takes from it. */
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  /** One log per project (`platform logs`, fed by this worker's Tail Worker handler); the class is exported by this worker. */
  PROJECT_LOGS?: DurableObjectNamespace<ProjectLog>;
  /** One-time plugin install codes (`POST /oauth/session`); the class is exported by this worker. */
  SESSION_CODES?: DurableObjectNamespace<SessionCode>;
}
