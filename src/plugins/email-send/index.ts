import { PlatformError } from "../../core/errors.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import { authenticateProjectCall } from "../kit/authenticateProjectCall.ts";
import { createPlatformRouter } from "../../core/web/router.ts";
import { pluginErrorResponse } from "../kit/pluginErrorResponse.ts";
import { takeRateLimit } from "../kit/rateLimit.ts";
import {
  EMAIL_SEND_ROUTE,
  MAX_IDEMPOTENCY_KEY_CHARS,
  validateEmailMessage,
  validIdempotencyKey,
} from "../../contracts/emailMessage.ts";
import { emailSendPlugin } from "../../contracts/plugins/emailSend.ts";
import { sendThroughProvider } from "./emailProvider.ts";
import type { EmailPluginEnv } from "./env.ts";

/**
 * The email-send plugin worker: proxy only, stateless (no install, no tables).
 *
 * `POST /send` `{ to, subject, html }` with `X-Platform-Identity` (and an
 * optional `Idempotency-Key`): identity → validation → rate limits
 * (`actions` and `email`, all or none; a private project takes from
 * `email` only) →
 * the provider, from `{slug}@{SENDER_DOMAIN}` → 200 `{ id }`.
 * Invalid input is refused before the rate limiter, so it uses no quota.
 */
export const PLUGIN_ID = emailSendPlugin.id;

/** html is at most 1 MiB; JSON escaping can grow it, so the raw body may be larger. */
const SEND_BODY_LIMIT_BYTES = 3 * 1024 * 1024;

async function send(request: Request, env: EmailPluginEnv): Promise<Response> {
  const { project, body } = await authenticateProjectCall(request, env.DB, { bodyLimit: SEND_BODY_LIMIT_BYTES });
  const message = validateEmailMessage(parseJsonObject(body));
  const key = request.headers.get("idempotency-key");
  if (key !== null && !validIdempotencyKey(key)) {
    throw new PlatformError(
      "invalid_input",
      `Idempotency-Key must be 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters.`,
    );
  }
  if (!env.SENDER_DOMAIN)
    throw new PlatformError("not_ready", "Email is not configured on this platform (SENDER_DOMAIN is not set).");
  await takeRateLimit(env, project, ["actions", "email"]);
  // Keys are per project: the provider account is shared by every project.
  const providerKey = key === null ? null : `project-${project.id}/${key}`;
  const sent = await sendThroughProvider(
    env,
    { ...message, from: `${project.slug}@${env.SENDER_DOMAIN}` },
    providerKey,
  );
  return Response.json({ id: sent.id }, { headers: { "Cache-Control": "no-store" } });
}

async function deploy(request: Request, env: EmailPluginEnv): Promise<Response> {
  // Nothing to register for email; the call is still authenticated.
  await authenticateProjectCall(request, env.DB, { bodyLimit: 256 * 1024 });
  return Response.json({ ok: true, plugin: PLUGIN_ID });
}

const router = createPlatformRouter<EmailPluginEnv>(`plugin ${PLUGIN_ID}`, { errorResponse: pluginErrorResponse })
  .get("/health", () => Response.json({ ok: true, plugin: PLUGIN_ID }))
  .post(EMAIL_SEND_ROUTE, send)
  .all(EMAIL_SEND_ROUTE, () => {
    throw new PlatformError("not_found", `Use POST ${EMAIL_SEND_ROUTE}.`);
  })
  .post("/deploy", deploy)
  .all("/install", () => {
    throw new PlatformError(
      "invalid_input",
      `The ${PLUGIN_ID} plugin needs no install: ${emailSendPlugin.install.instead}.`,
    );
  });

export default {
  fetch: router.fetch,
} satisfies ExportedHandler<EmailPluginEnv>;
