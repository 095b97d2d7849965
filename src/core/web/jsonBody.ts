import { PlatformError } from "../errors.ts";

/** Default cap for JSON request bodies of platform endpoints. */
export const DEFAULT_JSON_LIMIT_BYTES = 64 * 1024;

/**
 * Reads a request body up to `limit` bytes, refusing early on a declared
 * Content-Length and again while streaming (a client may lie or omit it).
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw new PlatformError("payload_too_large", `Request body is larger than ${limit} bytes.`);
  }
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new PlatformError("payload_too_large", `Request body is larger than ${limit} bytes.`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

export function parseJsonObject(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new PlatformError("malformed_json", "Request body is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new PlatformError("malformed_json", "Request body must be a JSON object.");
  }
  return value as Record<string, unknown>;
}

export async function readJsonObject(
  request: Request,
  limit = DEFAULT_JSON_LIMIT_BYTES,
): Promise<Record<string, unknown>> {
  return parseJsonObject(await readBodyBytes(request, limit));
}

/** An answer's body as JSON, or null when it is empty or not JSON (an upstream's error answer need not be JSON). */
export async function readJsonOrNull(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}
