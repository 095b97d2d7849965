import { PlatformError } from "../../core/errors.ts";
import {
  EMAIL_SEND_ROUTE,
  MAX_IDEMPOTENCY_KEY_CHARS,
  validateEmailMessage,
  validIdempotencyKey,
} from "../../contracts/emailMessage.ts";
import { pluginCall, pluginEnv } from "./pluginCall.ts";

/**
 * What `email.send` takes: at most 50 recipients in all, a one-line subject of 1–998 characters,
 * html of at most 1 MB, bare addresses.
 * @example
 * const message: EmailSendInput = { to: ["ada@example.com"], subject: "Welcome", html: "<p>Hi Ada</p>", idempotencyKey: "welcome-ada" };
 */
export interface EmailSendInput {
  to: string | string[];
  subject: string;
  html: string;
  /** Reuse a key to make a repeated call (e.g. a retried workflow step) send once. */
  idempotencyKey?: string;
}

/**
 * `email.send({ to, subject, html })` → `{ id }`. Evaluated only when user
 * code imports `email`. The message is checked here first, so bad input rejects before any network
 * call; then the email-send plugin sends it from `{slug}@{sender domain}`. Each call carries
 * its own idempotency key (or yours, `idempotencyKey`), so the plugin's retries never send twice.
 * @example
 * await email.send({ to: "ada@example.com", subject: "Welcome", html: "<p>Hi Ada</p>" });
 */
export const email = {
  /**
   * Sends one message from `{slug}@{sender domain}`; resolves `{ id }`. Rejects before any network
   * call on bad input (`invalid_input`), with `rate_limited` past the send rate.
   * @example
   * const { id } = await email.send({ to: ["ada@example.com"], subject: "Your report", html: "<p>Attached.</p>" });
   */
  async send(input: EmailSendInput): Promise<{ id: string }> {
    const message = validateEmailMessage(input, ["idempotencyKey"]);
    const key = input.idempotencyKey ?? crypto.randomUUID();
    if (!validIdempotencyKey(key)) {
      throw new PlatformError(
        "invalid_input",
        `idempotencyKey must be 1–${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters.`,
      );
    }
    const answer: { id?: unknown } | null = await pluginCall(pluginEnv(), "email-send", EMAIL_SEND_ROUTE, {
      body: message,
      idempotencyKey: key,
    });
    if (!answer || typeof answer.id !== "string")
      throw new PlatformError("upstream_error", "The email-send plugin answered without an id.");
    return { id: answer.id };
  },
};
