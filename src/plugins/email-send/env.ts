import type { PluginEnv } from "../kit/pluginEnv.ts";

export interface EmailPluginEnv extends PluginEnv {
  /** The provider's API base (Resend wire protocol), e.g. `https://api.resend.com`. */
  EMAIL_API_BASE?: string;
  /** Secret: the provider API key (`re_…`). */
  EMAIL_API_KEY?: string;
  /** Senders are `{slug}@{SENDER_DOMAIN}`; the domain must be verified at the provider. */
  SENDER_DOMAIN?: string;
  /** Tests only: the provider reached through a binding instead of the network. */
  EMAIL_API?: Fetcher;
}
