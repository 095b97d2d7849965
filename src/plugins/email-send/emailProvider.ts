import { PlatformError } from "../../core/errors.ts";
import type { EmailMessage } from "../../contracts/emailMessage.ts";
import type { EmailPluginEnv } from "./env.ts";

/**
 * The provider call, Resend's wire protocol: `POST {base}/emails` with
 * `Authorization: Bearer <key>` and JSON `{ from, to, subject, html }` →
 * 200 `{ id }`; errors `{ statusCode, name, message }`; 429 with `retry-after`.
 * 5xx answers and network errors are retried once with the same
 * `Idempotency-Key`, so a retry never sends twice.
 */
const RETRY_DELAY_MS = 250;
const MAX_ATTEMPTS = 2;

interface ProviderError {
  statusCode?: number;
  name?: string;
  message?: string;
}

export async function sendThroughProvider(
  env: EmailPluginEnv,
  message: EmailMessage & { from: string },
  idempotencyKey: string | null,
): Promise<{ id: string }> {
  if (!env.EMAIL_API_KEY)
    throw new PlatformError("not_ready", "Email is not configured on this platform (EMAIL_API_KEY is not set).");
  const base = (env.EMAIL_API_BASE ?? "https://api.resend.com").replace(/\/+$/, "");
  const headers: Record<string, string> = {
    authorization: `Bearer ${env.EMAIL_API_KEY}`,
    "content-type": "application/json",
    "user-agent": "platform-plugin-email-send/1",
  };
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  const body = JSON.stringify({ from: message.from, to: message.to, subject: message.subject, html: message.html });
  const doFetch = (init: RequestInit) =>
    env.EMAIL_API ? env.EMAIL_API.fetch(`${base}/emails`, init) : fetch(`${base}/emails`, init);

  let lastError: unknown = null;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    let response: Response;
    try {
      response = await doFetch({ method: "POST", headers, body });
    } catch (error) {
      lastError = error;
      if (attempt < MAX_ATTEMPTS) await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
      continue;
    }
    if (response.ok) {
      const json = (await response.json().catch(() => null)) as { id?: unknown } | null;
      if (!json || typeof json.id !== "string")
        throw new PlatformError("upstream_error", "The email provider accepted the email but returned no id.");
      return { id: json.id };
    }
    if (response.status >= 500 && attempt < MAX_ATTEMPTS) {
      await response.body?.cancel();
      await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
      continue;
    }
    throw await providerFailure(response);
  }
  throw new PlatformError("upstream_error", `The email provider could not be reached: ${String(lastError)}`);
}

async function providerFailure(response: Response): Promise<PlatformError> {
  const error = ((await response.json().catch(() => null)) ?? {}) as ProviderError;
  const name = typeof error.name === "string" ? error.name : `http_${response.status}`;
  const said = typeof error.message === "string" && error.message ? error.message : `status ${response.status}`;
  const details = { providerError: name, providerStatus: response.status };
  if (response.status === 429) {
    const retry = Number(response.headers.get("retry-after"));
    const retryAfterSeconds = Number.isFinite(retry) && retry > 0 ? Math.ceil(retry) : 60;
    const quota = /quota/.test(name);
    return new PlatformError(
      "rate_limited",
      quota
        ? `The platform's email quota is used up (${name}): ${said}`
        : `The email provider is rate limiting sends; retry in ${retryAfterSeconds} s.`,
      { ...details, retryAfterSeconds },
    );
  }
  if (response.status === 401 || response.status === 403) {
    if (name === "validation_error" || name === "invalid_from_address") {
      return new PlatformError(
        "upstream_error",
        `The email provider refused the sender or a recipient (${name}): ${said}`,
        details,
      );
    }
    return new PlatformError(
      "upstream_error",
      `The email provider refused the platform's API key (${name}). The platform operator must fix EMAIL_API_KEY.`,
      details,
    );
  }
  if (response.status === 409) {
    return new PlatformError("conflict", `The email provider refused the idempotency key (${name}): ${said}`, details);
  }
  if (response.status === 400 || response.status === 422) {
    return new PlatformError("invalid_input", `The email provider refused the email (${name}): ${said}`, details);
  }
  return new PlatformError(
    "upstream_error",
    `The email provider failed (${name}, status ${response.status}): ${said}`,
    details,
  );
}
