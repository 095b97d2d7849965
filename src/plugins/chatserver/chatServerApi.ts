/**
 * The chat server's REST API as the plugin uses it: base URL from the env,
 * `Bot` auth for guild/channel routes, none for interaction webhooks.
 * Errors become PlatformErrors: 429 → `rate_limited` (with the provider's
 * Retry-After, and `details.global` when the provider says the whole bot is
 * limited), anything else → `upstream_error` naming the provider's error.
 */
import { PlatformError } from "../../core/errors.ts";
import { readJsonOrNull } from "../../core/web/jsonBody.ts";
import type { ChatServerEnv } from "./env.ts";

export const USER_AGENT = "DiscordBot (https://github.com/platform/platform, 0.1.0)";

export function apiBase(env: ChatServerEnv): string {
  return env.CHATSERVER_BASE_URL.replace(/\/+$/, "") + "/api/v10";
}

export function providerFetch(env: ChatServerEnv, request: Request): Promise<Response> {
  return env.CHATSERVER_FETCH ? env.CHATSERVER_FETCH.fetch(request) : fetch(request);
}

/** One call of the provider's REST API; `auth: "bot"` sends the bot token, `"none"` nothing (interaction webhooks). */
export interface ChatServerCall {
  method: string;
  path: string;
  body: unknown;
  auth: "bot" | "none";
}

export async function callChatServer<T = unknown>(
  env: ChatServerEnv,
  { method, path, body, auth }: ChatServerCall,
): Promise<T> {
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": USER_AGENT };
  if (auth === "bot") {
    if (!env.CHATSERVER_BOT_TOKEN)
      throw new PlatformError("not_ready", "The chat-server plugin has no CHATSERVER_BOT_TOKEN configured.");
    headers.authorization = `Bot ${env.CHATSERVER_BOT_TOKEN}`;
  }
  let response: Response;
  try {
    response = await providerFetch(
      env,
      new Request(apiBase(env) + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  } catch (error) {
    throw new PlatformError("upstream_error", `The chat server could not be reached: ${String(error)}`);
  }
  const parsed = await readJsonOrNull(response);
  if (response.ok) return parsed as T;
  const err = (parsed ?? {}) as { message?: unknown; code?: unknown; retry_after?: unknown; global?: unknown };
  if (response.status === 429) {
    const header = Number(response.headers.get("retry-after"));
    const retry =
      Number.isFinite(header) && header > 0 ? header : typeof err.retry_after === "number" ? err.retry_after : 1;
    throw new PlatformError(
      "rate_limited",
      `The chat server is rate limiting these calls; retry in ${Math.ceil(retry)} s.`,
      {
        retryAfterSeconds: Math.max(1, Math.ceil(retry)),
        provider: true,
        global:
          err.global === true ||
          response.headers.get("x-ratelimit-global") === "true" ||
          response.headers.get("x-ratelimit-scope") === "global",
      },
    );
  }
  const name = typeof err.message === "string" ? err.message : `HTTP ${response.status}`;
  throw new PlatformError(
    "upstream_error",
    `The chat server refused the call: ${name}${typeof err.code === "number" && err.code ? ` (code ${err.code})` : ""}.`,
    {
      status: response.status,
      providerError: name,
      ...(typeof err.code === "number" ? { providerCode: err.code } : {}),
    },
  );
}
