import { CHAT_EVENT_KINDS, CHAT_PROXY_ROUTES } from "../chatServerEvents.ts";
import type { PluginDescriptor } from "../pluginDescriptor.ts";

/** The chat-server bot: installed per server; slash commands and events; `chatserver.*` in user code. */
export const chatServerPlugin = {
  id: "chatserver",
  title: "chat-server",
  binding: "CHATSERVER_PLUGIN",
  install: { urlVar: "CHATSERVER_PLUGIN_URL", resourceType: "server", uninstalls: true },
  deploy: true,
  triggers: { kinds: ["command", ...CHAT_EVENT_KINDS], commandKind: "command" },
  routes: CHAT_PROXY_ROUTES.map((route) => `/proxy/${route}` as const),
} as const satisfies PluginDescriptor;
