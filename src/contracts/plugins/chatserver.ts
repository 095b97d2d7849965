import { CHAT_EVENT_KINDS, CHAT_PROXY_ROUTES } from "../chatServerEvents.ts";
import { optional, required, type PluginDescriptor } from "../pluginDescriptor.ts";

/** The chat-server bot: installed per server; slash commands, events, components and modals; `chatserver.*` in user code. */
export const chatServerPlugin = {
  id: "chatserver",
  title: "chat-server",
  binding: "CHATSERVER_PLUGIN",
  install: { urlVar: "CHATSERVER_PLUGIN_URL", resourceType: "server", uninstalls: true },
  deploy: true,
  triggers: {
    kinds: ["command", ...CHAT_EVENT_KINDS, "component", "modal"],
    commandKind: "command",
    // A click on a button or a choice in a select of a message the bot posted; a submit of a modal it opened.
    parameters: {
      component: [required("customId"), optional("values")],
      modal: [required("customId"), optional("fields")],
    },
  },
  routes: CHAT_PROXY_ROUTES.map((route) => `/proxy/${route}` as const),
} as const satisfies PluginDescriptor;
