import { PlatformError } from "../core/errors.ts";
import { parseJsonObject } from "../core/web/jsonBody.ts";

/**
 * The bodies of the CLI's and console's workflow controls:
 * `POST /projects/:slug/workflows/:runId/cancel` and `…/events`. Checked by
 * the API worker before it asks the project, and by `platform dev --node`'s
 * local API, so both refuse the same input with the same codes.
 */

/** Bodies above this are refused with `payload_too_large` (413) before they are parsed. */
export const MAX_CONTROL_BODY_BYTES = 64 * 1024;
export const MAX_EVENT_NAME_CHARS = 100;
export const MAX_CANCEL_REASON_CHARS = 500;

export interface CancelRunBody {
  reason?: string;
}

export interface SendEventBody {
  name: string;
  /** Parsed from JSON, so plain JSON data. */
  payload?: unknown;
}

/** No control, format or unassigned characters: an event name is something a person types and reads. */
const PRINTABLE = /^[^\p{C}]+$/u;

function knownKeysOnly(body: Record<string, unknown>, allowed: readonly string[], what: string): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length)
    throw new PlatformError(
      "invalid_input",
      `${what} takes only ${allowed.join(" and ")}; unknown field ${JSON.stringify(unknown[0])}.`,
    );
}

/** `{ reason? }`; an empty body is `{}` (a cancel needs no reason). */
export function parseCancelRunBody(bytes: Uint8Array): CancelRunBody {
  if (bytes.byteLength === 0) return {};
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["reason"], "A cancel");
  if (body.reason === undefined) return {};
  if (typeof body.reason !== "string") throw new PlatformError("invalid_input", "reason must be a string.");
  if (body.reason.length > MAX_CANCEL_REASON_CHARS)
    throw new PlatformError("invalid_input", `reason must be at most ${MAX_CANCEL_REASON_CHARS} characters.`);
  return { reason: body.reason };
}

/** `{ name, payload? }`: name 1–100 printable characters, payload any JSON. */
export function parseSendEventBody(bytes: Uint8Array): SendEventBody {
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["name", "payload"], "An event");
  const { name } = body;
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_EVENT_NAME_CHARS || !PRINTABLE.test(name))
    throw new PlatformError(
      "invalid_input",
      `name must be the event's name: 1 to ${MAX_EVENT_NAME_CHARS} printable characters.`,
    );
  return body.payload === undefined ? { name } : { name, payload: body.payload };
}
