import { PlatformError } from "../../core/errors.ts";
import { basicAuthorization } from "../../core/web/basicAuthorization.ts";
import { readJsonOrNull } from "../../core/web/jsonBody.ts";
import type { WorkspaceEnv } from "./env.ts";

/**
 * The workspace provider's Web API (Slack's wire protocol) as the plugin uses
 * it: methods with a bot token, and `oauth.v2.access` for code and refresh
 * grants. Transport failures become `upstream_error`; answers stay answers.
 */

/** The provider answers almost every failure as HTTP 200 with `ok:false, error`. */
export type WorkspaceAnswer =
  | { ok: true; [field: string]: unknown }
  | { ok: false; error: string; [field: string]: unknown };

export interface WorkspaceApiResult {
  answer: WorkspaceAnswer;
  /** Set when Slack answered 429: seconds from its Retry-After. */
  retryAfterSeconds?: number;
}

function providerUrl(env: WorkspaceEnv, path: string): string {
  const base = (env.SLACK_BASE_URL || "https://slack.com").replace(/\/+$/, "");
  return base + path;
}

export function authorizeUrl(env: WorkspaceEnv): URL {
  return new URL(providerUrl(env, "/oauth/v2/authorize"));
}

async function send(env: WorkspaceEnv, request: Request): Promise<Response> {
  try {
    return await (env.SLACK ? env.SLACK.fetch(request) : fetch(request));
  } catch (error) {
    throw new PlatformError("upstream_error", `Slack could not be reached: ${String(error)}`, { provider: "slack" });
  }
}

async function readAnswer(response: Response, method: string): Promise<WorkspaceApiResult> {
  if (response.status === 429) {
    const retry = Number(response.headers.get("retry-after"));
    await response.body?.cancel();
    return {
      answer: { ok: false, error: "ratelimited" },
      retryAfterSeconds: Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : 60,
    };
  }
  const answer = await readJsonOrNull(response);
  if (!answer || typeof answer !== "object" || typeof (answer as { ok?: unknown }).ok !== "boolean") {
    throw new PlatformError(
      "upstream_error",
      `Slack's ${method} answered HTTP ${response.status} without a Slack JSON body.`,
      {
        provider: "slack",
        status: response.status,
      },
    );
  }
  const a = answer as WorkspaceAnswer;
  if (!a.ok && typeof a.error !== "string") (a as { error: string }).error = "unknown_error";
  return { answer: a };
}

/** A Web API method with a bot token (JSON body, as Slack recommends for writes). */
export async function callWorkspaceMethod(
  env: WorkspaceEnv,
  method: string,
  botToken: string,
  params: Record<string, unknown>,
): Promise<WorkspaceApiResult> {
  const request = new Request(providerUrl(env, `/api/${method}`), {
    method: "POST",
    headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${botToken}` },
    body: JSON.stringify(params),
    redirect: "manual",
  });
  return readAnswer(await send(env, request), method);
}

/** `oauth.v2.access` (code or refresh grant) with the client credentials in HTTP Basic (Slack's preferred form). */
export async function requestAccessToken(
  env: WorkspaceEnv,
  params: Record<string, string>,
): Promise<WorkspaceApiResult> {
  const request = new Request(providerUrl(env, "/api/oauth.v2.access"), {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: basicAuthorization(env.SLACK_CLIENT_ID, env.SLACK_CLIENT_SECRET),
    },
    body: new URLSearchParams(params).toString(),
    redirect: "manual",
  });
  return readAnswer(await send(env, request), "oauth.v2.access");
}
