import { errorResponse, PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";

/**
 * The project side of plugin dispatch. A plugin worker POSTs to
 * `/__plugin/<pluginId>` (the entry wrapper has already checked the platform's
 * `internal` token); the handler the plugin's runtime module registered with
 * `registerPluginHandler` answers. Each plugin module also reports what the
 * project registered (commands, events) under metadata `plugins.<pluginId>`.
 */
export interface PluginRequestContext {
  /** The parsed JSON body (a `PluginDispatch` from src/contracts/pluginDispatch.ts). */
  body: unknown;
  request: Request;
  env: PlatformEnv;
  ctx: ExecutionContext;
}

/** Returns a Response, or any JSON value (answered 200). */
export type PluginHandler = (context: PluginRequestContext) => Promise<unknown> | unknown;

const handlers = new Map<string, PluginHandler>();
const metadataContributors = new Map<string, () => unknown>();

function notFound(): Response {
  return errorResponse(new PlatformError("not_found", "Not found."));
}

platformRuntime.registerInternalRoute("__plugin", async (request, env, ctx, rest) => {
  const match = /^\/([a-z][a-z0-9-]{0,31})$/.exec(rest);
  const handler = match ? handlers.get(match[1]!) : undefined;
  if (!handler || request.method !== "POST") return notFound();
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    return errorResponse(new PlatformError("malformed_json", "Plugin dispatch body is not valid JSON."));
  }
  try {
    const result = await handler({ body, request, env, ctx });
    return result instanceof Response ? result : Response.json(result ?? { ok: true });
  } catch (error) {
    if (!(error instanceof PlatformError)) console.error(`plugin ${match![1]} handler failed:`, error);
    return errorResponse(error);
  }
});

platformRuntime.registerMetadata("plugins", () => {
  const out: Record<string, unknown> = {};
  for (const [pluginId, contributor] of metadataContributors) out[pluginId] = contributor();
  return out;
});

export function registerPluginHandler(pluginId: string, handler: PluginHandler): void {
  handlers.set(pluginId, handler);
}

/** `contributor()` is called at build time; e.g. `() => ({ commands: [...], events: [...] })`. */
export function registerPluginMetadata(pluginId: string, contributor: () => unknown): void {
  metadataContributors.set(pluginId, contributor);
}
