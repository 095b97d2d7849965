import { Response as MiniflareResponse, type Request as MiniflareRequest } from "miniflare";
import type { StartableScript } from "#src/dev/cloudflare/scriptStartup.ts";
import { startInWorkerd } from "#src/dev/cloudflare/workerdScriptStarter.ts";

/** A script on the wire between the workerd tests and this service: module contents as base64. */
export type StartableScriptOnWire = Omit<StartableScript, "modules"> & {
  modules: { name: string; contentType: string; content: string }[];
};

/**
 * The workerd test pool's `SCRIPT_STARTER` service binding: Node-side, so
 * the stand-in the workerd tests run starts each upload in a real workerd
 * (`startInWorkerd`), as `platform up` does.
 */
export async function scriptStarterService(request: MiniflareRequest): Promise<MiniflareResponse> {
  const script = (await request.json()) as StartableScriptOnWire;
  const startup = await startInWorkerd({
    ...script,
    modules: script.modules.map((module) => ({ ...module, content: Buffer.from(module.content, "base64") })),
  });
  return MiniflareResponse.json(startup);
}
