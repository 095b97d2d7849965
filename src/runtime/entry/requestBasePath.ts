import { BASE_PATH_HEADER } from "../../contracts/platformHeaders.ts";

/**
 * A private deployment is served under `/<slug>`; the gateway says so in
 * `X-Platform-Base-Path`. The entry strips the prefix before user code sees
 * the request (so the same routes work public and private) and remembers it
 * here, so redirects and cookie paths can put it back.
 */
const basePaths = new WeakMap<Request, string>();

export function withBasePathStripped(request: Request): Request {
  const basePath = request.headers.get(BASE_PATH_HEADER) ?? "";
  if (!/^\/[a-z][a-z0-9-]{1,38}[a-z0-9]$/.test(basePath)) return request;
  const url = new URL(request.url);
  if (url.pathname !== basePath && !url.pathname.startsWith(basePath + "/")) return request;
  url.pathname = url.pathname.slice(basePath.length) || "/";
  const stripped = new Request(url, request);
  basePaths.set(stripped, basePath);
  return stripped;
}

/** `/<slug>` on a private deployment, `""` otherwise. */
export function basePathOf(request: Request): string {
  return basePaths.get(request) ?? "";
}
