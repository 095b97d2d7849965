import type { ChatServerEnv } from "#src/plugins/chatserver/env.ts";
import {
  createFakeChatServer,
  type FakeChatServer,
  type FakeChatServerConfig,
} from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { pluginEnv } from "./plugins.ts";

/** The test chat server's application: its id, secret, bot token and signing key (RFC 8032's first test vector). */
export const CHAT_APP = {
  baseUrl: "https://discord.fake",
  id: "900000000000000001",
  clientSecret: "client-secret",
  botToken: "bot-token",
  signingSeed: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
  publicKey: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
};

/** The fake chat server with the test application (`CHAT_APP`) unless `config` says otherwise. */
export function testChatServer(config: Partial<FakeChatServerConfig> = {}): FakeChatServer {
  return createFakeChatServer({
    baseUrl: CHAT_APP.baseUrl,
    applicationId: CHAT_APP.id,
    clientId: config.applicationId ?? CHAT_APP.id,
    clientSecret: CHAT_APP.clientSecret,
    botToken: CHAT_APP.botToken,
    signingSeed: CHAT_APP.signingSeed,
    webhookUrl: "https://chatserver.plugin.test/webhook",
    ...config,
  });
}

/** The chat-server plugin worker's env for the test application, reaching `fake` as its chat server. */
export function chatServerPluginEnv(fake: FakeChatServer, extra: Record<string, unknown> = {}): ChatServerEnv {
  return pluginEnv({
    CHATSERVER_BASE_URL: CHAT_APP.baseUrl,
    CHATSERVER_PUBLIC_URL: "https://chatserver.plugin.test",
    CHATSERVER_APPLICATION_ID: CHAT_APP.id,
    CHATSERVER_CLIENT_ID: CHAT_APP.id,
    CHATSERVER_CLIENT_SECRET: CHAT_APP.clientSecret,
    CHATSERVER_BOT_TOKEN: CHAT_APP.botToken,
    CHATSERVER_PUBLIC_KEY: CHAT_APP.publicKey,
    CHATSERVER_FETCH: { fetch: (r: Request) => fake.fetch(r) },
    ...extra,
  }) as ChatServerEnv;
}
