import { describe, expect, it } from "vitest";
import { workflow as registry } from "#src/engine/api/workflowApi.ts";
import { PlatformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { installWorkflowCapability } from "#src/runtime/workflow/workflowCapability.ts";

// The workflow capability is wired by one named call a reader can follow (src/runtime/workflow/index.ts makes it).
describe("installWorkflowCapability", () => {
  it("installs the __workflow route, the workflows metadata, the stream route and the callback route on the runtime it is given", () => {
    const runtime = new PlatformRuntime();
    expect(runtime.internalRoute("__workflow")).toBeUndefined();
    expect(runtime.publicRoutes).toHaveLength(0);

    expect(installWorkflowCapability(runtime)).toBe(registry);

    expect(runtime.internalRoute("__workflow")).toBeTypeOf("function");
    expect(runtime.publicRoutes).toHaveLength(2);
    expect(runtime.metadata()).toHaveProperty("workflows");
  });

  it("its __workflow route answers 404 in an environment without the run actors", async () => {
    const runtime = new PlatformRuntime();
    installWorkflowCapability(runtime);
    const route = runtime.internalRoute("__workflow")!;
    const response = await route(
      new Request("https://shop.internal/__workflow/runs/nope"),
      {} as never,
      {} as ExecutionContext,
      "/runs/nope",
    );
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({
      error: { code: "not_found", message: "This project has no workflow actors." },
    });
  });
});
