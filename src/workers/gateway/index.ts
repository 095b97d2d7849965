import { PlatformError } from "../../core/errors.ts";
import { createPlatformRouter, type RoutedRequest } from "../../core/web/router.ts";
import { resolveDispatcher, type DispatcherEnv } from "../dispatch/dispatcher.ts";
import { findProjectBySlug } from "../db/projectsTable.ts";
import { BASE_PATH_HEADER } from "../../contracts/platformHeaders.ts";
import { resolveGatewayRoute } from "./resolveRoute.ts";

export interface GatewayEnv extends DispatcherEnv {
  DB: D1Database;
  /** e.g. `example.app`: projects answer on `<slug>.example.app` and `example.app/<slug>/`. */
  PLATFORM_DOMAIN: string;
  /** Local development only: the project served for any other host (e.g. `127.0.0.1`). */
  DEFAULT_PROJECT?: string;
}

/** Every request, whatever its method and path, goes to the project its host or first path segment names. */
async function forwardToProject(request: RoutedRequest, env: GatewayEnv): Promise<Response> {
  const url = new URL(request.url);
  let route = resolveGatewayRoute(url, env.PLATFORM_DOMAIN, env.DEFAULT_PROJECT);
  if (route.kind === "blocked") throw new PlatformError("not_found", "Not found.");
  if (route.kind === "none") throw new PlatformError("not_found", `No project at ${url.host}${url.pathname}.`);

  let project = await findProjectBySlug(env.DB, route.slug);
  // Locally the bare host (`localhost`) also serves the default project: a first path segment
  // that is no private project is just one of its paths.
  if (route.via === "prefix" && env.DEFAULT_PROJECT && project?.private !== 1) {
    route = { kind: "project", slug: env.DEFAULT_PROJECT, basePath: "", via: "default" };
    project = await findProjectBySlug(env.DB, route.slug);
  }
  if (!project) throw new PlatformError("not_found", `No project named "${route.slug}".`);
  if (project.private === 1 && route.via === "subdomain") {
    throw new PlatformError(
      "not_found",
      `Project "${route.slug}" is a private deployment: open it at ${url.protocol}//${env.PLATFORM_DOMAIN}${url.port ? ":" + url.port : ""}/${route.slug}/.`,
    );
  }
  if (project.private === 0 && route.via === "prefix") {
    const target = new URL(url);
    target.hostname = `${route.slug}.${env.PLATFORM_DOMAIN}`;
    target.pathname = url.pathname.slice(route.basePath.length) || "/";
    return Response.redirect(target.toString(), 308);
  }
  const worker = resolveDispatcher(env).get(project.script_name);
  if (!worker) throw new PlatformError("upstream_error", `Project "${route.slug}" has not been deployed yet.`);

  const headers = new Headers(request.headers);
  for (const name of [...headers.keys()]) if (name.toLowerCase().startsWith("x-platform-")) headers.delete(name);
  if (route.basePath) headers.set(BASE_PATH_HEADER, route.basePath);
  const response = await worker.fetch(new Request(request, { headers }));
  return project.private === 1 ? withinOwnPrefix(response) : response;
}

/**
 * Private projects share one origin, so a service worker of one may not widen
 * its scope past its own `/<slug>/` prefix: without `Service-Worker-Allowed`
 * the browser caps a service worker's scope at its script's folder, and a
 * neighbour's worker could otherwise intercept this project's pages (and the
 * sign-in callback POST to it).
 */
function withinOwnPrefix(response: Response): Response {
  if (!response.headers.has("Service-Worker-Allowed")) return response;
  const headers = new Headers(response.headers);
  headers.delete("Service-Worker-Allowed");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

const router = createPlatformRouter<GatewayEnv>("gateway").all("*", forwardToProject);

export default {
  fetch: router.fetch,
} satisfies ExportedHandler<GatewayEnv>;
