import type { RateLimiter } from "../../objects/RateLimiter.ts";
import type { SessionCode } from "../../objects/SessionCode.ts";
import type { DispatcherEnv } from "../../workers/dispatch/dispatcher.ts";

/** Bindings every plugin worker has (docs/plugins-contract.md, "Workers and where things live"). */
export interface PluginEnv extends DispatcherEnv {
  DB: D1Database;
  /** `RateLimiter` actors, one per project (class exported by the API worker). */
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  /** `SessionCode` actors, one per install code (class exported by the API worker). */
  SESSION_CODES?: DurableObjectNamespace<SessionCode>;
  /** Secret: 32 bytes as 64 hex characters (or base64/base64url); encrypts stored OAuth tokens. */
  TOKEN_ENCRYPTION_KEY?: string;
  /** Secret: 32+ characters; signs OAuth `state` and resource owner refs. */
  STATE_SECRET?: string;
  /**
   * "1" under `platform dev` (not `--public`): a local project is a private deployment for the proxy
   * rate, whatever its registry row says (kit/rateLimit.ts). Never set deployed or under `platform up`.
   */
  LOCAL_PROJECTS_PRIVATE?: string;
}
