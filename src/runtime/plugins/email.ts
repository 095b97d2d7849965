import { PlatformError } from "../../core/errors.ts";
import {
  EMAIL_SEND_ROUTE,
  MAX_IDEMPOTENCY_KEY_CHARS,
  validateEmailMessage,
  validIdempotencyKey,
} from "../../contracts/emailMessage.ts";
import { pluginCall, pluginEnv } from "./pluginCall.ts";

/**
 * `email.send({ to, subject, html })` → `{ id }`. Evaluated only when user
 * code imports `email`. The message is checked here first (at most 50
 * recipients, html at most 1 MB, a one-line subject of 1–998 characters, bare
 * addresses), so bad input rejects before any network call; then the
 * email-send plugin sends it from `{slug}@{sender domain}`. Each call carries
 * its own idempotency key (or yours, `idempotencyKey`), so the plugin's retries
 * never send twice.
 */
export interface EmailSendInput {
  to: string | string[];
  subject: string;
  html: string;
  /** Reuse a key to make a repeated call (e.g. a retried workflow step) send once. */
  idempotencyKey?: string;
}

export const email = {
  async send(input: EmailSendInput): Promise<{ id: string }> {
    const message = validateEmailMessage(input, ["idempotencyKey"]);
    const key = input.idempotencyKey ?? crypto.randomUUID();
    if (!validIdempotencyKey(key)) {
      throw new PlatformError(
        "invalid_input",
        `idempotencyKey must be 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters.`,
      );
    }
    const answer: { id?: unknown } | null = await pluginCall(pluginEnv(), "email-send", EMAIL_SEND_ROUTE, message, {
      idempotencyKey: key,
    });
    if (!answer || typeof answer.id !== "string")
      throw new PlatformError("upstream_error", "The email-send plugin answered without an id.");
    return { id: answer.id };
  },
};
