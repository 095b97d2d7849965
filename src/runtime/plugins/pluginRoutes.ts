import { errorResponse, PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import type { PlatformRuntime } from "../entry/platformRuntime.ts";
import { NoPluginHandler } from "./noPluginHandler.ts";

/**
 * The project side of plugin delivery. A plugin worker POSTs to
 * `/__plugin/<pluginId>` (the entry wrapper has already checked the platform's
 * `internal` token); the handler the plugin's runtime module installed with
 * `installPluginHandler` answers. Each plugin module also reports what the
 * project registered (commands, events) under metadata `plugins.<pluginId>`.
 * Nothing is installed on import: the route goes in with the first handler.
 */
export interface PluginRequestContext {
  /** The parsed JSON body (a `PluginDelivery` from src/contracts/pluginDelivery.ts). */
  body: unknown;
  request: Request;
  env: PlatformEnv;
  ctx: ExecutionContext;
}

/** Returns a Response, or any JSON value (answered 200). */
export type PluginHandler = (context: PluginRequestContext) => Promise<unknown> | unknown;

const handlers = new Map<string, PluginHandler>();
const metadataContributors = new Map<string, () => unknown>();

/**
 * What a delivery came to, kept (last `OUTCOMES_KEPT`) only under `platform
 * dev` (`PLATFORM_LOCAL`), where `platform plugin trigger` reads it through
 * `GET /__plugin/<pluginId>`: the delivery itself runs after the plugin
 * answered the provider, so nothing else can tell the developer what happened.
 */
export type DeliveryOutcome = { seq: number; kind: string | null; name: string | null; status: number } & (
  | { result: "handled"; handlers?: number }
  | { result: "no_handler"; message: string }
  | { result: "failed"; error: { code: string; message: string; stack?: string } }
);

const OUTCOMES_KEPT = 20;
const outcomes = new Map<string, DeliveryOutcome[]>();
let outcomeSeq = 0;

function notFound(): Response {
  return errorResponse(new PlatformError("not_found", "Not found."));
}

function noHandlerResponse(error: NoPluginHandler): Response {
  return Response.json({ error: error.toJSON(), handled: 0 }, { status: 404 });
}

type Result = DistributiveOmit<DeliveryOutcome, "seq" | "kind" | "name">;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A handler's answer: a Response as is, a value as 200 JSON; `handled: 0` means no handler took it. */
function answered(pluginId: string, result: unknown): { response: Response; outcome: Result } {
  const response = result instanceof Response ? result : Response.json(result ?? { ok: true });
  const handlers = (result as { handled?: unknown } | null)?.handled;
  if (handlers === 0)
    return {
      response,
      outcome: { result: "no_handler", status: response.status, message: `No ${pluginId} handler took this event.` },
    };
  return {
    response,
    outcome: { result: "handled", status: response.status, ...(typeof handlers === "number" ? { handlers } : {}) },
  };
}

function threw(pluginId: string, error: unknown): { response: Response; outcome: Result } {
  if (error instanceof NoPluginHandler) {
    const response = noHandlerResponse(error);
    return { response, outcome: { result: "no_handler", status: response.status, message: error.message } };
  }
  // Logged whatever it is (a platform error such as rate_limited too): the delivery ran after the provider had
  // its answer, so the project's log (its stack mapped there) and the terminal are where the developer sees it.
  console.error(`plugin ${pluginId} handler failed:`, error);
  const response = errorResponse(error);
  // Recorded for the developer's own machine only: an unexpected error's message and stack too.
  const { code, message } =
    error instanceof PlatformError ? error : { code: "internal", message: String((error as Error)?.message ?? error) };
  const stack = error instanceof Error && typeof error.stack === "string" ? { stack: error.stack } : {};
  return { response, outcome: { result: "failed", status: response.status, error: { code, message, ...stack } } };
}

function remember(env: PlatformEnv, pluginId: string, body: unknown, outcome: Result): void {
  if (env.PLATFORM_LOCAL !== "1") return;
  const delivery = (body ?? {}) as { kind?: unknown; name?: unknown };
  const list = outcomes.get(pluginId) ?? [];
  list.push({
    seq: ++outcomeSeq,
    kind: typeof delivery.kind === "string" ? delivery.kind : null,
    name: typeof delivery.name === "string" ? delivery.name : null,
    ...outcome,
  } as DeliveryOutcome);
  outcomes.set(pluginId, list.slice(-OUTCOMES_KEPT));
}

/** `/__plugin/<pluginId>`: one delivery to the plugin's handler (POST), or under `platform dev` their outcomes (GET). */
async function servePluginDelivery(
  request: Request,
  env: PlatformEnv,
  ctx: ExecutionContext,
  rest: string,
): Promise<Response> {
  const match = /^\/([a-z][a-z0-9-]{0,31})$/.exec(rest);
  if (!match) return notFound();
  const pluginId = match[1]!;
  if (request.method === "GET" && env.PLATFORM_LOCAL === "1")
    return Response.json({ outcomes: outcomes.get(pluginId) ?? [] });
  if (request.method !== "POST") return notFound();
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    return errorResponse(new PlatformError("malformed_json", "Plugin delivery body is not valid JSON."));
  }
  let done: { response: Response; outcome: Result };
  try {
    done = answered(pluginId, await runPluginHandler(pluginId, { body, request, env, ctx }));
  } catch (error) {
    done = threw(pluginId, error);
  }
  remember(env, pluginId, body, done.outcome);
  return done.response;
}

function pluginsMetadata(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [pluginId, contributor] of metadataContributors) out[pluginId] = contributor();
  return out;
}

/** The `__plugin` route and the build's `plugins` metadata on `runtime` (again is a no-op). */
export function installPluginRoute(runtime: PlatformRuntime): void {
  runtime.registerInternalRoute("__plugin", servePluginDelivery);
  runtime.registerMetadata("plugins", pluginsMetadata);
}

/**
 * Runs the handler `pluginId`'s module registered on one delivery and answers what it answered; throws
 * what it threw, or `NoPluginHandler` when the project imported no such module. The internal route
 * turns that into the delivery's answer; the test kit (`testPlugin`) hands it to the test.
 */
export async function runPluginHandler(pluginId: string, context: PluginRequestContext): Promise<unknown> {
  const handler = handlers.get(pluginId);
  if (!handler) throw new NoPluginHandler(`This project has no ${pluginId} handlers.`);
  return handler(context);
}

/** `pluginId`'s handler, and the `__plugin` route it answers behind, installed on `runtime`. */
export function installPluginHandler(runtime: PlatformRuntime, pluginId: string, handler: PluginHandler): void {
  handlers.set(pluginId, handler);
  installPluginRoute(runtime);
}

/** `contributor()` is called at build time; e.g. `() => ({ commands: [...], events: [...] })`. */
export function registerPluginMetadata(pluginId: string, contributor: () => unknown): void {
  metadataContributors.set(pluginId, contributor);
}
