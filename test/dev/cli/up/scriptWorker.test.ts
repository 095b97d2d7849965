import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PLUGINS, pluginWorkerName } from "#src/contracts/pluginRegistry.ts";
import { scriptWorker } from "#src/dev/cli/up/scriptWorker.ts";
import { projectScriptBindings, type ScriptBinding } from "#src/workers/api/dispatchUpload.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The Miniflare worker `platform up` runs for a script uploaded with these bindings. */
function workerFor(bindings: ScriptBinding[]) {
  const dir = mkdtempSync(path.join(tmpdir(), "script-worker-"));
  dirs.push(dir);
  return scriptWorker(
    {
      name: "proj-shop",
      metadata: { main_module: "worker.js", compatibility_date: "2026-10-30", bindings },
      modules: new Map([["worker.js", { contentType: "application/javascript+module", content: new Uint8Array() }]]),
      etag: "e",
      createdOn: "2026-01-01T00:00:00Z",
      modifiedOn: "2026-01-01T00:00:00Z",
      migrationTag: null,
      durableObjectClasses: [],
    },
    dir,
  );
}

describe("scriptWorker: a project's service bindings under `platform up`", () => {
  const project = { id: 7, slug: "shop", script_name: "proj-shop", worker_secret: "s3cret" };
  const { serviceBindings } = workerFor(projectScriptBindings(project, []));

  // The local platform runs every worker under its deployed name, so a binding names its worker as deployed.
  it.each(PLUGINS.map((plugin) => [plugin.binding, pluginWorkerName(plugin)]))(
    "binds %s to the local %s worker",
    (binding, local) => {
      expect((serviceBindings as Record<string, string>)[binding]).toBe(local);
    },
  );

  it("binds the API worker as platform-api, and a service that is not the platform's by its own name", () => {
    expect((serviceBindings as Record<string, string>).PLATFORM_API).toBe("platform-api");
    const other = workerFor([{ type: "service", name: "OTHER", service: "platform-elsewhere" }]);
    expect(other.serviceBindings).toEqual({ OTHER: "platform-elsewhere" });
  });
});
