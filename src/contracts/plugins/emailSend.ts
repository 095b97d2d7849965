import { EMAIL_SEND_ROUTE } from "../emailMessage.ts";
import type { PluginDescriptor } from "../pluginDescriptor.ts";

/** Transactional email from `<slug>@<sender domain>`: nothing to install; `email.send` in user code. */
export const emailSendPlugin = {
  id: "email-send",
  title: "email-send",
  binding: "EMAIL_PLUGIN",
  install: { instead: "call email.send() from your project (it sends from <slug>@<the platform's sender domain>)" },
  deploy: true,
  routes: [EMAIL_SEND_ROUTE],
} as const satisfies PluginDescriptor;
