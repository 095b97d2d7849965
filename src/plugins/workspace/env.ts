/**
 * Naming convention: modules and identifiers of this plugin are neutral
 * ("workspace"); the provider's own names stay where they are the provider's
 * protocol (`X-Slack-*` headers, `oauth.v2.access`, error codes) and in the
 * bindings deployed workers already read: `SLACK_*` vars and secrets keep
 * their names for compatibility (and the local fake reads the same names).
 */
import { workspacePlugin } from "../../contracts/plugins/workspace.ts";
import type { PluginEnv } from "../kit/pluginEnv.ts";

/** Bindings of the workspace-chat plugin worker (see wrangler.toml beside this file). */
export interface WorkspaceEnv extends PluginEnv {
  /** The provider's base URL: `https://slack.com` deployed, the fake's URL under `platform dev` and tests. */
  SLACK_BASE_URL: string;
  SLACK_CLIENT_ID: string;
  /** Secret. */
  SLACK_CLIENT_SECRET: string;
  /** Secret: the app's signing secret (used as UTF-8 text). */
  SLACK_SIGNING_SECRET: string;
  /** Comma-separated bot scopes requested at install. */
  SLACK_SCOPES?: string;
  /** This worker's public origin, e.g. https://workspace.plugins.example.app (the OAuth redirect URI is `<it>/oauth/callback`). */
  WORKSPACE_PUBLIC_URL?: string;
  /** Optional service binding that carries calls to the provider (local fake); default: global fetch. */
  SLACK?: Fetcher;
}

export const PLUGIN_ID = workspacePlugin.id;
export const RESOURCE_TYPE = workspacePlugin.install.resourceType;
export const DEFAULT_SCOPES = "app_mentions:read,channels:history,chat:write,reactions:read,reactions:write";
/** Largest webhook body we read. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
