/**
 * A public path that names one run and carries a signed token for it:
 * `<prefix><run id>/<token>`. Stream URLs and callback URLs share this shape;
 * the token, not the caller, is checked, so the gateway lets such a path
 * through and the entry serves it without a session, before user code.
 */
export interface RunTokenPath {
  /** `<prefix><one segment>/<one segment>`, nothing else (no `..`, no deeper path). */
  matches(pathname: string): boolean;
  /** The path for `runId` and its token. */
  of(runId: string, token: string): string;
  /** The run id and token a path names; null for any other shape. */
  parse(pathname: string): { runId: string; token: string } | null;
}

const TAIL = /^([^/]{1,512})\/([A-Za-z0-9_.-]{1,8192})$/;

/** The run-and-token paths under `prefix` (e.g. `/__platform/streams/`). */
export function runTokenPath(prefix: string): RunTokenPath {
  const matches = (pathname: string) => {
    if (!pathname.startsWith(prefix)) return false;
    const segments = pathname.slice(prefix.length).split("/");
    return segments.length === 2 && segments.every((segment) => segment !== "" && segment !== "..");
  };
  return {
    matches,
    of: (runId, token) => `${prefix}${encodeURIComponent(runId)}/${token}`,
    parse(pathname) {
      if (!matches(pathname)) return null;
      const match = TAIL.exec(pathname.slice(prefix.length));
      if (!match) return null;
      try {
        return { runId: decodeURIComponent(match[1]!), token: match[2]! };
      } catch {
        return null;
      }
    },
  };
}
