import type { PluginDescriptor, PluginInstall, PluginTriggers, TriggerParameterUse } from "./pluginDescriptor.ts";
import { chatServerPlugin } from "./plugins/chatserver.ts";
import { emailSendPlugin } from "./plugins/emailSend.ts";
import { workspacePlugin } from "./plugins/workspace.ts";

/**
 * Every plugin of the platform, one descriptor each (see pluginDescriptor.ts).
 * The lists elsewhere (service bindings, install URL vars, what installs or
 * uninstalls, trigger kinds, reserved slugs, a project's upload bindings) are
 * read from here; a new plugin is its folder, its fake and one entry here.
 */
export const PLUGINS = [
  chatServerPlugin,
  workspacePlugin,
  emailSendPlugin,
] as const satisfies readonly PluginDescriptor[];

export type Plugin = (typeof PLUGINS)[number];
export type PluginId = Plugin["id"];
/** The service bindings a project worker (and the API worker) reaches the plugins through. */
export type PluginBinding = Plugin["binding"];
export type InstallablePlugin = Extract<Plugin, { install: PluginInstall }>;
export type InstallUrlVar = InstallablePlugin["install"]["urlVar"];
/** What installs claim in `plugin_resources`: a chat server, a workspace. */
export type ResourceType = InstallablePlugin["install"]["resourceType"];
export type TriggerablePlugin = Extract<Plugin, { triggers: object }>;
export type TriggerablePluginId = TriggerablePlugin["id"];
/** The routes a plugin's user functions may call. */
export type PluginRoute<Id extends PluginId> = Extract<Plugin, { id: Id }>["routes"][number];

export const PLUGIN_IDS: readonly PluginId[] = PLUGINS.map((plugin) => plugin.id);

export function pluginById<Id extends PluginId>(id: Id): Extract<Plugin, { id: Id }>;
export function pluginById(id: string): Plugin | undefined;
export function pluginById(id: string): Plugin | undefined {
  return PLUGINS.find((plugin) => plugin.id === id);
}

export function isInstallable(plugin: Plugin): plugin is InstallablePlugin {
  return "urlVar" in plugin.install;
}

/** Plugins a project installs with `platform plugin install` (OAuth, then a claimed resource). */
export const INSTALLABLE_PLUGINS: readonly InstallablePlugin[] = PLUGINS.filter(isInstallable);

/** Installable plugins `platform plugin uninstall` lets go. */
export const UNINSTALLABLE_PLUGINS: readonly InstallablePlugin[] = INSTALLABLE_PLUGINS.filter(
  (plugin) => plugin.install.uninstalls,
);

/** Plugins whose local fake can send test events (`platform plugin trigger`). */
export const TRIGGERABLE_PLUGINS: readonly TriggerablePlugin[] = PLUGINS.filter(
  (plugin): plugin is TriggerablePlugin => "triggers" in plugin,
);

/** The events a plugin's fake can send; none for a plugin without `triggers`. */
export function triggerKindsOf(plugin: Plugin): readonly string[] {
  const triggers: PluginTriggers | undefined = "triggers" in plugin ? plugin.triggers : undefined;
  return triggers?.kinds ?? [];
}

/** The one of them that names a command (sent with `name`), if any. */
export function commandKindOf(plugin: Plugin): string | undefined {
  const triggers: PluginTriggers | undefined = "triggers" in plugin ? plugin.triggers : undefined;
  return triggers?.commandKind;
}

/** The parameters a kind of test event takes besides `text` (none for a message, a reaction, a command). */
export function triggerParametersOf(plugin: Plugin, kind: string): readonly TriggerParameterUse[] {
  const triggers: PluginTriggers | undefined = "triggers" in plugin ? plugin.triggers : undefined;
  return triggers?.parameters?.[kind] ?? [];
}

export const RESOURCE_TYPES: readonly ResourceType[] = [
  ...new Set(INSTALLABLE_PLUGINS.map((plugin) => plugin.install.resourceType)),
];

export function isResourceType(value: unknown): value is ResourceType {
  return typeof value === "string" && (RESOURCE_TYPES as readonly string[]).includes(value);
}

/** The script name a plugin's worker is deployed under (its `wrangler.toml` `name`). */
export function pluginWorkerName(plugin: Pick<PluginDescriptor, "id">): `platform-plugin-${string}` {
  return `platform-plugin-${plugin.id}`;
}

/** Slugs no project may take because of the plugins: each id and the names each reserves. */
export function pluginReservedSlugs(plugins: readonly PluginDescriptor[] = PLUGINS): string[] {
  return plugins.flatMap((plugin) => [plugin.id, ...(plugin.reservedNames ?? [])]);
}
