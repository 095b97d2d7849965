/**
 * Headers Miniflare's entry worker obeys when a request carries them, read
 * from node_modules/miniflare (its `CoreHeaders`): `MF-Route-Override` picks
 * the worker that answers, `MF-Original-URL` and `X-Forwarded-Proto` rewrite
 * the URL routed on, `MF-CF-Blob` forges `request.cf`, `MF-Op*` drive its
 * proxy, `MF-Disable-Pretty-Error`… Every `MF-*` is Miniflare's own; `CF-*`
 * is what Cloudflare's edge sets (`CF-Connecting-IP` above all, which the
 * platform's rate limits count by) and never takes from a client.
 */
function isRuntimeInternal(lowerName: string): boolean {
  return lowerName.startsWith("mf-") || lowerName.startsWith("cf-") || lowerName === "x-forwarded-proto";
}

/**
 * A public request's headers (Node's `rawHeaders`: name, value, name,
 * value…) as `platform up`'s public entry passes them on: without any header
 * the runtime or Cloudflare's edge would trust, and with `CF-Connecting-IP`
 * the address the request came from, as Cloudflare's edge sets it.
 */
export function publicRequestHeaders(rawHeaders: readonly string[], clientAddress: string | undefined): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2)
    if (!isRuntimeInternal(rawHeaders[i]!.toLowerCase())) kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  if (clientAddress) kept.push("CF-Connecting-IP", clientAddress.replace(/^::ffff:(?=\d+\.)/, ""));
  return kept;
}

/** Paths Cloudflare's edge answers itself and Miniflare serves its local tools on (`/cdn-cgi/local/*`): never a worker's. */
export function isRuntimePath(pathname: string): boolean {
  return pathname === "/cdn-cgi" || pathname.startsWith("/cdn-cgi/");
}
