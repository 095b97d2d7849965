/**
 * Where a project worker serves its runs' streams to browsers:
 * `/__platform/streams/<run id>/<token>` (workflow.streamURL). The one
 * `/__platform/` path that is public: the token, not the caller, is checked,
 * so the gateway lets it through and the entry serves it without a session.
 */
export const STREAM_ROUTE_PREFIX = "/__platform/streams/";

/** `/__platform/streams/<one segment>/<one segment>`, nothing else (no `..`, no deeper path). */
export function isStreamRoutePath(pathname: string): boolean {
  return /^\/__platform\/streams\/[^/]+\/[^/]+$/.test(pathname) && !pathname.split("/").includes("..");
}

/** The path of a run's stream URL. */
export function streamRoutePath(runId: string, token: string): string {
  return `${STREAM_ROUTE_PREFIX}${encodeURIComponent(runId)}/${token}`;
}

/** The run id and token a stream path names; null for any other shape. */
export function parseStreamRoutePath(pathname: string): { runId: string; token: string } | null {
  if (!isStreamRoutePath(pathname)) return null;
  const match = /^([^/]{1,512})\/([A-Za-z0-9_.-]{1,8192})$/.exec(pathname.slice(STREAM_ROUTE_PREFIX.length));
  if (!match) return null;
  try {
    return { runId: decodeURIComponent(match[1]!), token: match[2]! };
  } catch {
    return null;
  }
}
