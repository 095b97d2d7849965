/**
 * The install flow every OAuth plugin shares (docs/plugins-contract.md, "Install"):
 *   GET /install?code=<session code>  refuses at once when the plugin is not
 *       configured (the link keeps working once it is), uses the code once,
 *       signs an OAuth state for the project (10 minutes), binds the state's
 *       nonce to this browser with a cookie, redirects to the provider's
 *       consent page;
 *   GET /oauth/callback?code&state     checks the state and the cookie,
 *       exchanges the code, claims the resource the provider's answer names
 *       (another project's → 409 and nothing stored) and stores the
 *       connection (tokens sealed).
 * Every outcome is a small HTML page a person can read; the provider supplies
 * only what differs (configuration, consent URL, code exchange, wording).
 */
import { cookieValue, serializeCookie } from "../../core/web/cookies.ts";
import { PlatformError, httpStatusFor } from "../../core/errors.ts";
import { andList } from "../../core/wordList.ts";
import { upsertConnection } from "../../workers/db/connectionsStore.ts";
import type { InstallablePlugin } from "../../contracts/pluginRegistry.ts";
import { findProjectById, type ProjectRow } from "../../workers/db/projectsTable.ts";
import { ALREADY_CONNECTED_MESSAGE, claimResource, releaseOtherResources } from "../../workers/db/resourceClaims.ts";
import { installPage } from "./installPage.ts";
import { signOAuthState, verifyOAuthState } from "./oauthState.ts";
import type { PluginEnv } from "./pluginEnv.ts";
import { consumeSessionCode, SESSION_CODE_REFUSALS } from "./sessionCodes.ts";

/** What the provider's token answer names: the resource to claim and the connection's tokens. */
export interface InstallGrant {
  externalResourceId: string;
  displayName: string;
  accessToken: string;
  refreshToken: string | null;
  /** Seconds until the access token expires; null when it does not. */
  expiresIn: number | null;
  /** Stored with the claimed resource (seal secrets with the token vault first). */
  metadata?: Record<string, unknown>;
}

/**
 * The token fields of a provider's OAuth token answer (RFC 6749 §5.1) a
 * connection keeps besides the access token: the refresh token and the
 * access token's lifetime, when the provider rotates tokens; else null.
 */
export function rotationOf(answer: object): Pick<InstallGrant, "refreshToken" | "expiresIn"> {
  const { refresh_token, expires_in } = answer as { refresh_token?: unknown; expires_in?: unknown };
  return {
    refreshToken: typeof refresh_token === "string" ? refresh_token : null,
    expiresIn: typeof expires_in === "number" ? expires_in : null,
  };
}

type SettingName<Env> = keyof Env & string;

export interface OAuthInstallProvider<Env extends PluginEnv> {
  /** The plugin's descriptor: its id, the resource an install claims, and how pages name it ("the chat-server plugin"). */
  plugin: InstallablePlugin;
  /** How pages name the provider ("the chat server", "Slack"). */
  providerName: string;
  /** Page titles: "<resourceLabel> connected", "<resourceLabel> already connected". */
  resourceLabel: string;
  /**
   * The names of the settings (vars, secrets) the install reads: the provider's OAuth client (`clientId`, sent
   * as `client_id`, and `clientSecret`), which it needs with `STATE_SECRET` (it signs the state; without them
   * /install refuses before using the link); and `publicUrl`, this worker's public origin (default: the request's).
   */
  settings: { clientId: SettingName<Env>; clientSecret: SettingName<Env>; publicUrl: SettingName<Env> };
  /** The provider's consent page and its query (the flow adds `client_id`, `redirect_uri` and `state`). */
  authorizeUrl(env: Env): URL;
  authorizeParams(env: Env): Record<string, string>;
  /** Throws `upstream_error` (a 502 page) when the provider refuses the code or its answer names no resource. */
  exchangeCode(env: Env, code: string, redirectUri: string): Promise<InstallGrant>;
  /** A project holds one resource: a reinstall into another gives the old one up. */
  oneResourcePerProject: boolean;
  connectedMessage(grant: InstallGrant, project: ProjectRow): string;
  /** Runs once the connection is stored, before the page says "connected"; its sentence ends the page. */
  afterConnect?(env: Env, project: ProjectRow, grant: InstallGrant): Promise<string>;
}

export interface OAuthInstall<Env> {
  begin(request: Request, env: Env): Promise<Response>;
  complete(request: Request, env: Env): Promise<Response>;
}

const COOKIE_PATH = "/oauth/callback";
const COOKIE_MAX_AGE_SECONDS = 600;

