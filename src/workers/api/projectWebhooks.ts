import { PlatformError } from "../../core/errors.ts";
import { isWebhookVerifyScheme } from "../../core/webhooks/webhookProviders.ts";
import type { ProjectWebhook } from "../db/projectWebhooksTable.ts";

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_WEBHOOKS = 100;

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}

/** A build's `metadata.webhooks` (absent: none), checked as the runtime's `webhook()` checks a registration. */
export function validateMetadataWebhooks(value: unknown): ProjectWebhook[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_WEBHOOKS)
    throw invalid(`webhooks must be a list of at most ${MAX_WEBHOOKS} endpoints.`);
  const seen = new Set<string>();
  return value.map((entry): ProjectWebhook => {
    const { name, verify, secret, start } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !NAME.test(name) || seen.has(name))
      throw invalid(`Webhook name ${JSON.stringify(name)} is not a name of a-z, 0-9, _ and -, or is used twice.`);
    seen.add(name);
    if (!isWebhookVerifyScheme(verify)) throw invalid(`Webhook "${name}" has an unknown verify scheme.`);
    if (typeof secret !== "string" || !SECRET_NAME.test(secret))
      throw invalid(`Webhook "${name}" needs secret: the name of a project secret.`);
    if (start !== undefined && (typeof start !== "string" || start.length === 0 || start.length > 128))
      throw invalid(`Webhook "${name}" start must be a workflow name.`);
    return { name, verify, secret, ...(start === undefined ? {} : { start: start as string }) };
  });
}
