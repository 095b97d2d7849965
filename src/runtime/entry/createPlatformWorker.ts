import { parseCronDelivery } from "../../contracts/cronDelivery.ts";
import { isPublicPlatformPath } from "../../contracts/publicPlatformPaths.ts";
import { errorResponse, PlatformError } from "../../core/errors.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { INTERNAL_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import { devErrorResponse } from "./devErrorResponse.ts";
import type { PlatformEnv } from "./platformEnv.ts";
import { platformRuntime, type PlatformRuntime } from "./platformRuntime.ts";
import { withBasePathStripped } from "./requestBasePath.ts";

/** What a project may export as default: an itty-router `Router` or any `{ fetch }`. */
export interface ProjectExport {
  fetch(request: Request, env: PlatformEnv, ctx: ExecutionContext): Response | Promise<Response> | unknown;
  [handler: string]: unknown;
}

const INTERNAL_BODY_LIMIT = 1024 * 1024;

function notFound(): Response {
  return errorResponse(new PlatformError("not_found", "Not found."));
}

/**
 * Internal routes answer only the platform: the request must carry an
 * `internal` token signed with this project's worker secret. Anything else
 * gets the same 404 as a path that does not exist.
 */
async function handleInternal(
  runtime: PlatformRuntime,
  request: Request,
  env: PlatformEnv,
  ctx: ExecutionContext,
  prefix: string,
  rest: string,
): Promise<Response> {
  const secret = env.PLATFORM_WORKER_SECRET;
  const projectId = env.PLATFORM_PROJECT_ID;
  if (!secret || !projectId) return notFound();
  let body: Uint8Array | null = null;
  if (request.method !== "GET" && request.method !== "HEAD") {
    // Until the token is checked the caller is nobody: an oversized body gets the same 404.
    try {
      body = await readBodyBytes(request, INTERNAL_BODY_LIMIT);
    } catch {
      return notFound();
    }
  }
  const check = await verifyRequestToken(
    "internal",
    request.headers.get(INTERNAL_HEADER),
    { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body },
    { lookupSecret: (id) => (id === projectId ? secret : null) },
  );
  if (!check.ok) return notFound();
  const authenticated = new Request(request.url, { method: request.method, headers: request.headers, body });

  if (prefix === "__platform" && rest === "/metadata" && request.method === "GET") {
    return Response.json(runtime.metadata());
  }
  if (prefix === "__cron" && request.method === "POST") {
    const cron = runtime.cron(decodeURIComponent(rest.slice(1)));
    if (!cron) return notFound();
    return Response.json({ cron: cron.name, output: await cron.run(env, ctx, parseCronDelivery(body)) });
  }
  const handler = runtime.internalRoute(prefix);
  return handler ? handler(authenticated, env, ctx, rest) : notFound();
}

/**
 * Turns a project's default export into a platform user worker: platform
 * routes first (internal ones authenticated), then the project's own. Serves
 * from the worker's runtime (the one its capabilities registered into) and
 * hands it the environment of every request, cron and event.
 */
export function createPlatformWorker(
  project: ProjectExport,
  runtime: PlatformRuntime = platformRuntime,
): ExportedHandler<PlatformEnv> {
  if (!project || typeof project.fetch !== "function") {
    throw new TypeError(
      "The project's default export must be an itty-router Router or an object with a fetch(request, env, ctx) method.",
    );
  }
  const worker: ExportedHandler<PlatformEnv> = {
    async fetch(incoming, env, ctx) {
      runtime.useEnv(env);
      try {
        const url = new URL(incoming.url);
        const internal = /^\/(__platform|__workflow|__cron|__plugin)(\/.*)?$/.exec(url.pathname);
        if (internal && !isPublicPlatformPath(url.pathname))
          return await handleInternal(runtime, incoming as Request, env, ctx, internal[1]!, internal[2] ?? "");

        const request = withBasePathStripped(incoming as Request);
        for (const handler of runtime.publicRoutes) {
          const response = await handler(request, env, ctx);
          if (response) return response;
        }
        // A public platform path no capability served is not the project's either.
        if (isPublicPlatformPath(new URL(request.url).pathname)) return notFound();
        const response = await project.fetch(request, env, ctx);
        if (response instanceof Response) return response;
        return errorResponse(
          new PlatformError("not_found", `No route for ${request.method} ${new URL(request.url).pathname}.`),
        );
      } catch (error) {
        if (error instanceof PlatformError) return errorResponse(error);
        console.error("Unhandled error in project worker:", error);
        return (await devErrorResponse(error, incoming as Request, env)) ?? errorResponse(error);
      }
    },
  };
  for (const name of ["scheduled", "queue", "tail", "email"] as const) {
    const handler = project[name];
    if (typeof handler === "function") {
      (worker as Record<string, unknown>)[name] = (event: unknown, env: PlatformEnv, ctx: ExecutionContext) => {
        runtime.useEnv(env);
        return handler.call(project, event, env, ctx);
      };
    }
  }
  return worker;
}
