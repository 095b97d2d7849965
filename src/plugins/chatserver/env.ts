import { chatServerPlugin } from "../../contracts/plugins/chatserver.ts";
import type { PluginEnv } from "../kit/pluginEnv.ts";

/** Bindings of the chat-server plugin worker (see wrangler.toml beside this file). */
export interface ChatServerEnv extends PluginEnv {
  /** The chat server's origin: `https://discord.com` deployed, the local fake's URL in `platform dev` and tests. */
  CHATSERVER_BASE_URL: string;
  /** This plugin worker's own public origin (the OAuth redirect URI is `<it>/oauth/callback`). */
  CHATSERVER_PUBLIC_URL: string;
  CHATSERVER_APPLICATION_ID: string;
  CHATSERVER_CLIENT_ID: string;
  /** The application's Ed25519 public key (hex) that signs webhooks. */
  CHATSERVER_PUBLIC_KEY: string;
  /** Secret. */
  CHATSERVER_CLIENT_SECRET?: string;
  /** Secret: the shared bot token (commands, channel messages). */
  CHATSERVER_BOT_TOKEN?: string;
  /** Optional: the bot permissions asked for at install (decimal bitfield; default send messages + use commands). */
  CHATSERVER_PERMISSIONS?: string;
  /** Optional: another way to reach the chat server (tests: the fake in-process). */
  CHATSERVER_FETCH?: { fetch(request: Request): Promise<Response> };
  /** Optional: how many Gateway shards (one relay each; default 1). */
  CHATSERVER_GATEWAY_SHARDS?: string;
  /** Optional: how the webhook waits out its answer budget (interactionAck.ts; tests: a timer they fire). */
  CHATSERVER_ACK_WAIT?: (ms: number) => Promise<void>;
  /** Optional: what the bot's rate gate reads the time from (tests: a clock they move); `Date.now` otherwise. */
  CHATSERVER_CLOCK?: () => number;
}

export const PLUGIN_ID = chatServerPlugin.id;
/** What an install claims: a chat server. */
export const RESOURCE_TYPE = chatServerPlugin.install.resourceType;

/** The time the plugin's rate gates read (`CHATSERVER_CLOCK` when a test set one). */
export const chatServerNow = (env: Pick<ChatServerEnv, "CHATSERVER_CLOCK">): number =>
  (env.CHATSERVER_CLOCK ?? Date.now)();
