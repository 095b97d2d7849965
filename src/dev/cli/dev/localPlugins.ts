import type { V4WorkerOptions } from "miniflare";
import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { IDENTITY_HEADER, signRequestToken } from "../../../core/requestToken.ts";
import { loadOrCreateCredentials, saveCredentials } from "./devState.ts";

/** The plugin workers and fake providers `platform dev` runs, by Miniflare worker name. */
export const PLUGIN_WORKER_NAMES = {
  chatserver: "plugin-chatserver",
  workspace: "plugin-workspace",
  email: "plugin-email-send",
} as const;
export const FAKE_WORKER_NAMES = {
  chatserver: "fake-chatserver",
  workspace: "fake-workspace",
  email: "fake-email",
} as const;

export type LocalPluginId = keyof typeof PLUGIN_WORKER_NAMES;

/** The email plugin's sender domain under `platform dev`: a project sends from `<slug>@mail.platform.local`. */
export const LOCAL_SENDER_DOMAIN = "mail.platform.local";

/** Secrets shared by each plugin and its fake; generated once per project, kept in `.platform/credentials.json`. */
export interface LocalPluginSecrets {
  tokenEncryptionKey: string;
  stateSecret: string;
  chatserver: {
    applicationId: string;
    clientId: string;
    clientSecret: string;
    botToken: string;
    signingSeed: string;
    publicKey: string;
  };
  workspace: { clientId: string; clientSecret: string; signingSecret: string };
  email: { apiKey: string };
}

/** Every plugin worker's and fake provider's own port. */
export type LocalPluginPorts = Record<`plugin-${LocalPluginId}` | `fake-${LocalPluginId}`, number>;

/** The order `assignLocalPluginPorts` hands ports out in. */
const LOCAL_PLUGIN_PORT_NAMES = [
  "plugin-chatserver",
  "plugin-workspace",
  "plugin-email",
  "fake-chatserver",
  "fake-workspace",
  "fake-email",
] as const satisfies readonly (keyof LocalPluginPorts)[];

/** Gives each plugin worker and fake provider one of `ports` (six free ports, held open together). */
export function assignLocalPluginPorts(ports: readonly number[]): LocalPluginPorts {
  if (ports.length !== LOCAL_PLUGIN_PORT_NAMES.length)
    throw new Error(`Expected ${LOCAL_PLUGIN_PORT_NAMES.length} plugin ports, got ${ports.length}.`);
  return Object.fromEntries(LOCAL_PLUGIN_PORT_NAMES.map((name, i) => [name, ports[i]])) as LocalPluginPorts;
}

/** Where `platform plugin …` finds the running plugins and fakes (`.platform/plugins.json`). */
export interface LocalPluginUrls {
  plugins: Record<LocalPluginId, string>;
  fakes: Record<LocalPluginId, string>;
}

function ed25519PublicKeyHex(seedHex: string): string {
  // PKCS#8 wrapping of a raw 32-byte Ed25519 seed.
  const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), Buffer.from(seedHex, "hex")]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({ format: "jwk" });
  return Buffer.from(jwk.x!, "base64url").toString("hex");
}

function generateSecrets(): LocalPluginSecrets {
  const hex = (n: number) => randomBytes(n).toString("hex");
  const applicationId = String(100000000000000000n + BigInt("0x" + hex(6)));
  const signingSeed = hex(32);
  return {
    tokenEncryptionKey: hex(32),
    stateSecret: hex(32),
    chatserver: {
      applicationId,
      clientId: applicationId,
      clientSecret: hex(16),
      botToken: `local-bot-${hex(16)}`,
      signingSeed,
      publicKey: ed25519PublicKeyHex(signingSeed),
    },
    workspace: { clientId: `${Date.now()}.${BigInt("0x" + hex(5))}`, clientSecret: hex(16), signingSecret: hex(16) },
    email: { apiKey: `re_local_${hex(12)}` },
  };
}

/** The plugin secrets from `credentials.json`, created (and saved) the first time. */
export function loadOrCreatePluginSecrets(stateDir: string): LocalPluginSecrets {
  const credentials = loadOrCreateCredentials(stateDir) as ReturnType<typeof loadOrCreateCredentials> & {
    plugins?: LocalPluginSecrets;
  };
  if (credentials.plugins) return credentials.plugins;
  const plugins = generateSecrets();
  saveCredentials(stateDir, { ...credentials, plugins } as typeof credentials);
  return plugins;
}

