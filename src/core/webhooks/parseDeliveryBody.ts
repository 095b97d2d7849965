import { PlatformError } from "../errors.ts";

/**
 * A verified delivery's payload: JSON, or a form (`application/x-www-form-urlencoded`,
 * as Slack sends slash commands and interactions) read as an object of its
 * fields, with a `payload` field that holds JSON parsed in place. Parsed only
 * after the raw bytes were verified.
 */
export function parseDeliveryBody(body: Uint8Array, contentType: string | null): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(body);
  } catch {
    throw new PlatformError("malformed_json", "The webhook's body is not UTF-8.");
  }
  if ((contentType ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    const fields: Record<string, unknown> = Object.fromEntries(new URLSearchParams(text));
    if (typeof fields.payload === "string") {
      try {
        fields.payload = JSON.parse(fields.payload);
      } catch {
        // a form field that merely is called payload: kept as text
      }
    }
    return fields;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new PlatformError("malformed_json", "The webhook's body is not valid JSON.");
  }
}
