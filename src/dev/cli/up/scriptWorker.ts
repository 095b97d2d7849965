import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { V4WorkerOptions } from "miniflare";
import { PLATFORM_SERVICES, type ScriptBinding } from "../../../workers/api/dispatchUpload.ts";
import type { AcceptedScript } from "../../cloudflare/scriptUploadStandIn.ts";

const DEPLOYED_PREFIX = "platform-";

/** A platform worker a project binds, as `platform up` names it: as deployed, without `platform-` (`api`, `plugin-chatserver`). */
function localService(service: string): string {
  const platformWorker = Object.values(PLATFORM_SERVICES).includes(service) && service.startsWith(DEPLOYED_PREFIX);
  return platformWorker ? service.slice(DEPLOYED_PREFIX.length) : service;
}

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
 * its metadata. Served over plain http, so it also gets `PLATFORM_LOCAL`
 * (cookies without `Secure`).
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
  const bindings: Record<string, string> = { PLATFORM_LOCAL: "1" };
  const serviceBindings: Record<string, string> = {};
  const durableObjects: Record<string, { className: string; useSQLite: boolean }> = {};
  for (const binding of (script.metadata.bindings ?? []) as ScriptBinding[]) {
    if (binding.type === "plain_text" || binding.type === "secret_text") bindings[binding.name] = binding.text;
    else if (binding.type === "service") serviceBindings[binding.name] = localService(binding.service);
    else if (binding.type === "durable_object_namespace" && binding.class_name)
      durableObjects[binding.name] = { className: binding.class_name, useSQLite: true };
  }
  return {
    name: script.name,
    modules,
    modulesRoot: dir,
    compatibilityDate: script.metadata.compatibility_date,
    compatibilityFlags: script.metadata.compatibility_flags,
    bindings,
    serviceBindings,
    durableObjects,
  };
}
