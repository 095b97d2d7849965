/**
 * Bindings the platform gives every project worker (see docs/deploying.md).
 * @example
 * export default { async fetch(request: Request, env: PlatformEnv & { API_KEY: string }) { return new Response(env.API_KEY ? "configured" : "missing"); } };
 */
export interface PlatformEnv {
  /** Service binding to the API worker. */
  PLATFORM_API?: Fetcher;
  /** 32 random bytes, hex: signs identity tokens; verifies the platform's internal calls. */
  PLATFORM_WORKER_SECRET?: string;
  PLATFORM_PROJECT_ID?: string;
  PLATFORM_PROJECT_SLUG?: string;
  /** Where the project is served (`https://<slug>.<domain>/`): the origin of its callback and stream URLs. */
  PLATFORM_PROJECT_URL?: string;
  /** "1" under `platform dev`: cookies drop `Secure`, sign-in uses the dummy form. */
  PLATFORM_LOCAL?: string;
  [binding: string]: unknown;
}
