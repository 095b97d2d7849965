import { PlatformError } from "../core/errors.ts";

/**
 * The rules for one email, checked twice: by the runtime's `email.send`
 * before any network call, and by the plugin worker before the provider.
 */
export const MAX_RECIPIENTS = 50;
/** 1 MB of html, counted in UTF-8 bytes. */
export const MAX_HTML_BYTES = 1_048_576;
/** RFC 5322's line limit; a subject is one header line. */
export const MAX_SUBJECT_CHARS = 998;
export const MAX_ADDRESS_CHARS = 254;

export interface EmailMessage {
  to: string[];
  subject: string;
  html: string;
}

// addr-spec only: dot-atom local part @ a domain of LDH labels with a dot.
// No display names, quotes, comments, angle brackets, whitespace, IP literals.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;

/** Why `address` is not a plain `local@domain.tld` address, or null when it is. */
export function addressProblem(address: unknown): string | null {
  if (typeof address !== "string") return "is not a string";
  if (address.length === 0) return "is empty";
  if (address.length > MAX_ADDRESS_CHARS) return `is longer than ${MAX_ADDRESS_CHARS} characters`;
  if (/[\s<>"(),;:\\[\]]/.test(address) || /[^\x21-\x7e]/.test(address)) {
    return "must be a bare address like name@example.com (no display name, spaces, quotes, brackets or commas)";
  }
  const at = address.lastIndexOf("@");
  if (at <= 0 || address.indexOf("@") !== at) return "must contain exactly one @ with a name before it";
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local)) return "has an invalid part before the @";
  const labels = domain.split(".");
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || !/[A-Za-z]/.test(labels.at(-1)!)) {
    return "has an invalid domain (expected something like example.com)";
  }
  return null;
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
    throw new PlatformError("invalid_input", `email.send does not support ${unknown.map((k) => JSON.stringify(k)).join(", ")}; it takes { to, subject, html }.`);
  }

  const to = typeof fields.to === "string" ? [fields.to] : fields.to;
  if (!Array.isArray(to) || to.length === 0) {
    throw new PlatformError("invalid_input", "to must be an email address or a non-empty array of addresses.");
  }
  if (to.length > MAX_RECIPIENTS) {
    throw new PlatformError("invalid_input", `Too many recipients: ${to.length}; an email may have at most ${MAX_RECIPIENTS}.`);
  }
  to.forEach((address, i) => {
    const problem = addressProblem(address);
    if (problem) {
      const which = typeof fields.to === "string" ? "to" : `to[${i}]`;
      throw new PlatformError("invalid_input", `${which} ${typeof address === "string" ? describe(address) + " " : ""}${problem}.`);
    }
  });

  const subject = fields.subject;
  if (typeof subject !== "string" || subject.trim() === "") throw new PlatformError("invalid_input", "subject must be a non-empty string.");
  if (subject.length > MAX_SUBJECT_CHARS) {
    throw new PlatformError("invalid_input", `subject is ${subject.length} characters; the limit is ${MAX_SUBJECT_CHARS}.`);
  }
  if (/[\r\n\0]/.test(subject)) throw new PlatformError("invalid_input", "subject must be one line (no line breaks).");

  const html = fields.html;
  if (typeof html !== "string" || html === "") throw new PlatformError("invalid_input", "html must be a non-empty string.");
  // A UTF-8 byte is at most one UTF-16 unit; count bytes only when it could matter.
  if (html.length * 3 > MAX_HTML_BYTES) {
    const bytes = encoder.encode(html).byteLength;
    if (bytes > MAX_HTML_BYTES) {
      throw new PlatformError("payload_too_large", `html is ${bytes} bytes; the limit is ${MAX_HTML_BYTES} bytes (1 MB, UTF-8).`);
    }
  }
  return { to: to as string[], subject, html };
}

/** `Idempotency-Key`: 1–200 printable ASCII characters (the plugin prefixes the project, staying under the provider's 256). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

export function validIdempotencyKey(key: unknown): key is string {
  return typeof key === "string" && key.length > 0 && key.length <= MAX_IDEMPOTENCY_KEY_CHARS && /^[\x21-\x7e]+$/.test(key);
}
