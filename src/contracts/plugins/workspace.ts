import { optional, required, type PluginDescriptor } from "../pluginDescriptor.ts";
import { WORKSPACE_EVENT_KINDS, WORKSPACE_PROXY_ROUTES } from "../workspaceEvents.ts";

/** The workspace-chat bot: installed per workspace, one per project; events, block actions and views; `workspace.*` in user code. */
export const workspacePlugin = {
  id: "workspace",
  title: "workspace-chat",
  binding: "WORKSPACE_PLUGIN",
  install: { urlVar: "WORKSPACE_PLUGIN_URL", resourceType: "workspace", uninstalls: true },
  deploy: true,
  triggers: {
    kinds: [...WORKSPACE_EVENT_KINDS, "action", "view"],
    // A click on a button or a choice in a select of a message the bot posted; a submit of a view it opened.
    parameters: {
      action: [required("actionId"), optional("value")],
      view: [required("callbackId"), optional("fields")],
    },
  },
  routes: WORKSPACE_PROXY_ROUTES.map((route) => `/proxy/${route}` as const),
} as const satisfies PluginDescriptor;