export function oauthInstall<Env extends PluginEnv>(provider: OAuthInstallProvider<Env>): OAuthInstall<Env> {
  const { id: pluginId, title } = provider.plugin;
  const { resourceType } = provider.plugin.install;
  const pluginName = `the ${title} plugin`;
  const cookie = `platform_${pluginId}_install`;
  const again = `Run \`platform plugin install ${pluginId}\` again.`;
  const redirectUri = (env: Env, request: Request) => {
    const publicUrl = env[provider.settings.publicUrl] as string | undefined;
    return `${(publicUrl || new URL(request.url).origin).replace(/\/+$/, "")}${COOKIE_PATH}`;
  };
  const clearCookie = {
    "set-cookie": serializeCookie(cookie, "", { path: COOKIE_PATH, maxAge: 0, sameSite: "Lax", secure: false }),
  };

  /** A failure nobody planned a page for still answers a page (502 for the provider, the error's status otherwise). */
  async function asPage(run: () => Promise<Response>, headers: Record<string, string> = {}): Promise<Response> {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof PlatformError)) console.error(`${pluginId} plugin: install failed`, error);
      const status =
        error instanceof PlatformError ? (error.code === "upstream_error" ? 502 : httpStatusFor(error.code)) : 500;
      const message = error instanceof PlatformError ? error.message : "Internal error.";
      return installPage(status, "Install failed", status === 502 ? `${message} ${again}` : message, headers);
    }
  }

  async function begin(request: Request, env: Env): Promise<Response> {
    const { clientId, clientSecret } = provider.settings;
    const missing = [clientId, clientSecret, "STATE_SECRET" as const].filter((name) => !env[name]);
    if (missing.length) {
      const message = `${pluginName} is not configured on this platform (${andList(missing)} ${missing.length > 1 ? "are" : "is"} required).`;
      return installPage(503, "Install unavailable", message[0]!.toUpperCase() + message.slice(1));
    }
    const consumed = await consumeSessionCode(env, new URL(request.url).searchParams.get("code"), pluginId);
    if (!consumed.ok) {
      const status = consumed.reason === "unknown" ? 404 : consumed.reason === "wrong_plugin" ? 400 : 410;
      return installPage(status, "Install link refused", SESSION_CODE_REFUSALS[consumed.reason]);
    }
    const { state, claims } = await signOAuthState(env.STATE_SECRET, {
      projectId: consumed.projectId,
      pluginId,
    });
    const location = provider.authorizeUrl(env);
    const params = {
      client_id: env[provider.settings.clientId] as string,
      ...provider.authorizeParams(env),
      redirect_uri: redirectUri(env, request),
      state,
    };
    for (const [name, value] of Object.entries(params)) location.searchParams.set(name, value);
    const secure = new URL(request.url).protocol === "https:";
    return new Response(null, {
      status: 302,
      headers: {
        location: location.toString(),
        "set-cookie": serializeCookie(cookie, claims.nonce, {
          path: COOKIE_PATH,
          maxAge: COOKIE_MAX_AGE_SECONDS,
          sameSite: "Lax",
          secure,
        }),
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
      },
    });
  }

  async function complete(request: Request, env: Env): Promise<Response> {
    const query = new URL(request.url).searchParams;
    const checked = await verifyOAuthState(env.STATE_SECRET, query.get("state"), pluginId);
    if (!checked.ok) {
      const why =
        checked.reason === "expired"
          ? "The install took longer than 10 minutes."
          : "The install state is missing or not valid.";
      return installPage(400, "Install refused", `${why} ${again}`);
    }
    if (cookieValue(request, cookie) !== checked.claims.nonce) {
      return installPage(
        400,
        "Install refused",
        `This install was started in another browser (or its cookie is gone). ${again}`,
      );
    }
    const error = query.get("error");
    if (error) {
      const message =
        error === "access_denied"
          ? `You cancelled the authorization at ${provider.providerName}; nothing was installed.`
          : `The authorization ended at ${provider.providerName} with ${error}; nothing was installed.`;
      return installPage(400, "Install cancelled", message, clearCookie);
    }
    const code = query.get("code");
    if (!code)
      return installPage(
        400,
        "Install refused",
        `The callback from ${provider.providerName} carried no authorization code.`,
        clearCookie,
      );
    const project = await findProjectById(env.DB, checked.claims.projectId);
    if (!project)
      return installPage(404, "Install failed", "The project this install was for no longer exists.", clearCookie);

    const grant = await provider.exchangeCode(env, code, redirectUri(env, request));
    try {
      await claimResource(env.DB, {
        pluginId,
        resourceType,
        projectId: project.id,
        externalResourceId: grant.externalResourceId,
        displayName: grant.displayName,
        metadata: grant.metadata,
      });
    } catch (claimError) {
      if (claimError instanceof PlatformError && claimError.code === "conflict") {
        const message = `${grant.displayName} (${grant.externalResourceId}): ${ALREADY_CONNECTED_MESSAGE} To move it here, run \`platform plugin uninstall ${pluginId}\` in the project that holds it, then install again.`;
        return installPage(409, `${provider.resourceLabel} already connected`, message, clearCookie);
      }
      throw claimError;
    }
    if (provider.oneResourcePerProject) {
      await releaseOtherResources(env.DB, { pluginId, resourceType, projectId: project.id }, grant.externalResourceId);
    }
    await upsertConnection(env.DB, env.TOKEN_ENCRYPTION_KEY, {
      pluginId,
      projectId: project.id,
      externalUserId: grant.externalResourceId,
      accessToken: grant.accessToken,
      refreshToken: grant.refreshToken,
      tokenExpiresAt: grant.expiresIn === null ? null : Date.now() + grant.expiresIn * 1000,
    });
    const more = provider.afterConnect ? ` ${await provider.afterConnect(env, project, grant)}` : "";
    return installPage(
      200,
      `${provider.resourceLabel} connected`,
      provider.connectedMessage(grant, project) + more,
      clearCookie,
    );
  }

  return {
    begin: (request, env) => asPage(() => begin(request, env)),
    complete: (request, env) => asPage(() => complete(request, env), clearCookie),
  };
}
