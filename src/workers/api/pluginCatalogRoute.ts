import type { TriggerParameterUse } from "../../contracts/pluginDescriptor.ts";
import {
  commandKindOf,
  isInstallable,
  PLUGINS,
  triggerKindsOf,
  triggerParametersOf,
  type Plugin,
} from "../../contracts/pluginRegistry.ts";

/** One plugin as `GET /plugins` describes it. */
export interface PluginSummary {
  id: string;
  title: string;
  /** Installed with `platform plugin install <id>`, claiming a resource of this type; null: nothing to install. */
  resourceType: string | null;
  uninstalls: boolean;
  /** What to do instead of an install, when there is none. */
  instead: string | null;
  /** The test events its local fake can send (`platform plugin trigger`); empty: none. */
  triggerKinds: string[];
  /** The one of them that names a command. */
  commandKind: string | null;
  /** The kinds that act on what the bot posted or opened, with their parameters (the console's chat window sends those). */
  triggerParameters: Record<string, readonly TriggerParameterUse[]>;
}

function summary(plugin: Plugin): PluginSummary {
  return {
    id: plugin.id,
    title: plugin.title,
    resourceType: isInstallable(plugin) ? plugin.install.resourceType : null,
    uninstalls: isInstallable(plugin) && plugin.install.uninstalls,
    instead: isInstallable(plugin) ? null : plugin.install.instead,
    triggerKinds: [...triggerKindsOf(plugin)],
    commandKind: commandKindOf(plugin) ?? null,
    triggerParameters: Object.fromEntries(
      triggerKindsOf(plugin).flatMap((kind) => {
        const parameters = triggerParametersOf(plugin, kind);
        return parameters.length ? [[kind, parameters]] : [];
      }),
    ),
  };
}

/**
 * `GET /plugins` (CLI token): the platform's plugins, from the registry
 * (src/contracts/pluginRegistry.ts), so the console, which imports nothing,
 * offers what the CLI offers: `{ plugins: PluginSummary[] }`.
 */
export function listPlugins(): Response {
  return Response.json({ plugins: PLUGINS.map(summary) }, { headers: { "Cache-Control": "no-store" } });
}
