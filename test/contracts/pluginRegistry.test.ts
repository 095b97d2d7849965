import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PluginDescriptor } from "#src/contracts/pluginDescriptor.ts";
import {
  INSTALLABLE_PLUGINS,
  isInstallable,
  isResourceType,
  PLUGIN_IDS,
  PLUGINS,
  pluginById,
  pluginReservedSlugs,
  pluginWorkerName,
  RESOURCE_TYPES,
  TRIGGERABLE_PLUGINS,
  UNINSTALLABLE_PLUGINS,
} from "#src/contracts/pluginRegistry.ts";
import { readPlatformWorkerConfigs } from "#src/dev/cli/deploy/platformWorkerConfigs.ts";
import { RESERVED_SLUGS } from "#src/workers/api/reservedSlugs.ts";

const repo = path.resolve(import.meta.dirname, "../..");
const configs = readPlatformWorkerConfigs(repo);
const apiWorker = configs.find((config) => config.configPath === "wrangler.toml")!;

describe("the plugin registry", () => {
  it("names each plugin, binding and install URL var once", () => {
    const unique = (values: string[]) => expect(new Set(values).size).toBe(values.length);
    unique(PLUGINS.map((plugin) => plugin.id));
    unique(PLUGINS.map((plugin) => plugin.binding));
    unique(INSTALLABLE_PLUGINS.map((plugin) => plugin.install.urlVar));
  });

  // The built-in plugins, as the actions see them (a new plugin adds itself; it changes none of these).
  it.each([
    [
      "chatserver",
      { claims: "server", uninstalls: true, events: ["command", "message", "reaction", "component", "modal"] },
    ],
    [
      "workspace",
      { claims: "workspace", uninstalls: true, events: ["message", "mention", "reaction", "action", "view"] },
    ],
    ["email-send", { claims: null, uninstalls: false, events: [] }],
  ])("%s: %o", (id, expected) => {
    expect({
      claims: INSTALLABLE_PLUGINS.find((plugin) => plugin.id === id)?.install.resourceType ?? null,
      uninstalls: UNINSTALLABLE_PLUGINS.some((plugin) => plugin.id === id),
      events: TRIGGERABLE_PLUGINS.find((plugin) => plugin.id === id)?.triggers.kinds ?? [],
    }).toEqual(expected);
    if (expected.claims) expect(RESOURCE_TYPES).toContain(expected.claims);
  });

  it.each([
    ["chatserver", true],
    ["email-send", true],
    ["fax", false],
    ["CHATSERVER_PLUGIN", false],
    ["__proto__", false],
    [undefined, false],
  ])("pluginById(%s) finds a plugin: %s", (value, known) => {
    expect(pluginById(String(value))?.id).toBe(known ? value : undefined);
  });

  it.each(["server", "workspace"])("isResourceType(%s) → true", (value) => {
    expect(isResourceType(value)).toBe(true);
  });

  it.each(["guild", "email-send"])("isResourceType(%s) → false", (value) => {
    expect(isResourceType(value)).toBe(false);
  });

  it("reserves each plugin's id and the names its descriptor adds", () => {
    for (const id of PLUGIN_IDS) expect(RESERVED_SLUGS.has(id)).toBe(true);
    const fax: PluginDescriptor = {
      id: "fax",
      title: "fax",
      binding: "FAX_PLUGIN",
      install: { instead: "call fax.send() from your project" },
      deploy: false,
      reservedNames: ["telefax"],
      routes: ["/send"],
    };
    expect(pluginReservedSlugs([...PLUGINS, fax])).toEqual([...PLUGIN_IDS, "fax", "telefax"]);
  });
});

describe.each(PLUGINS.map((plugin) => [plugin.id, plugin] as const))("the %s plugin's deployment", (id, plugin) => {
  it(`is src/plugins/${id}/wrangler.toml, deployed as platform-plugin-${id}`, () => {
    const config = configs.find((c) => c.configPath === `src/plugins/${id}/wrangler.toml`);
    expect(config?.name).toBe(pluginWorkerName(plugin));
  });

  // The API worker calls a plugin to install, uninstall or hand it a deploy; otherwise only projects bind it.
  const apiCallsIt = plugin.deploy || isInstallable(plugin);
  it(`is ${apiCallsIt ? "" : "not "}bound to the API worker as ${plugin.binding}`, () => {
    const services = (apiWorker.raw.services ?? []).filter((s) => s.binding === plugin.binding);
    expect(services.map((s) => s.service)).toEqual(apiCallsIt ? [pluginWorkerName(plugin)] : []);
  });

  if (isInstallable(plugin))
    it(`has its install URL in the API worker's ${plugin.install.urlVar}`, () => {
      expect(apiWorker.raw.vars?.[plugin.install.urlVar]).toMatch(/^https:\/\//);
    });
});
