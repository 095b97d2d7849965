/**
 * Where a project worker takes a run's callbacks: `/__platform/callbacks/<run
 * id>/<token>` (ctx.callbackURL). Public like a stream URL: the token, not the
 * caller, is checked, so the gateway lets it through and the entry serves it
 * without a session, before user code.
 */
export const RUN_CALLBACK_ROUTE_PREFIX = "/__platform/callbacks/";

/** `/__platform/callbacks/<one segment>/<one segment>`, nothing else (no `..`, no deeper path). */
export function isRunCallbackRoutePath(pathname: string): boolean {
  return /^\/__platform\/callbacks\/[^/]+\/[^/]+$/.test(pathname) && !pathname.split("/").includes("..");
}

/** The path of a run's callback URL. */
export function runCallbackRoutePath(runId: string, token: string): string {
  return `${RUN_CALLBACK_ROUTE_PREFIX}${encodeURIComponent(runId)}/${token}`;
}

/** The run id and token a callback path names; null for any other shape. */
export function parseRunCallbackRoutePath(pathname: string): { runId: string; token: string } | null {
  if (!isRunCallbackRoutePath(pathname)) return null;
  const match = /^([^/]{1,512})\/([A-Za-z0-9_.-]{1,8192})$/.exec(pathname.slice(RUN_CALLBACK_ROUTE_PREFIX.length));
  if (!match) return null;
  try {
    return { runId: decodeURIComponent(match[1]!), token: match[2]! };
  } catch {
    return null;
  }
}
