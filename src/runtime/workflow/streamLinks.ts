import { streamRoutePath } from "../../contracts/streamRoute.ts";
import { randomBase64url } from "../../core/crypto/encoding.ts";
import { PlatformError } from "../../core/errors.ts";
import { signStreamToken } from "../../core/streamToken.ts";
import type { Clock } from "../../engine/api/clock.ts";
import type { StreamLinkIssuer } from "../../engine/streams/streamLink.ts";
import { basePathOf } from "../entry/requestBasePath.ts";

/** What of a worker's environment (PlatformEnv) stream URLs read. */
type StreamEnv = {
  readonly PLATFORM_WORKER_SECRET?: unknown;
  readonly PLATFORM_LOCAL?: unknown;
  readonly PLATFORM_PROJECT_URL?: unknown;
};

let localFallbackSecret: string | null = null;

/**
 * The secret stream tokens are signed with: the project's worker secret (the
 * key is derived from it, see core/streamToken.ts). Under `platform dev
 * --node` there is none: a random one for the process, so its URLs last until
 * it restarts (as its sessions do).
 */
export function streamSecretOf(env: StreamEnv | null): string | null {
  const secret = env?.PLATFORM_WORKER_SECRET;
  if (typeof secret === "string" && secret !== "") return secret;
  if (env?.PLATFORM_LOCAL !== "1") return null;
  localFallbackSecret ??= randomBase64url(32);
  return localFallbackSecret;
}

let projectBase: string | null = null;

/**
 * Remembers where the project is served (origin and a private deployment's
 * `/<slug>`), from the requests it answers: a stream URL points there.
 */
export function noteProjectBase(request: Request): void {
  projectBase = new URL(request.url).origin + basePathOf(request);
}

/**
 * Where the project is served, for URLs it hands out (stream and callback
 * URLs): `PLATFORM_PROJECT_URL` when the platform binds it (`platform dev`,
 * `platform up`, a deploy), else what the requests it answered showed, else
 * null (a step in a fresh actor before any request, with no binding).
 */
export function projectBaseOf(env: StreamEnv | null): string | null {
  const bound = env?.PLATFORM_PROJECT_URL;
  if (typeof bound === "string" && /^https?:\/\/[^/]/.test(bound)) return bound.replace(/\/+$/, "");
  return projectBase;
}

/**
 * Signs a grant into a URL on the project's origin; when that is not known
 * (see projectBaseOf) it answers the path alone, which a page of the project
 * resolves against its own origin.
 */
export function createStreamLinkIssuer(env: () => StreamEnv | null, now: Clock): StreamLinkIssuer {
  return async ({ runId, topics, ttlMS }) => {
    const secret = streamSecretOf(env());
    if (!secret)
      throw new PlatformError(
        "not_ready",
        "workflow.streamURL: this project worker has no PLATFORM_WORKER_SECRET binding",
      );
    const token = await signStreamToken(secret, { run: runId, ...(topics ? { topics } : {}), exp: now() + ttlMS });
    return (projectBaseOf(env()) ?? "") + streamRoutePath(runId, token);
  };
}
