import { PlatformError } from "../../core/errors.ts";

/**
 * The most a deployment's metadata (crons, workflows, plugin handlers, …) may
 * weigh as JSON: the deployment record keeps it in one D1 value, and a push
 * the database would refuse must be refused before its script goes live.
 */
export const METADATA_LIMIT_BYTES = 100 * 1024;

/** The metadata as the JSON the deployment record stores, or 413 `payload_too_large` naming the limit. */
export function storableMetadataJson(metadata: Record<string, unknown>): string {
  const json = JSON.stringify(metadata);
  const bytes = new TextEncoder().encode(json).byteLength;
  if (bytes > METADATA_LIMIT_BYTES) {
    throw new PlatformError(
      "payload_too_large",
      `The project's metadata (crons, workflows, handlers) is ${bytes} bytes as JSON; the limit is ${METADATA_LIMIT_BYTES} bytes.`,
      { limit: METADATA_LIMIT_BYTES, bytes },
    );
  }
  return json;
}
