import { describe, expect, it } from "vitest";
import { PlatformRuntime, platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { installPluginHandler, registerPluginMetadata } from "#src/runtime/plugins/pluginRoutes.ts";

// The `__plugin` route is wired by a named call a reader can follow, not by importing the module.
describe("installPluginHandler: the __plugin route goes in with the first handler", () => {
  it("importing pluginRoutes.ts installs nothing on the worker's runtime", () => {
    expect(platformRuntime.internalRoute("__plugin")).toBeUndefined();
    expect(platformRuntime.metadata()).not.toHaveProperty("plugins");
  });

  it("installs the route and the plugins metadata on the runtime it is given, once however often it is called", () => {
    const runtime = new PlatformRuntime();
    installPluginHandler(runtime, "chatserver", () => ({ handled: 1 }));
    const route = runtime.internalRoute("__plugin");
    installPluginHandler(runtime, "workspace", () => ({ handled: 1 }));
    registerPluginMetadata("chatserver", () => ({ commands: [{ name: "ping" }] }));
    expect(route).toBeTypeOf("function");
    expect(runtime.internalRoute("__plugin")).toBe(route);
    expect(runtime.metadata()).toMatchObject({ plugins: { chatserver: { commands: [{ name: "ping" }] } } });
    expect(platformRuntime.internalRoute("__plugin")).toBeUndefined();
  });
});
