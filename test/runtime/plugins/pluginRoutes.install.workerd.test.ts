import { describe, expect, it } from "vitest";
import { PlatformRuntime, platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { installPluginHandler, registerPluginMetadata } from "#src/runtime/plugins/pluginRoutes.ts";

const FRESH_PLUGIN_ROUTES = "../../../src/runtime/plugins/pluginRoutes.ts?fresh";

// The `__plugin` route is wired by a named call a reader can follow, not by importing the module.
describe("installPluginHandler: the __plugin route goes in with the first handler", () => {
  it("importing pluginRoutes.ts installs nothing on the worker's runtime", async () => {
    const route = platformRuntime.internalRoute("__plugin");
    const metadata = platformRuntime.metadata();
    // The test files share one module graph, so the module's first import may be long past (another file may
    // have installed the route since): a fresh evaluation of it must leave the runtime as it was.
    await import(/* @vite-ignore */ FRESH_PLUGIN_ROUTES);
    expect(platformRuntime.internalRoute("__plugin")).toBe(route);
    expect(platformRuntime.metadata()).toEqual(metadata);
  });

  it("installs the route and the plugins metadata on the runtime it is given, once however often it is called", () => {
    const globalRoute = platformRuntime.internalRoute("__plugin");
    const runtime = new PlatformRuntime();
    // Plugin ids of this test's own: handlers and metadata contributors are kept by id for the whole module
    // graph, which later test files share, so the real plugins' must not be replaced.
    installPluginHandler(runtime, "install-test-a", () => ({ handled: 1 }));
    const route = runtime.internalRoute("__plugin");
    installPluginHandler(runtime, "install-test-b", () => ({ handled: 1 }));
    registerPluginMetadata("install-test-a", () => ({ commands: [{ name: "ping" }] }));
    expect(route).toBeTypeOf("function");
    expect(runtime.internalRoute("__plugin")).toBe(route);
    expect(runtime.metadata()).toMatchObject({ plugins: { "install-test-a": { commands: [{ name: "ping" }] } } });
    expect(platformRuntime.internalRoute("__plugin")).toBe(globalRoute);
  });
});
