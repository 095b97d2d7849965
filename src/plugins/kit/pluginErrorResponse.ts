import { errorResponse, PlatformError } from "../../core/errors.ts";

/**
 * The platform's JSON error for a plugin worker's answer (the plugin routers'
 * one `catch`, which also logs what is not a PlatformError); a `rate_limited`
 * error with `details.retryAfterSeconds` also gets `Retry-After`. Anything
 * that is not a PlatformError answers 500 "Internal error".
 */
export function pluginErrorResponse(error: unknown): Response {
  if (!(error instanceof PlatformError)) return errorResponse(error);
  const headers: Record<string, string> = { "Cache-Control": "no-store" };
  const retry = error.details?.retryAfterSeconds;
  if (error.code === "rate_limited" && typeof retry === "number" && Number.isFinite(retry)) {
    headers["Retry-After"] = String(Math.max(1, Math.ceil(retry)));
  }
  return errorResponse(error, headers);
}
