/**
 * The fake chat server as a worker (run by `platform dev` and tests). Vars:
 *   FAKE_BASE_URL            where this worker is reachable
 *   CHATSERVER_APPLICATION_ID, CHATSERVER_CLIENT_ID, CHATSERVER_CLIENT_SECRET, CHATSERVER_BOT_TOKEN
 *   CHATSERVER_SIGNING_SEED  Ed25519 seed (hex); the plugin's CHATSERVER_PUBLIC_KEY is its public key
 *   CHATSERVER_WEBHOOK_URL   the plugin's POST /webhook URL
 *   CHATSERVER_REDIRECT_URIS optional, comma-separated registered redirect URIs
 *   CHATSERVER_GATEWAY_HEARTBEAT_MS optional, the Gateway's heartbeat interval (default 41250)
 *   FAKE_OPERATOR_TOKEN      optional (`platform up`): what its `/__fake/*` routes demand (operatorGate.ts)
 * Optional service binding PLUGIN: deliver webhooks through it instead of the network.
 * Every request is served by one `FakeChatServerState` actor (binding FAKE_STATE): the Gateway's sockets
 * must stay in one I/O context, which a plain worker's requests do not share. State is in its memory;
 * POST /__fake/reset clears it.
 */
import { DurableObject } from "cloudflare:workers";
import { createFakeChatServer, type FakeChatServer } from "./fakeChatServer.ts";
import { refuseWithoutOperator } from "../operatorGate.ts";

export interface FakeChatServerEnv {
  FAKE_BASE_URL: string;
  CHATSERVER_APPLICATION_ID: string;
  CHATSERVER_CLIENT_ID: string;
  CHATSERVER_CLIENT_SECRET: string;
  CHATSERVER_BOT_TOKEN: string;
  CHATSERVER_SIGNING_SEED: string;
  CHATSERVER_WEBHOOK_URL: string;
  CHATSERVER_REDIRECT_URIS?: string;
  CHATSERVER_GATEWAY_HEARTBEAT_MS?: string;
  FAKE_OPERATOR_TOKEN?: string;
  PLUGIN?: Fetcher;
  FAKE_STATE: DurableObjectNamespace<FakeChatServerState>;
}

/** The fake configured by the worker's vars. */
export function fakeFromEnv(env: FakeChatServerEnv): FakeChatServer {
  const plugin = env.PLUGIN;
  const heartbeat = Number(env.CHATSERVER_GATEWAY_HEARTBEAT_MS);
  return createFakeChatServer({
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
    ...(heartbeat > 0 ? { gatewayHeartbeatMS: heartbeat } : {}),
    ...(plugin ? { deliver: (r: Request) => plugin.fetch(r) } : {}),
  });
}

/** The one actor that holds the fake (and its Gateway's sockets). */
export class FakeChatServerState extends DurableObject<FakeChatServerEnv> {
  private readonly fake = fakeFromEnv(this.env);

  override fetch(request: Request): Promise<Response> {
    return this.fake.fetch(request);
  }
}

export default {
  async fetch(request: Request, env: FakeChatServerEnv): Promise<Response> {
    const refused = refuseWithoutOperator(request, env.FAKE_OPERATOR_TOKEN);
    if (refused) return refused;
    return env.FAKE_STATE.get(env.FAKE_STATE.idFromName("fake")).fetch(request);
  },
};
