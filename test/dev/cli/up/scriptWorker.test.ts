import { Request as MiniflareRequest } from "miniflare";
import { describe, expect, it } from "vitest";
import { PLUGINS, pluginWorkerName } from "#src/contracts/pluginRegistry.ts";
import { scriptWorker } from "#src/dev/cli/up/scriptWorker.ts";
import { projectScriptBindings, type ScriptBinding } from "#src/workers/api/projectScriptBindings.ts";

/** The platform workers' sockets, by deployed name, as `platform up` hands them over. */
const SERVICES: Record<string, string> = {
  "platform-api": "127.0.0.1:9001",
  ...Object.fromEntries(PLUGINS.map((plugin, i) => [pluginWorkerName(plugin), `127.0.0.1:${9100 + i}`])),
};

/** The Miniflare worker `platform up` runs, in a workerd of its own, for a script uploaded with these bindings. */
function workerFor(bindings: ScriptBinding[]) {
  return scriptWorker(
    {
      name: "proj-shop",
      metadata: { main_module: "worker.js", compatibility_date: "2026-10-30", bindings },
      modules: new Map([
        ["lib.js", { contentType: "application/javascript+module", content: new TextEncoder().encode("export {}") }],
        ["worker.js", { contentType: "application/javascript+module", content: new Uint8Array() }],
      ]),
      etag: "e",
      createdOn: "2026-01-01T00:00:00Z",
      modifiedOn: "2026-01-01T00:00:00Z",
      migrationTag: null,
      durableObjectClasses: [],
    },
    SERVICES,
  );
}

describe("scriptWorker: a pushed project's worker under `platform up`", () => {
  const project = { id: 7, slug: "shop", script_name: "proj-shop", worker_secret: "s3cret" };
  const worker = workerFor(projectScriptBindings(project, ["WorkflowRun"]));
  const serviceBindings = worker.serviceBindings as Record<string, unknown>;

  // The project runs in its own workerd: each platform service is that worker's loopback socket.
  const platformServices: [string, string][] = [
    ["PLATFORM_API", "platform-api"],
    ...PLUGINS.map((plugin): [string, string] => [plugin.binding, pluginWorkerName(plugin)]),
  ];
  it.each(platformServices)("binds %s to the socket of the local %s worker", (binding, local) => {
    expect(serviceBindings[binding]).toEqual({ external: { address: SERVICES[local], http: {} } });
  });

  it("answers 502 for a service the platform does not run, whatever its name", async () => {
    for (const name of ["platform-elsewhere", "toString"]) {
      const other = workerFor([{ type: "service", name: "OTHER", service: name }]);
      const handler = (other.serviceBindings as Record<string, unknown>).OTHER as () => Promise<Response>;
      const response = await handler();
      expect(response.status).toBe(502);
      expect(await response.json()).toEqual({
        error: { code: "upstream_error", message: `No worker named "${name}" runs on this platform.` },
      });
    }
  });

  it("sends its own fetch through the outbound service that refuses loopback", async () => {
    const outbound = worker.outboundService as (request: unknown) => Promise<Response>;
    const response = await outbound(new MiniflareRequest("http://127.0.0.1:8787/__fake/outbox"));
    expect(response.status).toBe(403);
  });

  it("loads the main module first, the others beside it, with the secrets, plain texts and actors", () => {
    expect((worker.modules as { path: string }[]).map((m) => m.path)).toEqual(["/script/worker.js", "/script/lib.js"]);
    expect(worker.bindings).toMatchObject({ PLATFORM_WORKER_SECRET: "s3cret", PLATFORM_PROJECT_SLUG: "shop" });
    expect(worker.durableObjects).toEqual({ WORKFLOW_RUNS: { className: "WorkflowRun", useSQLite: true } });
  });
});
