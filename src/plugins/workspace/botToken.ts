import { PlatformError } from "../../core/errors.ts";
import {
  markConnectionNeedsReconnect,
  readConnection,
  updateConnectionTokens,
} from "../../workers/db/connectionsStore.ts";
import { releaseRefreshLease, storeTokenAndReleaseLease, takeRefreshLease } from "../../workers/db/refreshLeases.ts";
import { findProjectResource, type ResourceRow } from "../../workers/db/resourceClaims.ts";
import { openToken, sealToken } from "../../workers/db/tokenVault.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type WorkspaceEnv } from "./env.ts";
import { requestAccessToken } from "./workspaceApi.ts";

/**
 * The per-workspace bot token. It lives sealed in the workspace resource's
 * metadata (`botToken`); with Slack token rotation on, the refresh token and
 * the expiry live in the project's connection.
 *
 * Refresh tokens are single use, so refreshing is one-at-a-time per
 * installation: a caller that finds the token (nearly) expired takes a lease
 * in the resource's metadata with an atomic compare-and-swap (one `UPDATE`
 * that succeeds only while no live lease exists and the stored token is the
 * one it read); the winner refreshes and clears the lease in the same write
 * that stores the new token; everyone else waits for that write and uses the
 * new token. A lease whose holder died expires after REFRESH_LEASE_MS.
 * A refresh the provider refuses marks the connection `needs_reconnect` with
 * the provider's error, shown by `platform plugin status` and the console
 * until a reinstall gives the project a new pair.
 */
export interface WorkspaceMetadata {
  /** Sealed bot token (token vault, context `workspace:bot:<teamId>`). */
  botToken: string;
  botUserId?: string;
  appId?: string;
  refreshLease?: { holder: string; until: number };
  [field: string]: unknown;
}

/** Slack's errors that say "try again later", not "this token is dead". */
const SLACK_TRANSIENT = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout"]);

/** Refresh this long before the expiry. */
export const REFRESH_MARGIN_MS = 60_000;
export const REFRESH_LEASE_MS = 15_000;
const WAIT_STEP_MS = 25;
const MAX_WAIT_MS = REFRESH_LEASE_MS + 5_000;

export const botTokenContext = (teamId: string) => `${PLUGIN_ID}:bot:${teamId}`;

export function sealBotToken(env: WorkspaceEnv, teamId: string, token: string): Promise<string> {
  return sealToken(env.TOKEN_ENCRYPTION_KEY, token, botTokenContext(teamId));
}

const NOT_CONNECTED =
  "This project has no Slack workspace connected. Install it with `platform plugin install workspace`.";

export const RECONNECT_HINT = "Reinstall it with `platform plugin install workspace`.";

function revokedError(detail: string): PlatformError {
  return new PlatformError("revoked", `The workspace-chat connection ${detail}. ${RECONNECT_HINT}`);
}

/** The project's workspace resource (its Slack team). */
export async function projectWorkspace(env: WorkspaceEnv, projectId: number): Promise<ResourceRow> {
  const row = await findProjectResource(env.DB, PLUGIN_ID, RESOURCE_TYPE, projectId);
  if (!row) throw new PlatformError("not_found", NOT_CONNECTED);
  return row;
}

