import { chatServerPlugin } from "../../../contracts/plugins/chatserver.ts";
import { emailSendPlugin } from "../../../contracts/plugins/emailSend.ts";
import { workspacePlugin } from "../../../contracts/plugins/workspace.ts";
import { INSTALLABLE_PLUGINS, pluginWorkerName } from "../../../contracts/pluginRegistry.ts";
import { fromBase64url, fromHex } from "../../../core/crypto/encoding.ts";
import type { PlatformWorkerConfig } from "./platformWorkerConfigs.ts";

/**
 * What a deploy reads from the environment: the secrets each worker reads
 * (its wrangler.toml comments and env.ts name them) and the settings the
 * committed configs leave as placeholders. Nothing here is ever written to a
 * committed file.
 */
export interface EnvironmentEntry {
  /** The environment variable the deploy reads. */
  envVar: string;
  /** Script names of the workers that receive it. */
  workers: string[];
  purpose: string;
  howToMake: string;
}

export interface PlatformSecret extends EnvironmentEntry {
  /** The secret's name in the worker (usually `envVar`). */
  secret: string;
  /** What is wrong with a value, if anything. */
  check?: (value: string) => string | undefined;
}

const API = "platform-api";
const LOGIN = "platform-login";
const CHATSERVER = pluginWorkerName(chatServerPlugin);
const WORKSPACE = pluginWorkerName(workspacePlugin);
const EMAIL = pluginWorkerName(emailSendPlugin);
/** Every plugin installed with OAuth seals tokens and signs its OAuth state. */
const OAUTH_PLUGINS = INSTALLABLE_PLUGINS.map(pluginWorkerName);

/** The domain the committed configs use in routes and URLs; `PLATFORM_DOMAIN` replaces it. */
export const PLACEHOLDER_DOMAIN = "example.app";
/** How a committed config marks a value that has no sensible default. */
const PLACEHOLDER_MARK = "replace-with-";

const atLeast32Characters = (value: string) =>
  value.length >= 32 ? undefined : `must be at least 32 characters (has ${value.length})`;

/** 32 bytes as 64 hex characters or base64/base64url, as the plugins' token vault decodes it. */
const thirtyTwoByteKey = (value: string) => {
  const text = value.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(text)
    ? fromHex(text)
    : fromBase64url(text.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, ""));
  return bytes?.byteLength === 32 ? undefined : "must be 32 bytes, written as 64 hex characters or base64";
};

export const PLATFORM_SECRETS: PlatformSecret[] = [
  {
    secret: "ADMIN_TOKEN",
    envVar: "ADMIN_TOKEN",
    workers: [API],
    purpose: "bootstraps users and CLI tokens (POST /admin/users)",
    howToMake: "openssl rand -base64 32",
    check: atLeast32Characters,
  },
  {
    secret: "CLOUDFLARE_API_TOKEN",
    // Not CLOUDFLARE_API_TOKEN itself: that one is wrangler's own, broader deploy token.
    envVar: "PROJECTS_UPLOAD_API_TOKEN",
    workers: [API],
    purpose: "the API worker's CLOUDFLARE_API_TOKEN: uploads projects into the dispatch namespace",
    howToMake: "Cloudflare dashboard → API Tokens → custom token with Account · Workers Scripts · Edit",
  },
  {
    secret: "SECRETS_ENCRYPTION_KEY",
    envVar: "SECRETS_ENCRYPTION_KEY",
    workers: [API],
    purpose: "seals projects' secrets (platform secret put) at rest in D1",
    howToMake: "openssl rand -hex 32",
    check: thirtyTwoByteKey,
  },
  {
    secret: "OIDC_CLIENT_SECRET",
    envVar: "OIDC_CLIENT_SECRET",
    workers: [LOGIN],
    purpose: "the login worker's client secret at the identity provider",
    howToMake: "the identity provider's web-client registration (redirect URI <LOGIN_PUBLIC_URL>/callback)",
  },
  {
    secret: "LOGIN_FLOW_SECRET",
    envVar: "LOGIN_FLOW_SECRET",
    workers: [LOGIN],
    purpose: "encrypts the sign-in flow cookie",
    howToMake: "openssl rand -base64 48",
    check: atLeast32Characters,
  },
  {
    secret: "TOKEN_ENCRYPTION_KEY",
    envVar: "TOKEN_ENCRYPTION_KEY",
    workers: [...OAUTH_PLUGINS],
    purpose: "seals stored OAuth, bot and reply tokens",
    howToMake: "openssl rand -hex 32",
    check: thirtyTwoByteKey,
  },
  {
    secret: "STATE_SECRET",
    envVar: "STATE_SECRET",
    workers: [...OAUTH_PLUGINS],
    purpose: "signs OAuth state and resource references",
    howToMake: "openssl rand -base64 48",
    check: atLeast32Characters,
  },
  {
    secret: "CHATSERVER_CLIENT_SECRET",
    envVar: "CHATSERVER_CLIENT_SECRET",
    workers: [CHATSERVER],
    purpose: "the chat-server application's OAuth2 client secret",
    howToMake: "the chat server's developer portal → your application → OAuth2",
  },
  {
    secret: "CHATSERVER_BOT_TOKEN",
    envVar: "CHATSERVER_BOT_TOKEN",
    workers: [CHATSERVER],
    purpose: "the shared bot token (command registration, channel messages)",
    howToMake: "the chat server's developer portal → your application → Bot → token",
  },
  {
    secret: "SLACK_CLIENT_SECRET",
    envVar: "SLACK_CLIENT_SECRET",
    workers: [WORKSPACE],
    purpose: "the workspace app's OAuth client secret",
    howToMake: "the app's settings → Basic Information → App Credentials",
  },
  {
    secret: "SLACK_SIGNING_SECRET",
    envVar: "SLACK_SIGNING_SECRET",
    workers: [WORKSPACE],
    purpose: "verifies the workspace's signed webhooks",
    howToMake: "the app's settings → Basic Information → App Credentials",
  },
  {
    secret: "EMAIL_API_KEY",
    envVar: "EMAIL_API_KEY",
    workers: [EMAIL],
    purpose: "the email provider's API key (Resend wire protocol)",
    howToMake: "the email provider's dashboard → API keys (sending access)",
  },
];

