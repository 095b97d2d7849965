import type { V4WorkerOptions } from "miniflare";
import type { ScriptBinding } from "../../../../workers/api/projectScriptBindings.ts";

/**
 * A project script's upload bindings as Miniflare runs them: the local
 * platform's workers carry their deployed names, so a service binding names
 * its worker as deployed. Served over plain http, a project also gets
 * `PLATFORM_LOCAL` (cookies without `Secure`).
 */
export function localScriptBindings(
  scriptBindings: ScriptBinding[],
): Required<Pick<V4WorkerOptions, "bindings" | "serviceBindings" | "durableObjects">> {
  const bindings: Record<string, string> = { PLATFORM_LOCAL: "1" };
  const serviceBindings: Record<string, string> = {};
  const durableObjects: Record<string, { className: string; useSQLite: boolean }> = {};
  for (const binding of scriptBindings) {
    if (binding.type === "plain_text" || binding.type === "secret_text") bindings[binding.name] = binding.text;
    else if (binding.type === "service") serviceBindings[binding.name] = binding.service;
    else if (binding.type === "durable_object_namespace" && binding.class_name)
      durableObjects[binding.name] = { className: binding.class_name, useSQLite: true };
  }
  return { bindings, serviceBindings, durableObjects };
}
