import type { V4WorkerOptions } from "miniflare";
import { createPrivateKey, createPublicKey, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { IDENTITY_HEADER, signRequestToken } from "../../../../core/requestToken.ts";
import { pluginById, pluginWorkerName } from "../../../../contracts/pluginRegistry.ts";
import { loadOrCreateCredentials, saveCredentials } from "../state/devState.ts";
import type { LocalPorts } from "../workerd/localPorts.ts";
import type { LocalOverride } from "../workerd/localWorker.ts";

/**
 * The plugins `platform dev` runs beside a fake provider: the plugin's
 * deployed worker (its src/plugins/<dir>/wrangler.toml) and the fake's
 * Miniflare name. A plugin worker without a fake still runs, with its
 * deployed vars.
 */
export const LOCAL_PLUGINS = {
  chatserver: { worker: pluginWorkerName(pluginById("chatserver")), fake: "fake-chatserver" },
  workspace: { worker: pluginWorkerName(pluginById("workspace")), fake: "fake-workspace" },
  email: { worker: pluginWorkerName(pluginById("email-send")), fake: "fake-email" },
} as const;

export type LocalPluginId = keyof typeof LOCAL_PLUGINS;
export const LOCAL_PLUGIN_IDS = Object.keys(LOCAL_PLUGINS) as LocalPluginId[];

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

export function localPluginUrls(host: string, ports: LocalPorts): LocalPluginUrls {
  const at = (port: number) => `http://${host}:${port}`;
  const byId = <T>(value: (id: LocalPluginId) => T) =>
    Object.fromEntries(LOCAL_PLUGIN_IDS.map((id) => [id, value(id)])) as Record<LocalPluginId, T>;
  return {
    plugins: byId((id) => at(ports.plugins[LOCAL_PLUGINS[id].worker]!)),
    fakes: byId((id) => at(ports.fakes[id]!)),
  };
}

/**
 * What the plugin workers get locally instead of their deployed values: the
 * fake providers' URLs and service bindings, their own local URLs, the
 * secrets they share with the fakes, and the local sender domain. By each
 * plugin's deployed worker name.
 */
export function localPluginOverrides(input: {
  host: string;
  ports: LocalPorts;
  secrets: LocalPluginSecrets;
  /** `platform dev` without `--public`: local projects are private deployments for the proxy rate. */
  localProjectsPrivate?: boolean;
}): Record<string, LocalOverride> {
  const { secrets, ports, host } = input;
  const rates = input.localProjectsPrivate ? { LOCAL_PROJECTS_PRIVATE: "1" } : {};
  const urls = localPluginUrls(host, ports);
  const socket = (id: LocalPluginId) => ({ host, port: ports.plugins[LOCAL_PLUGINS[id].worker]! });
  const chatSecrets = { TOKEN_ENCRYPTION_KEY: secrets.tokenEncryptionKey, STATE_SECRET: secrets.stateSecret };
  const cs = secrets.chatserver;
  const ws = secrets.workspace;
  return {
    [LOCAL_PLUGINS.chatserver.worker]: {
      vars: {
        ...chatSecrets,
        CHATSERVER_BASE_URL: urls.fakes.chatserver,
        CHATSERVER_PUBLIC_URL: urls.plugins.chatserver,
        CHATSERVER_APPLICATION_ID: cs.applicationId,
        CHATSERVER_CLIENT_ID: cs.clientId,
        CHATSERVER_PUBLIC_KEY: cs.publicKey,
        CHATSERVER_CLIENT_SECRET: cs.clientSecret,
        CHATSERVER_BOT_TOKEN: cs.botToken,
        ...rates,
      },
      // The plugin reaches its fake through this binding (no internet locally).
      services: { CHATSERVER_FETCH: LOCAL_PLUGINS.chatserver.fake },
      socket: socket("chatserver"),
    },
    [LOCAL_PLUGINS.workspace.worker]: {
      vars: {
        ...chatSecrets,
        SLACK_BASE_URL: urls.fakes.workspace,
        SLACK_CLIENT_ID: ws.clientId,
        SLACK_CLIENT_SECRET: ws.clientSecret,
        SLACK_SIGNING_SECRET: ws.signingSecret,
        WORKSPACE_PUBLIC_URL: urls.plugins.workspace,
        ...rates,
      },
      services: { SLACK: LOCAL_PLUGINS.workspace.fake },
      socket: socket("workspace"),
    },
    [LOCAL_PLUGINS.email.worker]: {
      vars: {
        EMAIL_API_BASE: urls.fakes.email,
        EMAIL_API_KEY: secrets.email.apiKey,
        SENDER_DOMAIN: LOCAL_SENDER_DOMAIN,
        ...rates,
      },
      services: { EMAIL_API: LOCAL_PLUGINS.email.fake },
      socket: socket("email"),
    },
  };
}

/**
 * The three fake providers, each on its own port; they deliver webhooks to
 * their plugin through the service binding PLUGIN. With `operatorToken`
 * (`platform up`) their `/__fake/*` routes demand it.
 */
export function fakeProviderWorkers(input: {
  host: string;
  ports: LocalPorts;
  secrets: LocalPluginSecrets;
  base: (name: string, scriptPath: string) => V4WorkerOptions;
  paths: Record<LocalPluginId, string>;
  operatorToken?: string;
}): V4WorkerOptions[] {
  const { secrets, ports, host } = input;
  const urls = localPluginUrls(host, ports);
  const fake = (
    id: LocalPluginId,
    options: Pick<V4WorkerOptions, "bindings" | "durableObjects" | "serviceBindings" | "kvNamespaces">,
  ): V4WorkerOptions => ({
    ...input.base(LOCAL_PLUGINS[id].fake, input.paths[id]),
    ...options,
    bindings: { ...options.bindings, ...(input.operatorToken ? { FAKE_OPERATOR_TOKEN: input.operatorToken } : {}) },
    unsafeDirectSockets: [{ host, port: ports.fakes[id]! }],
  });
  const cs = secrets.chatserver;
  const ws = secrets.workspace;
  return [
    fake("chatserver", {
      bindings: {
        FAKE_BASE_URL: urls.fakes.chatserver,
        CHATSERVER_APPLICATION_ID: cs.applicationId,
        CHATSERVER_CLIENT_ID: cs.clientId,
        CHATSERVER_CLIENT_SECRET: cs.clientSecret,
        CHATSERVER_BOT_TOKEN: cs.botToken,
        CHATSERVER_SIGNING_SEED: cs.signingSeed,
        CHATSERVER_WEBHOOK_URL: `${urls.plugins.chatserver}/webhook`,
      },
      // The fake chat server runs in one actor: its Gateway's sockets must share one I/O context.
      durableObjects: { FAKE_STATE: { className: "FakeChatServerState" } },
      serviceBindings: { PLUGIN: LOCAL_PLUGINS.chatserver.worker },
    }),
    fake("workspace", {
      bindings: {
        SLACK_CLIENT_ID: ws.clientId,
        SLACK_CLIENT_SECRET: ws.clientSecret,
        SLACK_SIGNING_SECRET: ws.signingSecret,
        PLUGIN_WEBHOOK_URL: `${urls.plugins.workspace}/webhook`,
        FAKE_BASE_URL: urls.fakes.workspace,
      },
      serviceBindings: { PLUGIN: LOCAL_PLUGINS.workspace.worker },
    }),
    fake("email", {
      bindings: { FAKE_EMAIL_API_KEY: secrets.email.apiKey },
      // The local outbox, on disk with the rest of the state: it outlives workerd restarts (src/dev/fakes/email).
      kvNamespaces: { OUTBOX: "fake-email-outbox" },
    }),
  ];
}

/** The project's metadata `plugins` to each plugin's `POST /deploy` (URLs by plugin worker), signed with the project's identity token. */
export async function deployPluginMetadata(
  pluginUrls: Record<string, string>,
  project: { id: number; workerSecret: string },
  metadata: Record<string, unknown>,
): Promise<string[]> {
  const body = JSON.stringify({ plugins: (metadata.plugins as Record<string, unknown> | undefined) ?? {} });
  const problems: string[] = [];
  await Promise.all(
    Object.entries(pluginUrls).map(async ([id, pluginUrl]) => {
      const url = new URL("/deploy", pluginUrl);
      const token = await signRequestToken(
        "identity",
        { method: "POST", pathAndQuery: url.pathname, body },
        { projectId: project.id, secret: project.workerSecret },
      );
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", [IDENTITY_HEADER]: token },
          body,
        });
        const text = await response.text();
        if (!response.ok) problems.push(`${id} /deploy answered ${response.status}: ${text.slice(0, 300)}`);
      } catch (error) {
        problems.push(`${id} /deploy failed: ${String(error)}`);
      }
    }),
  );
  return problems;
}
