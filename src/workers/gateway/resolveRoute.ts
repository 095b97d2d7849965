import { isStreamRoutePath } from "../../contracts/streamRoute.ts";

/**
 * Pure routing for the gateway: which project a request is for, and under
 * which base path the project sees itself.
 */
export type GatewayRoute =
  | { kind: "project"; slug: string; basePath: string; via: "subdomain" | "prefix" | "default" }
  | { kind: "blocked" }
  | { kind: "none" };

/** Paths only the platform may call on a project worker. */
const INTERNAL_PREFIXES = ["/__plugin", "/__workflow", "/__cron", "/__platform"];

export function isInternalPath(pathname: string): boolean {
  if (isStreamRoutePath(pathname)) return false;
  return INTERNAL_PREFIXES.some((p) => pathname === p || pathname.startsWith(p + "/"));
}

const SLUG = /^[a-z][a-z0-9-]{1,38}[a-z0-9]$/;

/**
 * `<slug>.<domain>` → that project at `/`; `<domain>/<slug>/…` → that project
 * under the `/<slug>` prefix (private deployments); any other host → the
 * default project when one is configured (local development serves the
 * project at `http://127.0.0.1:N/`).
 */
export function resolveGatewayRoute(url: URL, platformDomain: string, defaultSlug?: string): GatewayRoute {
  const host = url.hostname.toLowerCase();
  const domain = platformDomain.toLowerCase();
  let decodedPath: string;
  try {
    decodedPath = decodeURIComponent(url.pathname);
  } catch {
    decodedPath = url.pathname;
  }
  if (host.endsWith("." + domain)) {
    const slug = host.slice(0, -(domain.length + 1));
    if (!SLUG.test(slug)) return { kind: "none" };
    if (isInternalPath(decodedPath)) return { kind: "blocked" };
    return { kind: "project", slug, basePath: "", via: "subdomain" };
  }
  if (host === domain) {
    const match = /^\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (!match || !SLUG.test(match[1]!)) return { kind: "none" };
    const rest = match[2] ?? "/";
    let decodedRest: string;
    try {
      decodedRest = decodeURIComponent(rest);
    } catch {
      decodedRest = rest;
    }
    if (isInternalPath(decodedRest)) return { kind: "blocked" };
    return { kind: "project", slug: match[1]!, basePath: "/" + match[1], via: "prefix" };
  }
  if (defaultSlug) {
    if (isInternalPath(decodedPath)) return { kind: "blocked" };
    return { kind: "project", slug: defaultSlug, basePath: "", via: "default" };
  }
  return { kind: "none" };
}