export function writePluginUrls(stateDir: string, urls: LocalPluginUrls): void {
  writeFileSync(path.join(stateDir, "plugins.json"), JSON.stringify(urls, null, 2) + "\n", { mode: 0o600 });
}

export function localPluginUrls(host: string, ports: LocalPluginPorts): LocalPluginUrls {
  const at = (port: number) => `http://${host}:${port}`;
  return {
    plugins: {
      chatserver: at(ports["plugin-chatserver"]),
      workspace: at(ports["plugin-workspace"]),
      email: at(ports["plugin-email"]),
    },
    fakes: {
      chatserver: at(ports["fake-chatserver"]),
      workspace: at(ports["fake-workspace"]),
      email: at(ports["fake-email"]),
    },
  };
}

/**
 * The three plugin workers and three fake providers. Plugins share the
 * platform D1, use the API worker's RateLimiter/SessionCode classes, reach the
 * project through LOCAL_SCRIPTS like the API does, and talk to their fakes;
 * the fakes deliver webhooks to the plugins through a service binding.
 */
export function localPluginWorkers(input: {
  host: string;
  ports: LocalPluginPorts;
  secrets: LocalPluginSecrets;
  scripts: Record<string, string>;
  scriptBindings: Record<string, string>;
  base: (name: string, scriptPath: string) => V4WorkerOptions;
  paths: Record<
    "pluginChatserver" | "pluginWorkspace" | "pluginEmail" | "fakeChatserver" | "fakeWorkspace" | "fakeEmail",
    string
  >;
  d1Id: string;
}): V4WorkerOptions[] {
  const { secrets, ports, host } = input;
  const urls = localPluginUrls(host, ports);
  const socket = (port: number) => [{ host, port }];
  const actors = {
    RATE_LIMITER: { className: "RateLimiter", scriptName: "api", useSQLite: true },
    SESSION_CODES: { className: "SessionCode", scriptName: "api", useSQLite: true },
  };
  const shared = {
    TOKEN_ENCRYPTION_KEY: secrets.tokenEncryptionKey,
    STATE_SECRET: secrets.stateSecret,
    LOCAL_SCRIPTS: JSON.stringify(input.scripts),
  };
  const cs = secrets.chatserver;
  const ws = secrets.workspace;
  // A chat plugin (OAuth install, webhooks) and its fake provider, which it reaches through `providerBinding`
  // and which delivers webhooks to it through the service binding PLUGIN.
  const chatPlugin = (
    plugin: "chatserver" | "workspace",
    providerBinding: string,
    bindings: Record<string, string>,
  ): V4WorkerOptions => ({
    ...input.base(
      PLUGIN_WORKER_NAMES[plugin],
      plugin === "chatserver" ? input.paths.pluginChatserver : input.paths.pluginWorkspace,
    ),
    d1Databases: { DB: input.d1Id },
    // The chat-server plugin's own actor: the relay that holds the bot's Gateway connection.
    durableObjects:
      plugin === "chatserver" ? { ...actors, GATEWAY_RELAY: { className: "GatewayRelay", useSQLite: true } } : actors,
    bindings: { ...shared, ...bindings },
    serviceBindings: { ...input.scriptBindings, [providerBinding]: FAKE_WORKER_NAMES[plugin] },
    unsafeDirectSockets: socket(ports[`plugin-${plugin}`]),
  });
  const fakeProvider = (plugin: "chatserver" | "workspace", bindings: Record<string, string>): V4WorkerOptions => ({
    ...input.base(
      FAKE_WORKER_NAMES[plugin],
      plugin === "chatserver" ? input.paths.fakeChatserver : input.paths.fakeWorkspace,
    ),
    bindings,
    // The fake chat server runs in one actor: its Gateway's sockets must share one I/O context.
    ...(plugin === "chatserver" ? { durableObjects: { FAKE_STATE: { className: "FakeChatServerState" } } } : {}),
    serviceBindings: { PLUGIN: PLUGIN_WORKER_NAMES[plugin] },
    unsafeDirectSockets: socket(ports[`fake-${plugin}`]),
  });
  return [
    chatPlugin("chatserver", "CHATSERVER_FETCH", {
      CHATSERVER_BASE_URL: urls.fakes.chatserver,
      CHATSERVER_PUBLIC_URL: urls.plugins.chatserver,
      CHATSERVER_APPLICATION_ID: cs.applicationId,
      CHATSERVER_CLIENT_ID: cs.clientId,
      CHATSERVER_PUBLIC_KEY: cs.publicKey,
      CHATSERVER_CLIENT_SECRET: cs.clientSecret,
      CHATSERVER_BOT_TOKEN: cs.botToken,
    }),
    chatPlugin("workspace", "SLACK", {
      SLACK_BASE_URL: urls.fakes.workspace,
      SLACK_CLIENT_ID: ws.clientId,
      SLACK_CLIENT_SECRET: ws.clientSecret,
      SLACK_SIGNING_SECRET: ws.signingSecret,
      WORKSPACE_PUBLIC_URL: urls.plugins.workspace,
    }),
    {
      ...input.base(PLUGIN_WORKER_NAMES.email, input.paths.pluginEmail),
      d1Databases: { DB: input.d1Id },
      durableObjects: { RATE_LIMITER: actors.RATE_LIMITER },
      bindings: {
        EMAIL_API_BASE: urls.fakes.email,
        EMAIL_API_KEY: secrets.email.apiKey,
        SENDER_DOMAIN: LOCAL_SENDER_DOMAIN,
      },
      serviceBindings: { EMAIL_API: FAKE_WORKER_NAMES.email },
      unsafeDirectSockets: socket(ports["plugin-email"]),
    },
    fakeProvider("chatserver", {
      FAKE_BASE_URL: urls.fakes.chatserver,
      CHATSERVER_APPLICATION_ID: cs.applicationId,
      CHATSERVER_CLIENT_ID: cs.clientId,
      CHATSERVER_CLIENT_SECRET: cs.clientSecret,
      CHATSERVER_BOT_TOKEN: cs.botToken,
      CHATSERVER_SIGNING_SEED: cs.signingSeed,
      CHATSERVER_WEBHOOK_URL: `${urls.plugins.chatserver}/webhook`,
    }),
    fakeProvider("workspace", {
      SLACK_CLIENT_ID: ws.clientId,
      SLACK_CLIENT_SECRET: ws.clientSecret,
      SLACK_SIGNING_SECRET: ws.signingSecret,
      PLUGIN_WEBHOOK_URL: `${urls.plugins.workspace}/webhook`,
    }),
    {
      ...input.base(FAKE_WORKER_NAMES.email, input.paths.fakeEmail),
      bindings: { FAKE_EMAIL_API_KEY: secrets.email.apiKey },
      // The local outbox, on disk with the rest of the state: it outlives workerd restarts (src/dev/fakes/email).
      kvNamespaces: { OUTBOX: "fake-email-outbox" },
      unsafeDirectSockets: socket(ports["fake-email"]),
    },
  ];
}

/** The project's metadata `plugins` to each plugin's `POST /deploy`, signed with the project's identity token. */
export async function deployPluginMetadata(
  urls: LocalPluginUrls,
  project: { id: number; workerSecret: string },
  metadata: Record<string, unknown>,
): Promise<string[]> {
  const body = JSON.stringify({ plugins: (metadata.plugins as Record<string, unknown> | undefined) ?? {} });
  const problems: string[] = [];
  await Promise.all(
    (["chatserver", "workspace", "email"] as const).map(async (id) => {
      const url = new URL("/deploy", urls.plugins[id]);
      const token = await signRequestToken("identity", project.id, project.workerSecret, {
        method: "POST",
        pathAndQuery: url.pathname,
        body,
      });
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", [IDENTITY_HEADER]: token },
          body,
        });
        const text = await response.text();
        if (!response.ok) problems.push(`${id} plugin /deploy answered ${response.status}: ${text.slice(0, 300)}`);
      } catch (error) {
        problems.push(`${id} plugin /deploy failed: ${String(error)}`);
      }
    }),
  );
  return problems;
}
