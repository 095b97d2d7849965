/**
 * The fake chat server as a worker (run by `platform dev` and tests). Vars:
 *   FAKE_BASE_URL            where this worker is reachable
 *   CHATSERVER_APPLICATION_ID, CHATSERVER_CLIENT_ID, CHATSERVER_CLIENT_SECRET, CHATSERVER_BOT_TOKEN
 *   CHATSERVER_SIGNING_SEED  Ed25519 seed (hex); the plugin's CHATSERVER_PUBLIC_KEY is its public key
 *   CHATSERVER_WEBHOOK_URL   the plugin's POST /webhook URL
 *   CHATSERVER_REDIRECT_URIS optional, comma-separated registered redirect URIs
 * Optional service binding PLUGIN: deliver webhooks through it instead of the network.
 * State is in memory (one isolate); POST /__fake/reset clears it.
 */
import { createFakeChatServer, type FakeChatServer } from "./fakeChatServer.ts";

export interface FakeChatServerEnv {
  FAKE_BASE_URL: string;
  CHATSERVER_APPLICATION_ID: string;
  CHATSERVER_CLIENT_ID: string;
  CHATSERVER_CLIENT_SECRET: string;
  CHATSERVER_BOT_TOKEN: string;
  CHATSERVER_SIGNING_SEED: string;
  CHATSERVER_WEBHOOK_URL: string;
  CHATSERVER_REDIRECT_URIS?: string;
  PLUGIN?: Fetcher;
}

let instance: { env: FakeChatServerEnv; fake: FakeChatServer } | null = null;

export default {
  fetch(request: Request, env: FakeChatServerEnv): Promise<Response> {
    if (!instance || instance.env !== env) {
      const plugin = env.PLUGIN;
      instance = {
        env,
        fake: createFakeChatServer({
          baseUrl: env.FAKE_BASE_URL,
          applicationId: env.CHATSERVER_APPLICATION_ID,
          clientId: env.CHATSERVER_CLIENT_ID,
          clientSecret: env.CHATSERVER_CLIENT_SECRET,
          botToken: env.CHATSERVER_BOT_TOKEN,
          signingSeed: env.CHATSERVER_SIGNING_SEED,
          webhookUrl: env.CHATSERVER_WEBHOOK_URL,
          redirectUris: env.CHATSERVER_REDIRECT_URIS?.split(",")
            .map((s) => s.trim())
            .filter(Boolean),
          ...(plugin ? { deliver: (r: Request) => plugin.fetch(r) } : {}),
        }),
      };
    }
    return instance.fake.fetch(request);
  },
};