/** Settings a real deploy cannot do without; placeholder vars of the configs are added to them. */
const REQUIRED_SETTINGS: EnvironmentEntry[] = [
  {
    envVar: "CLOUDFLARE_ACCOUNT_ID",
    workers: [API],
    purpose: "the account wrangler deploys to; also the API worker's upload target",
    howToMake: "Cloudflare dashboard → Workers & Pages → Account ID (or `npx wrangler whoami`)",
  },
  {
    envVar: "PLATFORM_DOMAIN",
    workers: [],
    purpose: `replaces ${PLACEHOLDER_DOMAIN} in every route, zone and URL var (the zone must be on the account)`,
    howToMake: "a domain whose zone is on the Cloudflare account, e.g. apps.example.org",
  },
];

/** Where to find the values the configs leave as placeholders. */
const PLACEHOLDER_HINTS: Record<string, string> = {
  OIDC_CLIENT_ID: "the identity provider's web-client registration (the same client as OIDC_CLIENT_SECRET)",
  CHATSERVER_APPLICATION_ID: "the chat server's developer portal → your application → General Information",
  CHATSERVER_CLIENT_ID: "the chat server's developer portal → your application → OAuth2 → Client ID",
  CHATSERVER_PUBLIC_KEY:
    "the chat server's developer portal → your application → General Information → Public Key (hex)",
  SLACK_CLIENT_ID: "the app's settings → Basic Information → App Credentials → Client ID",
};

/** wrangler's own credentials: read by wrangler, never set on a worker. */
export const WRANGLER_CREDENTIALS: EnvironmentEntry = {
  envVar: "CLOUDFLARE_API_TOKEN",
  workers: [],
  purpose: "wrangler's token for the deploy itself (or run `npx wrangler login` once instead)",
  howToMake: "Cloudflare dashboard → API Tokens → “Edit Cloudflare Workers” template plus D1 · Edit and Queues · Edit",
};

/** Every setting the deploy requires: the fixed ones, then each var a config leaves as a placeholder. */
export function requiredSettings(workers: PlatformWorkerConfig[]): EnvironmentEntry[] {
  const settings = REQUIRED_SETTINGS.map((s) => ({ ...s, workers: [...s.workers] }));
  for (const worker of workers) {
    for (const [name, value] of Object.entries(worker.raw.vars ?? {})) {
      if (typeof value !== "string" || !value.includes(PLACEHOLDER_MARK)) continue;
      const known = settings.find((s) => s.envVar === name);
      if (known) {
        if (!known.workers.includes(worker.name)) known.workers.push(worker.name);
        continue;
      }
      settings.push({
        envVar: name,
        workers: [worker.name],
        purpose: `the ${worker.name} var ${name} (${worker.configPath} has a placeholder)`,
        howToMake: PLACEHOLDER_HINTS[name] ?? `see the comments in ${worker.configPath}`,
      });
    }
  }
  return settings;
}

/** Secrets of the given workers only (a secret shared by two workers is read once). */
export function secretsOf(workerNames: string[]): PlatformSecret[] {
  return PLATFORM_SECRETS.filter((s) => s.workers.some((w) => workerNames.includes(w)));
}

/** What the environment lacks or gets wrong for a real deploy, one line each; empty when it is complete. */
export function environmentProblems(workers: PlatformWorkerConfig[], env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const entries: Array<EnvironmentEntry & { check?: PlatformSecret["check"] }> = [
    ...requiredSettings(workers),
    ...secretsOf(workers.map((w) => w.name)),
  ];
  for (const entry of entries) {
    const value = env[entry.envVar];
    const where = entry.workers.length > 0 ? ` (${entry.workers.join(", ")})` : "";
    if (!value)
      problems.push(`${entry.envVar} is not set${where}: ${entry.purpose}; make one with: ${entry.howToMake}`);
    else {
      const wrong = entry.check?.(value);
      if (wrong) problems.push(`${entry.envVar} ${wrong}${where}`);
    }
  }
  return problems;
}

/** The secrets one worker gets, from the environment (placeholders in a dry run, which uploads nothing). */
export function workerSecrets(worker: string, env: NodeJS.ProcessEnv, dryRun: boolean): Record<string, string> {
  return Object.fromEntries(
    secretsOf([worker]).map((s) => [s.secret, dryRun ? `dry-run-${s.secret.toLowerCase()}` : (env[s.envVar] ?? "")]),
  );
}
