import { afterEach, describe, expect, it } from "vitest";
import { createScriptUploadStandIn } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { startInWorkerd } from "#src/dev/cloudflare/workerdScriptStarter.ts";
import { serveStandIn } from "#src/dev/cli/up/standInServer.ts";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function upload(metadata: unknown, withModule = true) {
  const accepted: string[] = [];
  const standIn = createScriptUploadStandIn({
    apiToken: "t",
    startScript: startInWorkerd,
    onAccepted: (s) => {
      accepted.push(s.name);
    },
  });
  const server = await serveStandIn(standIn, "127.0.0.1");
  stops.push(server.stop);
  const form = new FormData();
  form.append("metadata", new Blob([JSON.stringify(metadata)], { type: "application/json" }));
  if (withModule)
    form.append(
      "worker.js",
      new Blob(["export default { fetch() { return new Response('hi') } }"], { type: "application/javascript+module" }),
      "worker.js",
    );
  const response = await fetch(`${server.apiBase}/accounts/a/workers/dispatch/namespaces/n/scripts/proj-x`, {
    method: "PUT",
    headers: { authorization: "Bearer t" },
    body: form,
  });
  return { response, body: (await response.json()) as Record<string, unknown>, accepted };
}

describe("the stand-in over loopback HTTP (platform up's CLOUDFLARE_API_BASE)", () => {
  it("accepts a valid upload", async () => {
    const { response, body, accepted } = await upload({ main_module: "worker.js", compatibility_date: "2026-10-30" });
    expect(response.status).toBe(200);
    expect(body.success).toBe(true);
    expect(accepted).toEqual(["proj-x"]);
  });

  it.each([
    [
      "a binding of an unknown type",
      { main_module: "worker.js", compatibility_date: "2026-10-30", bindings: [{ type: "teleport", name: "X" }] },
      true,
    ],
    ["a missing main_module", { compatibility_date: "2026-10-30" }, true],
    ["no module part", { main_module: "worker.js", compatibility_date: "2026-10-30" }, false],
  ])("refuses %s in Cloudflare's error shape, serving nothing", async (_name, metadata, withModule) => {
    const { response, body, accepted } = await upload(metadata, withModule);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(body).toMatchObject({ success: false, result: null, messages: [] });
    const errors = body.errors as { code: number; message: string }[];
    expect(errors.length).toBeGreaterThan(0);
    expect(typeof errors[0]!.code).toBe("number");
    expect(errors[0]!.message.length).toBeGreaterThan(0);
    expect(accepted).toEqual([]);
  });
});
