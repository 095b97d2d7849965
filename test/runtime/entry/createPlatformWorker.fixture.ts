/**
 * The test project of the createPlatformWorker tests: its own runtime with the capabilities user
 * code would register (two crons, email metadata, a plugin's internal route, a platform public
 * route), user code that records what reached it, and requests to internal routes carrying
 * tokens as the platform signs them, or not.
 */
import { createExecutionContext } from "cloudflare:test";
import { Router, type IRequest } from "itty-router";
import { createPlatformWorker, type ProjectExport } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { PlatformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { basePathOf } from "#src/runtime/entry/requestBasePath.ts";
import { INTERNAL_HEADER, signRequestToken, type TokenPurpose } from "#src/core/requestToken.ts";

export const SECRET = "ab".repeat(32);
export const OTHER_SECRET = "cd".repeat(32);
export const PROJECT_ID = "7";
export const ORIGIN = "https://shop.internal";

export const projectEnv = (): PlatformEnv => ({
  PLATFORM_WORKER_SECRET: SECRET,
  PLATFORM_PROJECT_ID: PROJECT_ID,
  PLATFORM_PROJECT_SLUG: "shop",
});

// The test project's own runtime, so capabilities other test modules load register elsewhere.
const projectRuntime = new PlatformRuntime();
export const createWorker = (project: ProjectExport) => createPlatformWorker(project, projectRuntime);

/** The project's crons: name, schedule, and what a run answers. */
export const CRONS = [
  { name: "nightly", schedule: "0 3 * * *", output: "ran nightly" },
  { name: "__workflow-recovery", schedule: "* * * * *", output: "Re-enqueued 0 workflow(s)" },
];

// What the test project's capabilities saw.
export const cronRuns: { name: string; env: PlatformEnv }[] = [];
export const pluginCalls: { method: string; rest: string; body: string; token: string | null }[] = [];

// What capabilities do as user code loads: register into the worker's runtime.
for (const { name, schedule, output } of CRONS) {
  projectRuntime.registerCron({
    name,
    schedule,
    run: async (env) => {
      cronRuns.push({ name, env });
      return output;
    },
  });
}
projectRuntime.registerMetadata("email", () => ({ sender: "shop" }));
projectRuntime.registerInternalRoute("__plugin", async (request, _env, _ctx, rest) => {
  pluginCalls.push({
    method: request.method,
    rest,
    body: await request.text(),
    token: request.headers.get(INTERNAL_HEADER),
  });
  return Response.json({ handled: rest });
});
projectRuntime.registerPublicRoute(async (request) =>
  new URL(request.url).pathname === "/api/auth/signout" ? new Response("signed out by the platform") : null,
);

/** A project whose user code records whether it was reached. */
export function recordingProject() {
  const seen: { path: string; basePath: string; method: string; body: string }[] = [];
  const router = Router<IRequest, [PlatformEnv, ExecutionContext]>();
  router.all("*", async (request) => {
    const r = request as unknown as Request;
    seen.push({
      path: new URL(r.url).pathname + new URL(r.url).search,
      basePath: basePathOf(r),
      method: r.method,
      body: await r.text(),
    });
    return new Response("user code");
  });
  return { worker: createWorker(router), seen };
}

export async function run(
  worker: ExportedHandler<PlatformEnv>,
  request: Request,
  env: PlatformEnv = projectEnv(),
): Promise<Response> {
  return worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, env, createExecutionContext());
}

/** What to sign differently from the request (each field defaults to the request's own, or this project's). */
export interface TokenSpec {
  purpose?: TokenPurpose;
  projectId?: string;
  secret?: string;
  method?: string;
  path?: string;
  body?: string | null;
  nowMS?: number;
}

export function internalToken(
  method: string,
  path: string,
  body: string | null,
  spec: TokenSpec = {},
): Promise<string> {
  return signRequestToken(
    spec.purpose ?? "internal",
    {
      method: spec.method ?? method,
      pathAndQuery: spec.path ?? path,
      body: spec.body === undefined ? body : spec.body,
    },
    { projectId: spec.projectId ?? PROJECT_ID, secret: spec.secret ?? SECRET, nowMS: spec.nowMS },
  );
}

export function internalRequest(
  method: string,
  path: string,
  token: string | null,
  body: string | null = null,
  headers: Record<string, string> = {},
) {
  const h = new Headers(headers);
  if (token !== null) h.set(INTERNAL_HEADER, token);
  return new Request(ORIGIN + path, { method, headers: h, body: body ?? undefined });
}

/** An internal request as the platform sends it: signed for exactly this method, path and body. */
export async function platformRequest(
  method: string,
  path: string,
  body: string | null = null,
  headers: Record<string, string> = {},
): Promise<Request> {
  return internalRequest(method, path, await internalToken(method, path, body), body, headers);
}