function parseMetadata(row: ResourceRow): WorkspaceMetadata {
  const value = JSON.parse(row.metadata) as WorkspaceMetadata;
  if (typeof value?.botToken !== "string")
    throw new PlatformError("internal", "The workspace resource has no stored bot token.");
  return value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface BotTokenOptions {
  now?: () => number;
  /** Observes refreshes (tests). */
  onRefresh?: () => void;
}

/** A usable bot token for the project's workspace, refreshed (once, under the lease) when it is about to expire. */
export async function botTokenFor(
  env: WorkspaceEnv,
  projectId: number,
  options: BotTokenOptions = {},
): Promise<{ token: string; resource: ResourceRow }> {
  const now = options.now ?? Date.now;
  const deadline = now() + MAX_WAIT_MS;
  for (;;) {
    const connection = await readConnection(env.DB, env.TOKEN_ENCRYPTION_KEY, PLUGIN_ID, projectId);
    if (!connection) throw new PlatformError("not_found", NOT_CONNECTED);
    if (connection.revokedAt !== null)
      throw revokedError("was revoked (the app was uninstalled from the workspace or its tokens were revoked)");
    const resource = await projectWorkspace(env, projectId);
    const metadata = parseMetadata(resource);
    const lease = metadata.refreshLease;
    const leaseHeld = lease !== undefined && lease.until > now();
    const fresh = connection.tokenExpiresAt === null || connection.tokenExpiresAt - REFRESH_MARGIN_MS > now();
    if (!leaseHeld && fresh) {
      return {
        token: await openToken(
          env.TOKEN_ENCRYPTION_KEY,
          metadata.botToken,
          botTokenContext(resource.external_resource_id),
        ),
        resource,
      };
    }
    if (leaseHeld) {
      if (now() > deadline)
        throw new PlatformError("upstream_error", "Timed out waiting for the Slack token refresh of this workspace.");
      await sleep(WAIT_STEP_MS);
      continue;
    }
    if (!connection.refreshToken) throw revokedError("has an expired Slack token and no refresh token");

    const holder = crypto.randomUUID();
    if (
      !(await takeRefreshLease(
        env.DB,
        { resourceId: resource.id, tokenField: "botToken", currentToken: metadata.botToken },
        { holder, until: now() + REFRESH_LEASE_MS },
        now(),
      ))
    )
      continue;

    // Under the lease, read the connection again: another refresher may have finished between our
    // first read and the lease (then its refresh token is the live one, and ours is spent).
    const current = await readConnection(env.DB, env.TOKEN_ENCRYPTION_KEY, PLUGIN_ID, projectId);
    const stillExpired = current?.tokenExpiresAt != null && current.tokenExpiresAt - REFRESH_MARGIN_MS <= now();
    if (!current || current.revokedAt !== null || !stillExpired || !current.refreshToken) {
      await releaseRefreshLease(env.DB, resource.id, holder);
      continue;
    }

    options.onRefresh?.();
    const result = await requestAccessToken(env, {
      grant_type: "refresh_token",
      refresh_token: current.refreshToken,
    }).catch(async (error: unknown) => {
      await releaseRefreshLease(env.DB, resource.id, holder);
      throw error;
    });
    const answer = result.answer;
    if (!answer.ok || typeof answer.access_token !== "string") {
      await releaseRefreshLease(env.DB, resource.id, holder);
      if (result.retryAfterSeconds !== undefined) {
        throw new PlatformError(
          "rate_limited",
          `Slack is rate limiting token refreshes. Retry in ${result.retryAfterSeconds} s.`,
          {
            retryAfterSeconds: result.retryAfterSeconds,
          },
        );
      }
      const error = answer.ok ? "no_access_token" : answer.error;
      if (SLACK_TRANSIENT.has(error))
        throw new PlatformError("upstream_error", `Slack could not refresh the token just now: ${error}.`, {
          provider: "slack",
          providerError: error,
        });
      // The refresh token is spent or refused: only a new install gives a working pair.
      await markConnectionNeedsReconnect(env.DB, { pluginId: PLUGIN_ID, projectId }, error);
      throw new PlatformError(
        "revoked",
        `The workspace-chat connection could not refresh its Slack token (Slack said ${error}): it needs to be reconnected. ${RECONNECT_HINT}`,
        { provider: "slack", providerError: error },
      );
    }
    const teamId = resource.external_resource_id;
    const newToken = answer.access_token;
    const expiresIn = typeof answer.expires_in === "number" ? answer.expires_in : null;
    const refreshToken = typeof answer.refresh_token === "string" ? answer.refresh_token : current.refreshToken;
    await updateConnectionTokens(env.DB, env.TOKEN_ENCRYPTION_KEY, {
      pluginId: PLUGIN_ID,
      projectId,
      accessToken: newToken,
      refreshToken,
      tokenExpiresAt: expiresIn === null ? null : now() + expiresIn * 1000,
    });
    await storeTokenAndReleaseLease(env.DB, {
      resourceId: resource.id,
      holder,
      tokenField: "botToken",
      token: await sealBotToken(env, teamId, newToken),
    });
    return { token: newToken, resource };
  }
}
