import { pluginById, type PluginId, type PluginRoute } from "../../contracts/pluginRegistry.ts";
import { PlatformError, type PlatformErrorCode } from "../../core/errors.ts";
import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import { readJsonOrNull } from "../../core/web/jsonBody.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";

/** The project's environment for runtime functions called without one (`email.send(...)`). */
export function pluginEnv(): PlatformEnv {
  const env = platformRuntime.env;
  if (!env) {
    throw new PlatformError(
      "not_ready",
      "Plugins need the platform runtime: run the project with `platform dev` or deploy it with `platform push`, and call plugin functions while handling a request.",
    );
  }
  return env;
}

/** What one plugin call sends: `body` as JSON, and an `Idempotency-Key` when given (the plugin forwards it to the provider). */
export interface PluginCallRequest {
  body: unknown;
  idempotencyKey?: string;
}

// The codes a plugin may pass through to user code; any other (a workflow engine or build code user code
// branches on) becomes upstream_error, so a plugin cannot make a call look like something it is not.
const KNOWN_CODES = new Set<PlatformErrorCode>([
  "invalid_input",
  "malformed_json",
  "payload_too_large",
  "unauthorized",
  "forbidden",
  "not_found",
  "conflict",
  "rate_limited",
  "revoked",
  "upstream_error",
  "not_ready",
  "internal",
]);

/**
 * One proxy call from user code to a plugin worker (through the service
 * binding its descriptor names; `path` is one of its descriptor's routes):
 * `POST <path>` with a JSON
 * body and an identity token signed with the project's worker secret. Resolves
 * the JSON answer; a plugin's error JSON becomes a `PlatformError` with the
 * same code and message (`rate_limited` keeps `retryAfterSeconds` in details).
 */
export async function pluginCall<Id extends PluginId, T = unknown>(
  env: PlatformEnv,
  pluginId: Id,
  path: PluginRoute<Id>,
  { body, idempotencyKey }: PluginCallRequest,
): Promise<T> {
  const { binding, title } = pluginById(pluginId);
  const plugin = env[binding] as Fetcher | undefined;
  if (!plugin || typeof plugin.fetch !== "function") {
    throw new PlatformError(
      "not_ready",
      `The ${title} plugin is not available: this project worker has no ${binding} binding.`,
    );
  }
  const secret = env.PLATFORM_WORKER_SECRET;
  const projectId = env.PLATFORM_PROJECT_ID;
  if (!secret || !projectId) {
    throw new PlatformError(
      "not_ready",
      "Plugins are unavailable: this project worker has no PLATFORM_WORKER_SECRET / PLATFORM_PROJECT_ID binding.",
    );
  }
  const text = JSON.stringify(body ?? {});
  const headers: Record<string, string> = {
    "content-type": "application/json",
    [IDENTITY_HEADER]: await signRequestToken(
      "identity",
      { method: "POST", pathAndQuery: path, body: text },
      { projectId, secret },
    ),
  };
  if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;

  let response: Response;
  try {
    response = await plugin.fetch(`https://plugin.internal${path}`, { method: "POST", headers, body: text });
  } catch (error) {
    throw new PlatformError("upstream_error", `The ${title} plugin could not be reached: ${String(error)}`);
  }
  const parsed = await readJsonOrNull(response);
  if (response.ok) return parsed as T;

  const remote = PlatformError.fromJSON((parsed as { error?: unknown } | null)?.error, {
    code: "upstream_error",
    message: `The ${title} plugin answered ${response.status}.`,
  });
  const code = KNOWN_CODES.has(remote.code) ? remote.code : "upstream_error";
  const details: Record<string, unknown> = { ...remote.details };
  if (code === "rate_limited") {
    const header = Number(response.headers.get("retry-after"));
    if (typeof details.retryAfterSeconds !== "number")
      details.retryAfterSeconds = Number.isFinite(header) && header > 0 ? header : 1;
  }
  throw new PlatformError(code, remote.message, Object.keys(details).length ? details : undefined);
}
