import type { V4WorkerOptions } from "miniflare";
import { describe, expect, it } from "vitest";
import type { AcceptedScript } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { withTailForwarder } from "#src/dev/cli/up/tailForwarder.ts";
import { scriptTraceToken } from "#src/dev/routes/scriptTraceToken.ts";

/** The project's worker as scriptWorker.ts makes it (here with one binding). */
const WORKER: V4WorkerOptions = {
  name: "proj-shop",
  modules: true,
  script: "",
  bindings: { PLATFORM_PROJECT_SLUG: "shop" },
};
const INTAKE = { address: "127.0.0.1:9002", consumer: "platform-api", key: "k".repeat(64) };

function upload(name: string, tailConsumers?: { service: string }[]): AcceptedScript {
  return {
    name,
    metadata: { main_module: "worker.js", ...(tailConsumers ? { tail_consumers: tailConsumers } : {}) },
    modules: new Map(),
    etag: "e",
    createdOn: "2026-01-01T00:00:00Z",
    modifiedOn: "2026-01-01T00:00:00Z",
    migrationTag: null,
    durableObjectClasses: [],
  };
}

describe("withTailForwarder: a pushed project's tail consumer under `platform up`", () => {
  it("tails the project into a forwarder beside it that alone holds the script's token and reaches the intake", async () => {
    const [project, forwarder, ...rest] = await withTailForwarder(
      WORKER,
      upload("proj-shop", [{ service: "platform-api" }]),
      INTAKE,
    );
    expect(rest).toEqual([]);
    expect(project).toEqual({ ...WORKER, tails: ["platform-tail-forwarder"] });
    expect(forwarder).toMatchObject({
      name: "platform-tail-forwarder",
      bindings: { SCRIPT: "proj-shop", TOKEN: await scriptTraceToken(INTAKE.key, "proj-shop") },
      serviceBindings: { INTAKE: { external: { address: INTAKE.address, http: {} } } },
    });
  });

  it.each([
    ["names no tail consumer", undefined],
    ["names a consumer the platform does not run", [{ service: "someone-elses-tail" }]],
  ])("leaves the worker as it is when its upload %s", async (_case, consumers) => {
    expect(await withTailForwarder(WORKER, upload("proj-shop", consumers), INTAKE)).toEqual([WORKER]);
  });

  it("hands over a request's unredacted URL (the log redacts it itself, keeping run ids)", async () => {
    const [, forwarder] = await withTailForwarder(WORKER, upload("proj-shop", [{ service: "platform-api" }]), INTAKE);
    const script = (forwarder as { script: string }).script;
    const module = (await import(`data:text/javascript,${encodeURIComponent(script)}`)) as {
      default: { tail(events: unknown[], env: unknown): Promise<void> };
    };
    const runId = `${"ab12".repeat(16)}.b8lf1wyit528`;
    let sent: { event: { request: { url: string } } }[] = [];
    const intake = async (_url: string, init: { body: string }) => {
      sent = JSON.parse(init.body);
      return new Response(null, { status: 204 });
    };
    const trace = {
      event: {
        request: {
          method: "GET",
          url: "https://shop.test/api/runs/REDACTED.b8lf1wyit528",
          getUnredacted: () => ({ url: `https://shop.test/api/runs/${runId}` }),
        },
      },
      logs: [],
      exceptions: [],
    };
    await module.default.tail([trace], { INTAKE: { fetch: intake }, SCRIPT: "proj-shop", TOKEN: "t" });
    expect(sent.map((item) => item.event.request.url)).toEqual([`https://shop.test/api/runs/${runId}`]);
  });
});
