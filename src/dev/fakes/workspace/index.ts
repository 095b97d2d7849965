import { createFakeWorkspace, type FakeWorkspace } from "./fakeWorkspace.ts";
import { refuseWithoutOperator } from "../operatorGate.ts";

/**
 * The fake workspace provider as a worker (run by `platform dev` and tests).
 * Configured by vars named like the plugin's (`SLACK_*`, the convention in
 * src/plugins/workspace/env.ts); `PLUGIN` (optional service binding
 * to the workspace plugin worker) carries event deliveries instead of a
 * network fetch to PLUGIN_WEBHOOK_URL; `FAKE_OPERATOR_TOKEN`, when set
 * (`platform up`), is what its `/__fake/*` routes demand (operatorGate.ts).
 */
export interface FakeWorkspaceEnv {
  SLACK_CLIENT_ID: string;
  SLACK_CLIENT_SECRET: string;
  SLACK_SIGNING_SECRET: string;
  /** e.g. http://127.0.0.1:8790/webhook */
  PLUGIN_WEBHOOK_URL: string;
  /** "1": access tokens expire and rotate with single-use refresh tokens. */
  TOKEN_ROTATION?: string;
  /** Access-token lifetime in seconds with rotation on (default 43200). */
  TOKEN_EXPIRES_IN?: string;
  /** Comma-separated registered redirect URIs (default: any http(s) URL). */
  REDIRECT_URIS?: string;
  /** Where the fake is reachable: the origin of the response_urls it hands out. */
  FAKE_BASE_URL?: string;
  FAKE_OPERATOR_TOKEN?: string;
  PLUGIN?: Fetcher;
}

const instances = new WeakMap<object, FakeWorkspace>();

export function fakeWorkspaceFor(env: FakeWorkspaceEnv): FakeWorkspace {
  let fake = instances.get(env);
  if (!fake) {
    const plugin = env.PLUGIN;
    fake = createFakeWorkspace({
      clientId: env.SLACK_CLIENT_ID,
      clientSecret: env.SLACK_CLIENT_SECRET,
      signingSecret: env.SLACK_SIGNING_SECRET,
      webhookUrl: env.PLUGIN_WEBHOOK_URL,
      tokenRotation: env.TOKEN_ROTATION === "1",
      expiresIn: env.TOKEN_EXPIRES_IN ? Number(env.TOKEN_EXPIRES_IN) : undefined,
      redirectUris: env.REDIRECT_URIS
        ? env.REDIRECT_URIS.split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : undefined,
      deliver: plugin ? (request) => plugin.fetch(request) : undefined,
      baseUrl: env.FAKE_BASE_URL,
    });
    instances.set(env, fake);
  }
  return fake;
}

export default {
  async fetch(request: Request, env: FakeWorkspaceEnv): Promise<Response> {
    const refused = refuseWithoutOperator(request, env.FAKE_OPERATOR_TOKEN);
    if (refused) return refused;
    return fakeWorkspaceFor(env).fetch(request);
  },
} satisfies ExportedHandler<FakeWorkspaceEnv>;
