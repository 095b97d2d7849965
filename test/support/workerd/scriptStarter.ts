import { env } from "cloudflare:test";
import type { ScriptStarter, ScriptStartup } from "#src/dev/cloudflare/scriptStartup.ts";
import type { StartableScriptOnWire } from "#test/support/node/scriptStarterService.ts";

/** The stand-in's `startScript` inside workerd: the Node-side starter behind the pool's `SCRIPT_STARTER` binding. */
export const startThroughPool: ScriptStarter = async (script) => {
  const wire: StartableScriptOnWire = {
    ...script,
    modules: script.modules.map((module) => ({ ...module, content: base64(module.content) })),
  };
  const response = await env.SCRIPT_STARTER.fetch("http://script-starter/", {
    method: "POST",
    body: JSON.stringify(wire),
  });
  return (await response.json()) as ScriptStartup;
};

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
