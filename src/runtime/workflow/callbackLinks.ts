import { runCallbackRoutePath } from "../../contracts/runCallbackRoute.ts";
import { PlatformError } from "../../core/errors.ts";
import { signRunCallbackToken } from "../../core/runCallbackToken.ts";
import type { CallbackLinkIssuer } from "../../engine/control/callbackLink.ts";
import { projectBaseOf, streamSecretOf } from "./streamLinks.ts";

/** What of a worker's environment (PlatformEnv) callback URLs read. */
type CallbackEnv = Parameters<typeof projectBaseOf>[0];

/**
 * `ctx.callbackURL`: signs the grant with the project's worker secret (as a
 * stream URL, another key: core/runCallbackToken.ts) into an absolute URL on
 * the project's origin. Unlike a stream URL it is read outside the project's
 * pages (an email, a chat button, a third party's webhook setting), so a path
 * alone is no answer: with no known origin the step fails with `not_ready`
 * and is retried.
 */
export function createCallbackLinkIssuer(env: () => CallbackEnv): CallbackLinkIssuer {
  return async ({ runId, event, expiresAt }) => {
    const secret = streamSecretOf(env());
    if (!secret)
      throw new PlatformError(
        "not_ready",
        "ctx.callbackURL: this project worker has no PLATFORM_WORKER_SECRET binding",
      );
    const base = projectBaseOf(env());
    if (!base)
      throw new PlatformError(
        "not_ready",
        "ctx.callbackURL: the project's URL is not known (no PLATFORM_PROJECT_URL binding, and no request served yet)",
      );
    const token = await signRunCallbackToken(secret, { run: runId, evt: event, exp: expiresAt });
    return base + runCallbackRoutePath(runId, token);
  };
}
