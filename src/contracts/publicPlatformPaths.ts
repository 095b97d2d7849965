import { isRunCallbackRoutePath } from "./runCallbackRoute.ts";
import { isStreamRoutePath } from "./streamRoute.ts";

/**
 * Platform routes under `/__platform` that answer anyone on the project's
 * origin, not only the platform: a third party's signed webhook deliveries,
 * a run's stream and a run's callback (their token, not the caller, is
 * checked). The gateway
 * lets them through and the project's entry serves them from the platform's
 * own handlers, never from user code. Every other `/__platform` path stays
 * internal. The one rule both the gateway and the entry read.
 */
const PUBLIC_PLATFORM_PATHS = [/^\/__platform\/webhooks\/[a-z0-9][a-z0-9_-]{0,63}$/];

/** A webhook: exactly one segment after the prefix, of the names' own characters; a stream or callback: their route files' shape. */
export function isPublicPlatformPath(pathname: string): boolean {
  return (
    PUBLIC_PLATFORM_PATHS.some((path) => path.test(pathname)) ||
    isStreamRoutePath(pathname) ||
    isRunCallbackRoutePath(pathname)
  );
}
