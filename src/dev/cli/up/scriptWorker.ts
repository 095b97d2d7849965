import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { V4WorkerOptions } from "miniflare";
import type { ScriptBinding } from "../../../workers/api/dispatchUpload.ts";
import type { AcceptedScript } from "../../cloudflare/scriptUploadStandIn.ts";
import { localScriptBindings } from "../dev/localScriptBindings.ts";

type ModuleType = "ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm";

/** Cloudflare's part content types (multipart-upload-metadata docs) as workerd module types. */
function moduleType(contentType: string): ModuleType {
  if (contentType === "application/javascript+module") return "ESModule";
  if (contentType === "application/javascript" || contentType === "text/javascript") return "CommonJS";
  if (contentType === "application/wasm") return "CompiledWasm";
  if (contentType.startsWith("text/")) return "Text";
  return "Data";
}

/**
 * The Miniflare worker for a script the stand-in accepted, wired as
 * Cloudflare would run it in the dispatch namespace: its modules (written
 * under `dir`, main module first), compatibility settings and each binding of
 * its metadata.
 */
export function scriptWorker(script: AcceptedScript, dir: string): V4WorkerOptions {
  mkdirSync(dir, { recursive: true });
  const main = script.metadata.main_module!;
  const names = [main, ...[...script.modules.keys()].filter((name) => name !== main)];
  const modules = names.map((name) => {
    const module = script.modules.get(name)!;
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, module.content);
    return { type: moduleType(module.contentType), path: file };
  });
  return {
    name: script.name,
    modules,
    modulesRoot: dir,
    compatibilityDate: script.metadata.compatibility_date,
    compatibilityFlags: script.metadata.compatibility_flags,
    ...localScriptBindings((script.metadata.bindings ?? []) as ScriptBinding[]),
    ...scriptTails(script),
  };
}

/**
 * The upload's `tail_consumers` as Miniflare's `tails`: Cloudflare names the
 * producing script in each trace (`scriptName`); workerd leaves it empty, so
 * the consumer is told through `props` which script it tails.
 */
function scriptTails(script: AcceptedScript): Pick<V4WorkerOptions, "tails"> {
  const consumers = script.metadata.tail_consumers ?? [];
  if (consumers.length === 0) return {};
  return { tails: consumers.map(({ service }) => ({ name: service, props: { scriptName: script.name } })) };
}
