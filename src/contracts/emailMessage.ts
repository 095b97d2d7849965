import { addressProblem } from "../core/email.ts";
import { PlatformError } from "../core/errors.ts";

/** The email-send plugin's route: `POST { to, subject, html }` → `{ id }`. */
export const EMAIL_SEND_ROUTE = "/send";

/**
 * The rules for one email, checked twice: by the runtime's `email.send`
 * before any network call, and by the plugin worker before the provider.
 * Recipients follow the platform's one address rule (core/email.ts).
 */
export const MAX_RECIPIENTS = 50;
/** 1 MB of html, counted in UTF-8 bytes. */
export const MAX_HTML_BYTES = 1_048_576;
/** RFC 5322's line limit; a subject is one header line. */
export const MAX_SUBJECT_CHARS = 998;

export interface EmailMessage {
  to: string[];
  subject: string;
  html: string;
}

function describe(value: string): string {
  const shown = value.length > 60 ? value.slice(0, 60) + "…" : value;
  return JSON.stringify(shown);
}

const encoder = new TextEncoder();

/**
 * Checks `{ to, subject, html }` and returns the normalized message (`to`
 * always an array). Throws `invalid_input` (400) or, for html over 1 MB,
 * `payload_too_large` (413), naming the field.
 */
export function validateEmailMessage(input: unknown, allowedExtraKeys: readonly string[] = []): EmailMessage {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new PlatformError("invalid_input", "email.send takes an object { to, subject, html }.");
  }
  const fields = input as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((k) => !["to", "subject", "html", ...allowedExtraKeys].includes(k));
  if (unknown.length) {
    throw new PlatformError(
      "invalid_input",
      `email.send does not support ${unknown.map((k) => JSON.stringify(k)).join(", ")}; it takes { to, subject, html }.`,
    );
  }

  const to = typeof fields.to === "string" ? [fields.to] : fields.to;
  if (!Array.isArray(to) || to.length === 0) {
    throw new PlatformError("invalid_input", "to must be an email address or a non-empty array of addresses.");
  }
  if (to.length > MAX_RECIPIENTS) {
    throw new PlatformError(
      "invalid_input",
      `Too many recipients: ${to.length}; an email may have at most ${MAX_RECIPIENTS}.`,
    );
  }
  to.forEach((address, i) => {
    const problem = addressProblem(address);
    if (problem) {
      const which = typeof fields.to === "string" ? "to" : `to[${i}]`;
      throw new PlatformError(
        "invalid_input",
        `${which} ${typeof address === "string" ? describe(address) + " " : ""}${problem}.`,
      );
    }
  });

  const subject = fields.subject;
  if (typeof subject !== "string" || subject.trim() === "")
    throw new PlatformError("invalid_input", "subject must be a non-empty string.");
  if (subject.length > MAX_SUBJECT_CHARS) {
    throw new PlatformError(
      "invalid_input",
      `subject is ${subject.length} characters; the limit is ${MAX_SUBJECT_CHARS}.`,
    );
  }
  if (/[\r\n\0]/.test(subject)) throw new PlatformError("invalid_input", "subject must be one line (no line breaks).");

  const html = fields.html;
  if (typeof html !== "string" || html === "")
    throw new PlatformError("invalid_input", "html must be a non-empty string.");
  // A UTF-8 byte is at most one UTF-16 unit; count bytes only when it could matter.
  if (html.length * 3 > MAX_HTML_BYTES) {
    const bytes = encoder.encode(html).byteLength;
    if (bytes > MAX_HTML_BYTES) {
      throw new PlatformError(
        "payload_too_large",
        `html is ${bytes} bytes; the limit is ${MAX_HTML_BYTES} bytes (1 MB, UTF-8).`,
      );
    }
  }
  return { to: to as string[], subject, html };
}

/** `Idempotency-Key`: 1–200 printable ASCII characters (the plugin prefixes the project, staying under the provider's 256). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

export function validIdempotencyKey(key: unknown): key is string {
  return (
    typeof key === "string" && key.length > 0 && key.length <= MAX_IDEMPOTENCY_KEY_CHARS && /^[\x21-\x7e]+$/.test(key)
  );
}
