/// <reference types="vite/types/importMeta.d.ts" />
import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { PLUGINS } from "#src/contracts/pluginRegistry.ts";

// Every plugin's worker, found the way the registry names it (src/plugins/<id>/index.ts), so a new plugin is
// checked without being listed here. A glob takes a path relative to this file, not an import alias.
type PluginWorker = { fetch(request: Request, env: unknown, ctx: ExecutionContext): Promise<Response> };
const workers = import.meta.glob<{ default: PluginWorker }>("../../src/plugins/*/index.ts", { eager: true });

function workerOf(id: string): PluginWorker {
  const worker = workers[`../../src/plugins/${id}/index.ts`]?.default;
  if (!worker) throw new Error(`src/plugins/${id}/index.ts has no default export`);
  return worker;
}

async function post(id: string, path: string): Promise<{ status: number; code: unknown }> {
  const request = new Request(`https://plugin.internal${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const response = await workerOf(id).fetch(request, env, createExecutionContext());
  const body = (await response.json()) as { error?: { code?: unknown } };
  return { status: response.status, code: body.error?.code };
}

describe.each(PLUGINS.map((plugin) => [plugin.id, plugin] as const))("the %s plugin's worker", (id, plugin) => {
  it.each(plugin.routes.map((route) => [route]))(
    "serves POST %s, the route its user functions call, only to a project's identity token",
    async (route) => {
      expect(await post(id, route)).toEqual({ status: 401, code: "unauthorized" });
    },
  );

  it("serves no user-function route its descriptor does not name", async () => {
    expect(await post(id, "/proxy/not-a-route")).toEqual({ status: 404, code: "not_found" });
  });
});
