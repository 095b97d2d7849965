import type { AcceptedScript } from "#src/dev/cloudflare/scriptUploadStandIn.ts";

/**
 * A script as the upload stand-in keeps it once accepted: `module` as worker.js, one Durable Object
 * class bound under `binding`, and the metadata's other fields as `metadata` gives them.
 */
export function acceptedScript(
  name: string,
  module: string,
  durableObject: { binding: string; className: string },
  options: { migrationTag: string | null; metadata?: Partial<AcceptedScript["metadata"]> },
): AcceptedScript {
  return {
    name,
    metadata: {
      main_module: "worker.js",
      compatibility_date: "2026-10-30",
      bindings: [
        { type: "durable_object_namespace", name: durableObject.binding, class_name: durableObject.className },
      ],
      ...options.metadata,
    },
    modules: new Map([
      ["worker.js", { contentType: "application/javascript+module", content: new TextEncoder().encode(module) }],
    ]),
    etag: "e",
    createdOn: "2026-01-01T00:00:00Z",
    modifiedOn: "2026-01-01T00:00:00Z",
    migrationTag: options.migrationTag,
    durableObjectClasses: [durableObject.className],
  };
}
