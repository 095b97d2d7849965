/** A module type as workerd (Miniflare) loads it. */
export type WorkerdModuleType = "ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm";

/** Cloudflare's part Content-Types (multipart-upload-metadata docs) as workerd module types. */
export function uploadedModuleType(contentType: string): WorkerdModuleType {
  if (contentType === "application/javascript+module" || contentType === "text/javascript+module") return "ESModule";
  if (contentType === "application/javascript" || contentType === "text/javascript") return "CommonJS";
  if (contentType === "application/wasm") return "CompiledWasm";
  if (contentType.startsWith("text/")) return "Text";
  return "Data";
}
