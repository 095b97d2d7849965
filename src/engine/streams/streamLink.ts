import { PlatformError } from "../../core/errors.ts";
import { refuseUnknownKeys } from "../../core/unknownKeys.ts";
import { checkStreamQuery } from "./runStream.ts";

/** How long a stream URL opens its stream by default: 1 hour. */
export const DEFAULT_STREAM_LINK_TTL_MS = 60 * 60 * 1000;
/** At most 24 hours. */
export const MAX_STREAM_LINK_TTL_MS = 24 * 60 * 60 * 1000;

/** What a stream URL grants: that run's stream, these topics (absent: all), for this long. */
export interface StreamLinkGrant {
  runId: string;
  topics?: string[];
  ttlMS: number;
}

/** The host's side of `workflow.streamURL`: signs the grant and answers the URL (the runtime knows the secret and the origin). */
export type StreamLinkIssuer = (grant: StreamLinkGrant) => Promise<string>;

/** `workflow.streamURL`'s options, checked. */
export function checkStreamLinkOptions(runId: unknown, options: unknown): StreamLinkGrant {
  const what = "workflow.streamURL";
  if (typeof runId !== "string" || runId === "")
    throw new PlatformError("invalid_input", `${what} needs a run id string`);
  if (options !== undefined && (typeof options !== "object" || options === null || Array.isArray(options)))
    throw new PlatformError("invalid_input", `${what}: the options must be an object { topics?, ttlMS? }`);
  const given = (options ?? {}) as { topics?: unknown; ttlMS?: unknown };
  refuseUnknownKeys(given, ["topics", "ttlMS"], `${what} options`);
  const ttlMS = given.ttlMS ?? DEFAULT_STREAM_LINK_TTL_MS;
  if (typeof ttlMS !== "number" || !Number.isSafeInteger(ttlMS) || ttlMS < 1 || ttlMS > MAX_STREAM_LINK_TTL_MS)
    throw new PlatformError(
      "invalid_input",
      `${what}: ttlMS must be a whole number of milliseconds from 1 to ${MAX_STREAM_LINK_TTL_MS} (24 hours), not ${String(ttlMS)}`,
    );
  const { topics } = checkStreamQuery({ topics: given.topics }, what);
  return { runId, ttlMS, ...(topics ? { topics } : {}) };
}
